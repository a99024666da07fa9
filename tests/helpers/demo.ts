/**
 * The sample project (demo/) in a test: a fresh copy as a chapter's workspace, and its own test
 * command, `npm test` (node --test with its reporter.mjs), run on it as a reader would run it.
 *
 *   const run = await runChapter('s02', { offline: true, setup: copyDemo, env: DEMO_ENV, args: […] });
 *   nodeTest(run.workspace) → { pass: 52, fail: 0, output }
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { renameSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { chapterCode, chapterFolder, REPO } from '../../scripts/chapters.ts';
import { testCommand } from '../../shared/offline/looking.ts';
import { BUNDLE_DIR, bundleChapter } from './bundle.ts';
import { NODE_FLAGS } from './run-chapter.ts';

export const DEMO = join(REPO, 'demo');

/** As fast as the offline model can go: no pause between streamed events. */
export const DEMO_ENV = { OFFLINE_PACE_MS: '0' };

export const FIX = 'fix the failing test';

/** Where `npm run demo <chapter>` keeps its copy of demo/, in a HOME: its only home. */
export const demoCopy = (home: string, chapter: string) =>
  join(home, '.learn-agent-harness', 'demo', `lah-demo-${chapter}`);

/**
 * The home the READMEs' demo figures are for: /home/reader, 12 characters. The copy's path
 * (<home>/.learn-agent-harness/demo/lah-demo-sNN) is in the system prompt, and s05 sends the
 * transcript's path in its summary, so each character of the home moves the token figures.
 */
export const READER_HOME = '/home/reader';

/**
 * A home whose path is as long as READER_HOME, and where npm run demo would put the chapter's
 * copy in it: a run there prints the figures the READMEs give. `/tmp/h` and mkdtemp's six
 * characters make 12. The caller removes the home.
 */
export function readerFolders(chapter: string): { home: string; workspace: string } {
  const home = mkdtempSync('/tmp/h');
  if (home.length !== READER_HOME.length) {
    throw new Error(`${home}: a home of ${READER_HOME.length} characters was meant`);
  }
  const workspace = demoCopy(home, chapter);
  mkdirSync(workspace, { recursive: true });
  return { home, workspace };
}

export interface DemoRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

// tsx keeps its compile cache in TMPDIR: one that lasts between runs starts the launcher sooner
// (the folder runChapter gives `viaTsx` runs). The demo's copy never goes there: see demoCopy.
export const TSX_TMPDIR = join(dirname(BUNDLE_DIR), 'lah-tsx');

/**
 * `npm run demo <args…>`: scripts/demo.ts from the repo, with this environment and nothing else
 * (PATH and NO_COLOR are added). Not spawnSync: the tests beside it go on meanwhile. A run still
 * going after 60 s is killed (status null).
 *
 * `viaTsx` runs it under the tsx CLI, exactly as npm run demo does. Otherwise it runs as the
 * chapters' tests run a chapter: scripts/demo.ts from a bundle under node, and the chapter it
 * starts from that chapter's bundle (see demoBundle), or from a stand-in with `stub`; tsx's
 * loader would cost more than most of these runs (about 1 CPU-s a start that loads a chapter,
 * against 0.12 from a bundle, and 0.04 with the stand-in).
 */
export async function runDemo(
  args: string[],
  env: Record<string, string>,
  opts: { viaTsx?: boolean; stub?: boolean } = {},
): Promise<DemoRun> {
  mkdirSync(TSX_TMPDIR, { recursive: true });
  const all = { PATH: process.env.PATH!, NO_COLOR: '1', TMPDIR: TSX_TMPDIR, ...env };
  let command = [join(REPO, 'node_modules/.bin/tsx'), 'scripts/demo.ts'];
  if (!opts.viaTsx) {
    const folder = chapterFolder(args[0] ?? '');
    const code = folder && chapterCode(folder);
    const chapter = code && (opts.stub ? stubChapter() : await bundleChapter(code));
    const bundles = code ? { [code]: chapter } : {};
    Object.assign(all, { LAH_DEMO_BUNDLES: JSON.stringify(bundles) });
    command = [process.execPath, ...NODE_FLAGS, await demoBundle()];
  }
  const options = { cwd: REPO, env: all, timeout: 60_000, killSignal: 'SIGKILL' as const };
  return new Promise((done) => {
    execFile(command[0], [...command.slice(1), ...args], options, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      done({ status, stdout, stderr });
    });
  });
}

/**
 * `stub`: a stand-in for the chapter, for tests of the launcher alone (the copy, its flags): it
 * prints where it runs and what it was given, `{"cwd":…,"args":[…]}`, and exits 0. Loading a
 * chapter's bundle would cost about three times the launcher's own run.
 */
function stubChapter(): string {
  const code = 'const said = { cwd: process.cwd(), args: process.argv.slice(2) };\n' +
    'console.log(JSON.stringify(said));\n';
  return cached('demo-stub', code);
}

/** `code` as a file in the bundle cache, named by its content, written whole once. */
function cached(name: string, code: string | Uint8Array): string {
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 24);
  const file = join(BUNDLE_DIR, `${name}-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(BUNDLE_DIR, { recursive: true });
    writeFileSync(`${file}.${process.pid}.tmp`, code);
    renameSync(`${file}.${process.pid}.tmp`, file);
  }
  return file;
}

/**
 * scripts/demo.ts in one file for node, built once per test worker. Two changes, both in what it
 * imports from scripts/chapters.ts: REPO is the repo's (import.meta.url would name the bundle),
 * and chapterCode gives the chapter's bundle that LAH_DEMO_BUNDLES maps its code.ts to (node
 * cannot import a .ts file; demo.ts imports what chapterCode gives, and the chapter's main() runs
 * when process.argv[1] is that same file).
 */
function demoBundle(): Promise<string> {
  demoBundleBuild ??= (async () => {
    const chapters = join(REPO, 'scripts', 'chapters.ts');
    const redirect = `
export function chapterCode(chapter: string): string {
  const code = sourceOf(chapter);
  return JSON.parse(process.env.LAH_DEMO_BUNDLES ?? '{}')[code] ?? code;
}`;
    const result = await build({
      entryPoints: [join(REPO, 'scripts', 'demo.ts')],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      write: false,
      logLevel: 'silent',
      define: { 'import.meta.url': JSON.stringify(pathToFileURL(chapters).href) },
      plugins: [{
        name: 'chapter-bundles',
        setup(b) {
          b.onLoad({ filter: /[\\/]scripts[\\/]chapters\.ts$/ }, (file) => {
            const text = readFileSync(file.path, 'utf8');
            const from = 'export function chapterCode(';
            if (!text.includes(from)) throw new Error(`scripts/chapters.ts has no "${from}"`);
            return { contents: text.replace(from, 'function sourceOf(') + redirect, loader: 'ts' };
          });
        },
      }],
    });
    return cached('demo', result.outputFiles[0].contents);
  })();
  return demoBundleBuild;
}

let demoBundleBuild: Promise<string> | undefined;

/** Copy demo/ into a workspace (runChapter's `setup`). */
export function copyDemo(workspace: string): void {
  cpSync(DEMO, workspace, { recursive: true });
}

export interface NodeTestResult {
  pass: number;
  fail: number;
  status: number | null;
  output: string;
}

/**
 * The sample project's tests, run with the node running this test: how many pass and fail.
 *
 * Each run of `node --test` costs three node processes (the runner, one per test file), and most
 * workspaces here hold the same code: demo/ as shipped, or fixed, by the same one-line change.
 * The tests are deterministic (no clock, no randomness, no network, no file read), so the same
 * files give the same result: a result is kept, and given again, for the exact contents of the
 * files node --test reads (see testInputs). So the tests run once per distinct project, not once
 * per check.
 */
export function nodeTest(workspace: string): NodeTestResult {
  const key = testInputs(workspace);
  const known = nodeTestResults.get(key);
  if (known) return known;
  // The project's own command (package.json's scripts.test, as the offline model reads it).
  const args = testCommand(workspace).split(' ').slice(1);
  const run = spawnSync(process.execPath, args, { cwd: workspace, encoding: 'utf8' });
  const output = `${run.stdout}${run.stderr}`;
  const count = (what: string) =>
    Number(output.match(new RegExp(`^[#ℹ] ${what} (\\d+)$`, 'm'))?.[1]);
  const result = { pass: count('pass'), fail: count('fail'), status: run.status, output };
  nodeTestResults.set(key, result);
  return result;
}

const nodeTestResults = new Map<string, NodeTestResult>();

/**
 * A sha256 of what `node --test` reads in a workspace: the path and content of every file in it,
 * at any depth (which files it runs depends on their names: test/*.js, *.test.js, …), except
 * Markdown and JSON Lines files. None of those is run or read by the tests: node --test runs
 * only .js, .cjs and .mjs files, and the sample project's code and tests import nothing but
 * node:assert, node:test and each other, and open no file. Yet they are what differs between runs
 * that leave the same code: AGENTS.md (a test takes its rule out), CHANGELOG.md (s06 adds a line),
 * README.md (varyDemo), trace.jsonl (--trace). Should demo/'s tests ever read one, count it here.
 */
function testInputs(workspace: string): string {
  const hash = createHash('sha256');
  const add = (folder: string) => {
    const entries = readdirSync(join(workspace, folder), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) add(path);
      else if (!/\.(md|jsonl)$/.test(entry.name)) {
        const content = readFileSync(join(workspace, path));
        hash.update(`${path}\0${content.length}\0`).update(content);
      }
    }
  };
  add('');
  return hash.digest('hex');
}

/** Change a file of the workspace: `edit(ws, 'src/a.js', (text) => …)`. */
export function edit(workspace: string, file: string, change: (text: string) => string): void {
  const path = join(workspace, file);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
}

/**
 * The sample project laid out differently: lines added above the bug and above the failing test,
 * and the boundary moved from 10 to 11 (in the code, the README and the test), so that the failing
 * test, the line to change and the number are all elsewhere. A model that plays a script (line 19,
 * the number 10) fails here; one that reads what the tools show does not.
 */
export function varyDemo(workspace: string): void {
  copyDemo(workspace);
  const helper = [
    '/** The lines of an order, most expensive first (the invoice prints them so). */',
    'export function byPrice(lines) {',
    '  return [...lines].sort((a, b) => b.totalCents - a.totalCents);',
    '}',
    '',
  ].join('\n');
  edit(workspace, 'src/discounts.js', (text) =>
    text
      .replace('BULK_MIN_QUANTITY = 10;', 'BULK_MIN_QUANTITY = 11;')
      .replace('/** Whether a line of', `${helper}\n/** Whether a line of`),
  );
  edit(workspace, 'README.md', (text) => text.replace('from 10 items of one', 'from 11 items of one'));
  const single = "test('charges a single item its unit price', () => {\n  assert.equal(lineTotal(720, 1), 720);\n});\n\n";
  edit(workspace, 'test/discounts.test.js', (text) =>
    text
      .replace('from 10 items of one product', 'from 11 items of one product')
      .replace(
        "test('gives the bulk discount from 10 items', () => {\n  // 10 items at €10.00: €100.00 less 10%.\n  assert.equal(lineTotal(1000, 10), 9000);",
        `${single}test('gives the bulk discount from 11 items', () => {\n  assert.equal(lineTotal(1000, 11), 9900);`,
      ),
  );
}
