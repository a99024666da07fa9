/**
 * Bundle a chapter's code.ts (with what it imports from ../shared) into one ES module that plain
 * `node` runs, cached by the content of every file that went into it.
 *
 * Why: most of a chapter run's life used to pass before its first HTTP request, in tsx's module
 * hooks loading the SDK's ~250 modules. Compiled once, a run needs about half the CPU time, and the
 * suite is CPU-bound (`npm run bench:suite` measures it). npm packages stay external, so the SDK,
 * readline-sync and dotenv are the very files tsx would load. One test per chapter still runs
 * through the tsx CLI (`viaTsx`), the way a reader does.
 *
 *   const file = await bundleChapter('/repo/s01_agent_loop/code.ts');   // → …/lah-bundles/<hash>.mjs
 *
 * A file that does not compile throws BundleError, with esbuild's message naming file and line.
 * A stack trace from a bundle names bundle lines; `originalPositions()` turns them back into
 * code.ts lines (node's --enable-source-maps would too, but it costs every run ~10% more CPU, as it
 * then also reads the SDK's 360 source maps).
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, formatMessages, version as esbuildVersion, type Message } from 'esbuild';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// Inside the repo, so that node resolves the external packages from the repo's node_modules. Its
// real path: node gives a module its real path as import.meta.url, and the chapters run main() only
// when that equals process.argv[1] (a node_modules linked from elsewhere would fail that test).
const NODE_MODULES = join(REPO, 'node_modules');
const REAL_NODE_MODULES = existsSync(NODE_MODULES) ? realpathSync(NODE_MODULES) : NODE_MODULES;
export const BUNDLE_DIR = join(REAL_NODE_MODULES, '.cache/lah-bundles');
// Bump when the build options below change: old bundles must not be reused.
const RECIPE = `lah-bundle-2 esbuild ${esbuildVersion}`;
// Bundles not used for this long are removed when a new one is written (one per edit of a chapter).
const KEEP_UNUSED_MS = 3 * 24 * 3600_000;

/** The reader's file does not compile; `message` is esbuild's, with file, line and the code. */
export class BundleError extends Error {}

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/**
 * Hash of a set of input files (paths relative to REPO): their names and contents, read from disk
 * unless `seen` has them. Undefined if one is gone. The entry's own name is left out, so an exercise
 * solution written to a new temporary name each time (.solution-<id>-<pid>.ts) reuses the bundle of
 * the same code (its source map then names the file that built it first: harmless).
 */
function inputsKey(entry: string, inputs: string[], seen = new Map<string, string>()): string | undefined {
  const hash = createHash('sha256').update(RECIPE);
  for (const rel of [...inputs].sort()) {
    const file = join(REPO, rel);
    const content = seen.get(file) ?? (existsSync(file) ? readFileSync(file) : undefined);
    if (content === undefined) return undefined;
    hash.update(`\0${file === entry ? `${dirname(rel)}/<entry>` : rel}\0`).update(content);
  }
  return hash.digest('hex').slice(0, 24);
}

/** Write `data` to `path` so that another process never sees half a file: two test workers may race. */
function writeAtomic(path: string, data: string | Uint8Array) {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path);
}

/** The path of a bundle of `entry` (an absolute path to a .ts file inside the repo), building it if needed. */
export async function bundleChapter(entry: string): Promise<string> {
  mkdirSync(BUNDLE_DIR, { recursive: true });
  // Which files went into the last bundle of this entry's content? (Only esbuild knows the imports.)
  const source = `${relative(REPO, dirname(entry))}\0${readFileSync(entry, 'utf8')}`;
  const manifest = join(BUNDLE_DIR, `${sha(source)}.inputs.json`);
  const cached = cachedBundle(entry, manifest);
  if (cached) return cached;
  // Concurrent tests of one file all ask at once on a cold cache: build once.
  if (!building.has(manifest)) {
    building.set(manifest, buildBundle(entry, manifest).finally(() => building.delete(manifest)));
  }
  return building.get(manifest)!;
}

const building = new Map<string, Promise<string>>();

async function buildBundle(entry: string, manifest: string): Promise<string> {
  const seen = new Map<string, string>();
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: REPO,
    outdir: BUNDLE_DIR, // not written (write: false), but the source map names sources relative to it
    bundle: true,
    format: 'esm', // the chapters use top-level await
    platform: 'node',
    target: 'node20',
    packages: 'external', // npm packages load from node_modules, exactly as under tsx
    sourcemap: 'external', // <hash>.mjs.map, for originalPositions(); node never loads it
    write: false,
    metafile: true,
    logLevel: 'silent',
    // Keep the exact text esbuild compiled, so the cache key matches the bundle even if a file is
    // saved again while the build runs.
    plugins: [
      {
        name: 'remember-sources',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            const contents = readFileSync(args.path, 'utf8');
            seen.set(args.path, contents);
            return { contents, loader: 'ts' };
          });
        },
      },
    ],
  }).catch(async (err: { errors?: Message[] }) => {
    if (!err.errors?.length) throw err;
    const text = await formatMessages(err.errors, { kind: 'error', color: false });
    throw new BundleError(`${relative(REPO, entry)} does not compile:\n\n${text.join('\n').trimEnd()}`);
  });
  const inputs = Object.keys(result.metafile.inputs); // relative to absWorkingDir, i.e. REPO
  const key = inputsKey(entry, inputs, seen);
  if (!key) throw new Error(`a file of ${relative(REPO, entry)} was removed while it was being bundled; run again`);
  const bundle = join(BUNDLE_DIR, `${key}.mjs`);
  if (!existsSync(bundle)) {
    const output = (suffix: string) => result.outputFiles.find((f) => f.path.endsWith(suffix))!.contents;
    writeAtomic(`${bundle}.map`, output('.js.map')); // first: whoever sees the bundle may need its map
    writeAtomic(bundle, output('.js'));
    prune();
  }
  writeAtomic(manifest, JSON.stringify(inputs));
  return bundle;
}

/** The bundle the manifest points to, if its inputs are unchanged and it is still there. */
function cachedBundle(entry: string, manifest: string): string | undefined {
  try {
    const key = inputsKey(entry, JSON.parse(readFileSync(manifest, 'utf8')));
    if (!key) return undefined;
    const bundle = join(BUNDLE_DIR, `${key}.mjs`);
    const now = new Date();
    utimesSync(bundle, now, now); // throws if it is gone; else marks it used, so prune() keeps it
    utimesSync(`${bundle}.map`, now, now);
    return bundle;
  } catch {
    return undefined; // no manifest yet, or no bundle: build one
  }
}

/** Remove bundles and manifests unused for a few days, so editing a chapter often does not pile them up. */
function prune() {
  const cutoff = Date.now() - KEEP_UNUSED_MS;
  for (const name of readdirSync(BUNDLE_DIR)) {
    const file = join(BUNDLE_DIR, name);
    try {
      if (statSync(file).mtimeMs < cutoff) rmSync(file, { force: true });
    } catch {
      // Another worker removed it first.
    }
  }
}

const maps = new Map<string, SourceMap | undefined>();
/** `lah-bundles/<hash>.mjs:LINE:COL` as node prints it in a stack trace (the column is absent on some lines). */
const BUNDLE_POSITION = /(?:file:\/\/)?[^\s()'"]*\/lah-bundles\/([0-9a-f]{24})\.mjs:(\d+)(?::(\d+))?/g;

/**
 * Text with every bundle position in it turned into the position in the source it came from:
 * `at main (file:///…/lah-bundles/1f….mjs:321:9)` → `at main (s01_agent_loop/code.ts:140:5)`.
 */
export function originalPositions(text: string): string {
  return text.replace(BUNDLE_POSITION, (found, key: string, line: string, column?: string) => {
    if (!maps.has(key)) {
      const file = join(BUNDLE_DIR, `${key}.mjs.map`);
      maps.set(key, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : undefined);
    }
    const entry = maps.get(key)?.findEntry(Number(line) - 1, Number(column ?? 1) - 1);
    if (!entry || !('originalSource' in entry)) return found;
    // Sources are named relative to the map's folder; name them relative to the repo, as esbuild's errors do.
    const source = relative(REPO, resolve(BUNDLE_DIR, entry.originalSource));
    return `${source}:${entry.originalLine + 1}${column === undefined ? '' : `:${entry.originalColumn + 1}`}`;
  });
}
