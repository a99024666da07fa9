/**
 * Bundle a chapter's code.ts (with what it imports from ../shared, and the npm packages it uses) into
 * one ES module that plain `node` runs, cached by what went into it.
 *
 * Why: most of a chapter run's life used to pass before its first HTTP request, loading the SDK's
 * ~250 modules (through tsx's hooks first, then through node's resolver from a bundle of the repo's
 * own code: 0.43 CPU-s a run). All in one file, a run takes 0.25 CPU-s, and the suite is CPU-bound
 * (`npm run bench:suite` measures it). It is the very code node would load: the same files of each
 * package (esbuild picks them by the `exports` "import" conditions, as node does), with the same
 * process.env and global fetch. One test per chapter still runs through the tsx CLI (`viaTsx`), the
 * way a reader does.
 *
 *   const file = await bundleChapter('/repo/s01_agent_loop/code.ts');   // → …/lah-bundles/<hash>.mjs
 *
 * A file that does not compile throws BundleError, with esbuild's message naming file and line.
 * A stack trace from a bundle names bundle lines; `originalPositions()` turns them back into
 * code.ts lines, and a package's lines into the lines of the package file node would have named.
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
// Inside the repo, so that node resolves the external package from the repo's node_modules. Its
// real path: node gives a module its real path as import.meta.url, and the chapters run main() only
// when that equals process.argv[1] (a node_modules linked from elsewhere would fail that test).
const NODE_MODULES = join(REPO, 'node_modules');
const REAL_NODE_MODULES = existsSync(NODE_MODULES) ? realpathSync(NODE_MODULES) : NODE_MODULES;
export const BUNDLE_DIR = join(REAL_NODE_MODULES, '.cache/lah-bundles');
// Bump when the build options below change: old bundles must not be reused.
const RECIPE = `lah-bundle-5 esbuild ${esbuildVersion}`;
// Every package is bundled: none runs files it finds next to its own, loads a native addon or
// requires a computed name (checked). fdir's optional `createRequire(import.meta.url)('picomatch')`
// finds it from the bundle's folder, inside node_modules, and loads a second copy there: ~4 ms a
// run, for a feature tinyglobby does not use.
// The bundled packages' CommonJS files call `require('fs')` and the like, which an ES module has no
// `require` for ("Dynamic require of "fs" is not supported"): give the bundle one.
const BANNER = `import { createRequire as __lahCreateRequire } from 'node:module';
const require = __lahCreateRequire(import.meta.url);`;
// A bundle input from an npm package (its path relative to the repo). Such inputs are keyed by the
// lockfiles, not read: a bundle has hundreds of them, and a lookup would read them all on every run.
const PACKAGE_INPUT = /(?:^|[\\/])node_modules[\\/]/;
const LOCKFILE = join(REPO, 'package-lock.json');
// What npm last installed into node_modules: npm rewrites it whenever it changes node_modules, even
// when package-lock.json stays as it was (`npm install --no-save`, say).
const INSTALLED_LOCKFILE = join(REAL_NODE_MODULES, '.package-lock.json');
// Bundles not used for this long are removed when a new one is written (one per edit of a chapter).
const KEEP_UNUSED_MS = 3 * 24 * 3600_000;

/** The reader's code does not compile; `message` is esbuild's, with file, line and the code. */
export class BundleError extends Error {
  /** The files esbuild refused, relative to the repo: ['s03_subagent/tools.ts']. */
  constructor(message: string, readonly files: string[]) {
    super(message);
  }
}

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/**
 * Hash of a set of input files (paths relative to REPO): their names and contents, read from disk
 * unless `seen` has them. Undefined if one is gone. A file of an npm package counts by its name only,
 * and the lockfiles stand for all their contents (without a package-lock.json, they are read like the
 * others). So a file edited inside node_modules by hand is not noticed: remove node_modules/.cache then.
 * The entry's own name is left out, so the same code under another name reuses its bundle (its
 * source map then names the file that built it first: harmless). An exercise solution is a folder
 * with a fixed name (.solution-<chapter>-<id>/, see exercises.ts), so its bundle is reused too.
 */
function inputsKey(entry: string, inputs: string[], seen = new Map<string, string>()): string | undefined {
  const hash = createHash('sha256').update(RECIPE);
  const locked = existsSync(LOCKFILE);
  if (locked) {
    hash.update('\0package-lock.json\0').update(readFileSync(LOCKFILE));
    if (existsSync(INSTALLED_LOCKFILE)) hash.update('\0installed\0').update(readFileSync(INSTALLED_LOCKFILE));
  }
  for (const rel of [...inputs].sort()) {
    const file = join(REPO, rel);
    hash.update(`\0${file === entry ? `${dirname(rel)}/<entry>` : rel}\0`);
    if (locked && PACKAGE_INPUT.test(rel)) continue;
    const content = seen.get(file) ?? (existsSync(file) ? readFileSync(file) : undefined);
    if (content === undefined) return undefined;
    hash.update(content);
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
    banner: { js: BANNER },
    sourcemap: 'external', // <hash>.mjs.map, for originalPositions(); node never loads it
    sourcesContent: false, // positions are all it is for: a seventh of the size
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [
      {
        name: 'load-sources',
        setup(b) {
          // A package's JavaScript, without its `//# sourceMappingURL=`: esbuild would otherwise read
          // the package's own source maps (the SDK ships 360) and map the package's lines to its
          // src/*.ts, where node (which does not read them either) names its .mjs files.
          b.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, (args) => {
            const contents = readFileSync(args.path, 'utf8').replace(/\n\/\/[#@] sourceMappingURL=[^\n]*\s*$/, '\n');
            return { contents, loader: 'js' };
          });
          // Keep the exact text esbuild compiled, so the cache key matches the bundle even if a file is
          // saved again while the build runs.
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
    // Name the file the error is in (tools.ts, say), not the entry that imports it.
    const where = err.errors.map((e) => e.location?.file ?? relative(REPO, entry));
    const files = [...new Set(where)];
    const does = `${files.join(', ')} ${files.length > 1 ? 'do' : 'does'} not compile`;
    throw new BundleError(`${does}:\n\n${text.join('\n').trimEnd()}`, files);
  });
  const inputs = Object.keys(result.metafile.inputs); // relative to absWorkingDir, i.e. REPO
  const key = inputsKey(entry, inputs, seen);
  if (!key) throw new Error(`a file of ${relative(REPO, entry)} was removed while it was being bundled; run again`);
  const bundle = join(BUNDLE_DIR, `${key}.mjs`);
  if (!existsSync(bundle)) {
    const output = (suffix: string) => result.outputFiles.find((f) => f.path.endsWith(suffix))!.contents;
    // First: whoever sees the bundle may need its map.
    writeAtomic(`${bundle}.map`, repoRelative(output('.js.map')));
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

/**
 * A source map whose sources are named relative to the repo (`s01_agent_loop/code.ts`), not to
 * the bundle's folder as esbuild names them. A bundle is keyed by the repo-relative names of its
 * inputs, so another copy of the repo that shares node_modules (npm run test:solved's, a worktree)
 * reuses it: its map must not point into the copy that built it.
 */
function repoRelative(map: Uint8Array): string {
  const json = JSON.parse(Buffer.from(map).toString('utf8'));
  json.sources = json.sources.map((s: string) => relative(REPO, resolve(BUNDLE_DIR, s)));
  return JSON.stringify(json);
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
    // Sources are named relative to the repo (repoRelative), as esbuild's errors name them.
    const source = entry.originalSource;
    return `${source}:${entry.originalLine + 1}${column === undefined ? '' : `:${entry.originalColumn + 1}`}`;
  });
}
