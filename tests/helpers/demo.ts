/**
 * The sample project (demo/) in a test: a fresh copy as a chapter's workspace, and its own test
 * command, `node --test`, run on it as a reader would run it.
 *
 *   const run = await runChapter('s02', { offline: true, setup: copyDemo, env: DEMO_ENV, args: […] });
 *   nodeTest(run.workspace) → { pass: 52, fail: 0, output }
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO } from '../../scripts/chapters.ts';
import { BUNDLE_DIR } from './bundle.ts';

export const DEMO = join(REPO, 'demo');

/** As fast as the offline model can go: no pause between streamed events. */
export const DEMO_ENV = { OFFLINE_PACE_MS: '0' };

export const FIX = 'fix the failing test';

/** Where `npm run demo <chapter>` keeps its copy of demo/, in a HOME: its only home. */
export const demoCopy = (home: string, chapter: string) =>
  join(home, '.learn-agent-harness', 'demo', `lah-demo-${chapter}`);

export interface DemoRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

// tsx keeps its compile cache in TMPDIR: one that lasts between runs starts the launcher sooner
// (the folder runChapter gives `viaTsx` runs). The demo's copy never goes there: see demoCopy.
export const TSX_TMPDIR = join(dirname(BUNDLE_DIR), 'lah-tsx');

/**
 * `npm run demo <args…>` as a reader runs it: scripts/demo.ts under the tsx CLI, from the repo,
 * with this environment and nothing else (PATH and NO_COLOR are added). Not spawnSync: the tests
 * beside it go on meanwhile. A run still going after 60 s is killed (status null).
 */
export function runDemo(args: string[], env: Record<string, string>): Promise<DemoRun> {
  mkdirSync(TSX_TMPDIR, { recursive: true });
  const tsx = join(REPO, 'node_modules/.bin/tsx');
  const all = { PATH: process.env.PATH!, NO_COLOR: '1', TMPDIR: TSX_TMPDIR, ...env };
  const options = { cwd: REPO, env: all, timeout: 60_000, killSignal: 'SIGKILL' as const };
  return new Promise((done) => {
    execFile(tsx, ['scripts/demo.ts', ...args], options, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      done({ status, stdout, stderr });
    });
  });
}

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
  const run = spawnSync(process.execPath, ['--test'], { cwd: workspace, encoding: 'utf8' });
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
