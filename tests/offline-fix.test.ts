/**
 * The offline demo model's "fix the failing test" under hostile or unusual tool output
 * (shared/offline/: outputs.ts, fix-facts.ts, fix-the-test.ts), called directly with a request
 * body, as a chapter sends it. Issue 32: parsers that backtrack, node's summary imitated by a
 * test, a suite that hangs, a file it cannot read, an edit the file system refuses, whole-file
 * failures.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { expect, it } from 'vitest';
import { offlineRespond } from '../shared/offline-model.ts';
import { readTestRun } from '../shared/offline/outputs.ts';
import { TAP_FAILURE } from './helpers/node-test-output.ts';

const TOOLS = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'].map((name) => ({ name }));
const SYSTEM = 'You are a coding agent working in /work/shop. Use the tools.';
const ask = (messages: unknown[], tools = TOOLS) =>
  offlineRespond({ system: SYSTEM, tools, messages }) as any;
const calls = (reply: any) => reply.content.filter((b: any) => b.type === 'tool_use');
const said = (reply: any, type = 'text') =>
  reply.content.filter((b: any) => b.type === type).map((b: any) => b[type === 'text' ? 'text' : 'thinking']).join('\n');
const use = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input });
const result = (id: string, content: string, isError = false) =>
  ({ type: 'tool_result', tool_use_id: id, content, is_error: isError });
const TEST_CALL = { command: 'node --test --test-reporter=tap' };
/** The task after its first test run, which printed `output`. */
const afterRun = (output: string) => [
  { role: 'user', content: 'fix the failing test' },
  { role: 'assistant', content: [use('t1', 'bash', TEST_CALL)] },
  { role: 'user', content: [result('t1', output)] },
];

const SUMMARY = (total: number, pass: number, fail: number) =>
  `1..${total}\n# tests ${total}\n# suites 0\n# pass ${pass}\n# fail ${fail}\n# cancelled 0\n` +
  '# skipped 0\n# todo 0\n# duration_ms 150.5';

// What node 20 printed for a test folder named "a<newline>b": its location as a YAML block.
const BLOCK_LOCATION = `TAP version 13
# Subtest: fails
not ok 1 - fails
  ---
  duration_ms: 0.952002
  location: |-
    /work/shop/a
    b/y.test.js:4:1
  failureType: 'testCodeFailure'
  error: '1 == 2'
  code: 'ERR_ASSERTION'
  name: 'AssertionError'
  expected: 2
  actual: 1
  operator: '=='
  stack: |-
    TestContext.<anonymous> (file:///work/shop/a%0Ab/y.test.js:4:30)
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    Test.postRun (node:internal/test_runner/test:889:19)
    Test.run (node:internal/test_runner/test:835:12)
    async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
  ...
${SUMMARY(1, 0, 1)}
[exit code 1]`;

// ── Items 2 and 4: every reading of tool output is linear in what it reads ──────────────────────

it('never hangs on text built to make a pattern backtrack: each case runs in a child process', async () => {
  // A `not ok` then 40 lines indented by 8 spaces and no `location:` took the old TAP pattern
  // 8^40 steps (14 lines: 2.4 s); node's `location: |-` block, about as many. A note naming a
  // test “” at a:1: expected a, got a” × 4,000 (112 KB) took the note reader over a minute
  // (1,000: 3.4 s); a line of 1 MB, the source and changelog readers about half an hour
  // (20 KB: 0.67 s). All run in one child process, killed after 30 s: a pattern that
  // backtracks shows as a kill, and the cases it had finished say which one it was.
  const indented = `not ok 1 - x\n${'        y\n'.repeat(40)}`;
  const outputs = [
    `${indented}[exit code 1]`,
    `${indented}${SUMMARY(1, 0, 1)}\n[exit code 1]`,
    BLOCK_LOCATION,
    `${'        ✖ a (1ms)\n'.repeat(40)}${SUMMARY(1, 0, 1)}`,
  ];
  const runs = outputs.map((output) => ({ system: SYSTEM, tools: TOOLS, messages: afterRun(output) }));
  const name = '” at a:1: expected a, got a'.repeat(4000);
  const note = `The failing test is “${name}” at test/a.test.js:1: expected 1, got 2 x`;
  const noted = { system: SYSTEM, tools: TOOLS, messages: [
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [{ type: 'text', text: note }, use('t1', 'bash', { command: 'ls' })] },
    { role: 'user', content: [result('t1', 'x\n[exit code 0]')] },
  ] };
  const dir = mkdtempSync(join(tmpdir(), 'lah-offline-fix-'));
  try {
    const shared = resolve(__dirname, '../shared');
    const entry = `export { offlineRespond } from '${shared}/offline-model.ts';
export { conditionCalls, strictComparisons } from '${shared}/offline/source.ts';
export { readRule } from '${shared}/offline/changelog.ts';`;
    const bundled = await build({
      stdin: { contents: entry, resolveDir: shared, loader: 'ts' },
      bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'silent',
    });
    writeFileSync(join(dir, 'model.mjs'), bundled.outputFiles[0].text);
    writeFileSync(join(dir, 'bodies.json'), JSON.stringify([...runs, noted]));
    const script = `import * as m from './model.mjs';
import { readFileSync } from 'node:fs';
const done = (name) => console.log(name);
for (const [i, body] of JSON.parse(readFileSync('bodies.json', 'utf8')).entries()) {
  m.offlineRespond(body);
  done('request ' + (i + 1));
}
const long = 'a'.repeat(1e6);
m.strictComparisons('a.js', 1, long); done('strictComparisons');
m.conditionCalls('if ('.repeat(250000)); done('conditionCalls');
m.readRule('## ' + long); done('readRule: the instruction file');
m.readRule('\`- ' + '<'.repeat(1e6) + '\`'); done('readRule: the template');`;
    writeFileSync(join(dir, 'run.mjs'), script);
    const child = spawn(process.execPath, ['run.mjs'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code, signal] = await new Promise<[number | null, string | null]>((done) =>
      child.on('close', (c, s) => done([c, s])));
    clearTimeout(killer);
    expect(signal, `a pattern backtracked: killed after 30 s; the cases done:\n${out}`).toBeNull();
    expect(code, out).toBe(0);
    expect(out.trim().split('\n'), 'every case done').toHaveLength(runs.length + 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

it("reads a location node prints as a YAML block (a folder name with a newline in it)", () => {
  const run = readTestRun(BLOCK_LOCATION, '/work/shop');
  expect(run).toEqual({
    total: 1, pass: 0, fail: 1,
    failing: { name: 'fails', file: 'a\nb/y.test.js', line: 4, expected: '2', actual: '1' },
  });
});

// ── Item 9: node's final summary, not the first lines that look like it ──────────────────────────

it("reads node's final summary, not a test's output that imitates it", () => {
  // Node's TAP shows a test's console.log as `# …` lines; spec prints it as it is.
  const logged = '# tests 53\n# suites 0\n# pass 53\n# fail 0\n';
  const tap = `TAP version 13\n${logged}# Subtest: logs\nok 1 - logs\n  ---\n  duration_ms: 1\n  ...\n` +
    `${TAP_FAILURE}\n${SUMMARY(2, 1, 1)}\n[exit code 1]`;
  expect(readTestRun(tap, '/work/shop')).toMatchObject({ total: 2, pass: 1, fail: 1 });
  const spec = 'ℹ tests 53\nℹ pass 53\nℹ fail 0\n✔ logs (1ms)\n✖ fails (1ms)\n' +
    'ℹ tests 2\nℹ suites 0\nℹ pass 1\nℹ fail 1\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\n' +
    'ℹ duration_ms 120.2\n\n✖ failing tests:\n\ntest at test/a.test.js:3:1\n✖ fails (1ms)\n' +
    '  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n  1 !== 2\n\n' +
    '  {\n    actual: 1,\n    expected: 2,\n  }\n[exit code 1]';
  expect(readTestRun(spec, '/work/shop')).toMatchObject({ total: 2, pass: 1, fail: 1 });
  // A run killed before its summary, whose tests had logged one: no finished run.
  expect(readTestRun(`TAP version 13\n${logged}[timed out after 120s; killed]`)).toBeUndefined();
});

// The notes the fix task has written by the time it edits, and the edit it then makes.
const NOTES = 'The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: ' +
  'expected 9000, got 10000. The test calls lineTotal, imported from src/discounts.js. README.md says ' +
  'nothing about it. The line to change is src/discounts.js:19: `return quantity > LIMIT;` → `return ' +
  'quantity >= LIMIT;` (`quantity > LIMIT` leaves out exactly 10 (LIMIT is 10), which the test counts in).';
const EDIT = { file_path: 'src/discounts.js', old_string: 'return quantity > LIMIT;', new_string: 'return quantity >= LIMIT;' };

it('does not say "Fixed" when a test that logs a summary of its own still fails after the edit', () => {
  const notes = `Before any change, tests: 1 of 2 pass. ${NOTES}`;
  const edit = EDIT;
  const logged = '# tests 53\n# suites 0\n# pass 53\n# fail 0\n';
  const reply = ask([
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [{ type: 'text', text: notes }, use('t1', 'edit_file', edit)] },
    { role: 'user', content: [result('t1', 'Edited src/discounts.js')] },
    { role: 'assistant', content: [{ type: 'text', text: 'Edited src/discounts.js:19: `return quantity > LIMIT;` → `return quantity >= LIMIT;`.' }, use('t2', 'bash', TEST_CALL)] },
    { role: 'user', content: [result('t2', `TAP version 13\n${logged}${TAP_FAILURE}\n${SUMMARY(2, 1, 1)}\n[exit code 1]`)] },
  ]);
  expect(said(reply)).not.toMatch(/Fixed/);
  expect(said(reply)).toMatch(/1 of 2 tests still fail/);
});

// ── Item 6: a suite that hangs ───────────────────────────────────────────────────────────────────

it('says a test run timed out, in the tool’s words, and stops instead of running it again', () => {
  const reply = ask(afterRun('TAP version 13\n# Subtest: waits forever\n[timed out after 120s; killed]'));
  expect(calls(reply), 'no second run').toEqual([]);
  expect(said(reply)).toMatch(/timed out after 120s; killed/);
  // Stopped by you (Ctrl+C), then `continue`: you asked for it, so it runs them again.
  const resumed = ask([
    ...afterRun('TAP version 13\n# Subtest: slow\n[exit code 130]'),
    { role: 'user', content: '[interrupted by the user]' },
    { role: 'user', content: 'continue' },
  ]);
  expect(calls(resumed)).toEqual([expect.objectContaining({ name: 'bash', input: TEST_CALL })]);
});

// ── Item 7: a file it cannot read ────────────────────────────────────────────────────────────────

it('reports a read that failed, in the tool’s words, and stops instead of reading it again', () => {
  const denied = "Error: EACCES: permission denied, open '/work/shop/test/discounts.test.js'";
  const reply = ask([
    ...afterRun(`${TAP_FAILURE}\n${SUMMARY(52, 51, 1)}\n[exit code 1]`),
    { role: 'assistant', content: [use('t2', 'read_file', { file_path: 'test/discounts.test.js', offset: 15, limit: 21 })] },
    { role: 'user', content: [result('t2', denied, true)] },
  ]);
  expect(calls(reply), 'no second read').toEqual([]);
  expect(said(reply)).toContain('EACCES: permission denied');
  // s01 reads with cat -n: the failure is in the output, and the pipe's status is sed's.
  const bash = ask([
    ...afterRun(`${TAP_FAILURE}\n${SUMMARY(52, 51, 1)}\n[exit code 1]`),
    { role: 'assistant', content: [use('t2', 'bash', { command: "cat -n test/discounts.test.js | sed -n '15,35p'" })] },
    { role: 'user', content: [result('t2', 'cat: test/discounts.test.js: Permission denied\n[exit code 0]')] },
  ], [{ name: 'bash' }]);
  expect(calls(bash), 'no second read with bash either').toEqual([]);
  expect(said(bash)).toContain('Permission denied');
});

// ── Item 12: an edit the file system refuses ─────────────────────────────────────────────────────

it('reports an edit that failed for another reason than its old text, and does not retry it', () => {
  const notes = NOTES;
  const edit = EDIT;
  const denied = "Error: EACCES: permission denied, open '/work/shop/src/discounts.js'";
  const reply = ask([
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [{ type: 'text', text: notes }, use('t1', 'edit_file', edit)] },
    { role: 'user', content: [result('t1', denied, true)] },
  ]);
  expect(calls(reply), 'no new read, no retry').toEqual([]);
  expect(said(reply)).toContain('EACCES: permission denied');
  expect(`${said(reply)}\n${said(reply, 'thinking')}`).not.toMatch(/must have changed|not in src/);
  // s01 edits with `sed -i … && cat -n …`: sed's own error, and its exit code.
  const sed = "sed -i '19s/quantity > LIMIT/quantity >= LIMIT/' src/discounts.js && cat -n src/discounts.js | sed -n '19p'";
  const bash = ask([
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [{ type: 'text', text: notes }, use('t1', 'bash', { command: sed })] },
    { role: 'user', content: [result('t1', 'sed: couldn\'t open temporary file src/sedX1: Permission denied\n[exit code 4]')] },
  ], [{ name: 'bash' }]);
  expect(calls(bash), 'no new read, no retry with bash either').toEqual([]);
  expect(said(bash)).toContain('Permission denied (exit code 4)');
});

// ── Item 13: what it cannot do ───────────────────────────────────────────────────────────────────

/** What node's TAP says for a test file that failed as a whole: what it printed, then the file. */
const wholeFileFailure = (file: string, printed: string[]) => `TAP version 13
${printed.join('\n')}
# Subtest: /work/shop/${file}
not ok 1 - /work/shop/${file}
  ---
  duration_ms: 79.344555
  location: '/work/shop/${file}:1:1'
  failureType: 'testCodeFailure'
  exitCode: 1
  signal: ~
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
${SUMMARY(1, 0, 1)}
[exit code 1]`;

it('says a test file failed as a whole (it did not load) instead of "expected undefined"', () => {
  const output = wholeFileFailure('test/a.test.js', [
    "# Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/work/shop/src/missing.js' imported from /work/shop/test/a.test.js",
  ]);
  const reply = ask(afterRun(output));
  expect(calls(reply)).toEqual([]);
  expect(said(reply)).not.toMatch(/undefined/);
  expect(said(reply)).toContain('test/a.test.js');
  expect(said(reply)).toContain("Cannot find module '/work/shop/src/missing.js'");
});

it('says node found no tests, not "All 0 tests pass"', () => {
  const reply = ask(afterRun(`TAP version 13\n${SUMMARY(0, 0, 0)}\n[exit code 0]`));
  expect(calls(reply)).toEqual([]);
  expect(said(reply)).not.toMatch(/All 0 tests pass/);
  expect(said(reply)).toMatch(/no tests/);
});

it('says it can run only node --test when a test file was written for jest (its globals are missing)', () => {
  // What node 20 printed for a jest test file, `describe(…)` with no import.
  const output = wholeFileFailure('test/cart.test.js', [
    '# file:///work/shop/test/cart.test.js:1',
    "# describe('cart', () => { test('adds', () => { expect(1).toBe(1); }); });",
    '# ^',
    '# ReferenceError: describe is not defined',
    '#     at file:///work/shop/test/cart.test.js:1:1',
    '# Node.js v20.20.2',
  ]);
  const reply = ask(afterRun(output));
  expect(calls(reply)).toEqual([]);
  expect(said(reply)).toContain('test/cart.test.js failed as a whole');
  expect(said(reply)).toContain('ReferenceError: describe is not defined');
  expect(said(reply)).toMatch(/only node's own test runner \(node --test\)/);
});
