/**
 * The offline demo model's own rules (shared/offline-model.ts), called directly: what it says back
 * is what a reader without a key sees.
 */
import { expect, it } from 'vitest';
import { offlineBanner, offlineRespond } from '../shared/offline-model.ts';
import { readTestRun } from '../shared/offline/outputs.ts';
import { TAP_FAILURE } from './helpers/node-test-output.ts';

it('shows a tool call whose input it cuts with the cut marked, never as if the cut were a value', () => {
  const input = { file_path: 'notes.txt', old_string: 'hello there', new_string: 'goodbye and thanks for all' };
  const body = {
    tools: [{ name: 'edit_file' }],
    messages: [
      { role: 'user', content: 'edit notes.txt: hello there => goodbye and thanks for all' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'edit_file', input }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Edited notes.txt' }] },
    ],
  };
  const reply = offlineRespond(body) as { content: { text: string }[] };
  const shown = reply.content[0].text.split('\n')[0];
  expect(shown, 'the first 60 characters of the input, then an ellipsis').toBe(
    `Result of edit_file(${JSON.stringify(input).slice(0, 60)}…):`,
  );
});

// ── The tasks it plays (shared/offline/): each reply decided from the request alone ─────────────

const TOOLS = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'].map((name) => ({ name }));
const SYSTEM = 'You are a coding agent working in /work/shop. Use the tools.';
const ask = (messages: unknown[], tools = TOOLS) => offlineRespond({ system: SYSTEM, tools, messages }) as any;
const calls = (reply: any) => reply.content.filter((b: any) => b.type === 'tool_use');
const said = (reply: any, type = 'text') =>
  reply.content.filter((b: any) => b.type === type).map((b: any) => b[type === 'text' ? 'text' : 'thinking']).join('\n');
const use = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input });
const result = (id: string, content: string, isError = false) => ({ type: 'tool_result', tool_use_id: id, content, is_error: isError });

// What `node --test` prints for the sample project's bug: Node 22's spec reporter, and TAP.
const SPEC = `✔ gives no bulk discount below 10 items (0.3ms)
✖ gives the bulk discount from 10 items (1.7ms)
ℹ tests 52
ℹ suites 0
ℹ pass 51
ℹ fail 1

✖ failing tests:

test at test/discounts.test.js:21:1
✖ gives the bulk discount from 10 items (1.7ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

  10000 !== 9000

      at TestContext.<anonymous> (file:///work/shop/test/discounts.test.js:23:10) {
    generatedMessage: true,
    code: 'ERR_ASSERTION',
    actual: 10000,
    expected: 9000,
    operator: 'strictEqual'
  }`;
const TAP = `${TAP_FAILURE}
1..52
# tests 52
# suites 0
# pass 51
# fail 1`;

it('reads node --test in both its forms: the failing test, where it is, what it expected and got', () => {
  const failing = { name: 'gives the bulk discount from 10 items', file: 'test/discounts.test.js', line: 21, expected: '9000', actual: '10000' };
  expect(readTestRun(SPEC, '/work/shop')).toEqual({ total: 52, pass: 51, fail: 1, failing });
  expect(readTestRun(TAP, '/work/shop')).toEqual({ total: 52, pass: 51, fail: 1, failing });
  expect(readTestRun(TAP.slice(0, 300)), 'a run cut short (Ctrl+C) is no run').toBeUndefined();
});

it('after a test run, decides its next step from the output: the failing test, read near its line', () => {
  const reply = ask([
    { role: 'user', content: 'Fix the failing test' },
    { role: 'assistant', content: [use('t1', 'bash', { command: 'node --test --test-reporter=tap' })] },
    { role: 'user', content: [result('t1', `${TAP}\n[exit code 1]`)] },
  ]);
  expect(reply.content[0].type, 'it thinks first').toBe('thinking');
  expect(said(reply, 'thinking')).toContain('The one that fails is “gives the bulk discount from 10 items”, at test/discounts.test.js line 21');
  expect(said(reply), 'and writes down what it learned').toContain('The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: expected 9000, got 10000.');
  expect(calls(reply)).toEqual([expect.objectContaining({ name: 'read_file', input: { file_path: 'test/discounts.test.js', offset: 15, limit: 21 } })]);
});

it('answers a message holding both tool results and new text as the text asks (a resumed session)', () => {
  // s04's repair answers a call a killed session left open in the message with your next prompt.
  const interrupted = 'Error: interrupted: the agent stopped while this ran. It may have partly run; check first.';
  const task = ask([
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [{ type: 'text', text: 'First, the tests.' }, use('t1', 'bash', { command: 'node --test --test-reporter=tap' })] },
    { role: 'user', content: [result('t1', interrupted, true), { type: 'text', text: 'continue' }] },
  ]);
  expect(said(task, 'thinking'), 'it says the step was interrupted').toMatch(/was interrupted before it gave a result/);
  expect(calls(task), 'and does that step again').toEqual([expect.objectContaining({ name: 'bash', input: { command: 'node --test --test-reporter=tap' } })]);
  const command = ask([
    { role: 'user', content: 'run sleep 100' },
    { role: 'assistant', content: [use('t1', 'bash', { command: 'sleep 100' })] },
    { role: 'user', content: [result('t1', interrupted, true), { type: 'text', text: 'run echo hi' }] },
  ]);
  expect(said(command), 'not an echo of the interrupted result').not.toMatch(/Result of|That failed/);
  expect(calls(command)).toEqual([expect.objectContaining({ name: 'bash', input: { command: 'echo hi' } })]);
});

it('takes another look when an edit does not apply, and tries again from what it reads', () => {
  const change = 'The line to change is src/discounts.js:19: `return quantity > LIMIT;` → `return quantity >= LIMIT;` (`quantity > LIMIT` leaves out exactly 10 (LIMIT is 10), which the test counts in).';
  const reply = ask([
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [{ type: 'text', text: `The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: expected 9000, got 10000. The test calls lineTotal, imported from src/discounts.js. README.md says nothing about it. ${change}` },
      use('t1', 'edit_file', { file_path: 'src/discounts.js', old_string: 'return quantity > LIMIT;', new_string: 'return quantity >= LIMIT;' })] },
    { role: 'user', content: [result('t1', 'Error: old_string not found in src/discounts.js. Read the file and copy the text exactly, whitespace included.', true)] },
  ]);
  expect(said(reply, 'thinking')).toMatch(/The edit did not apply/);
  expect(said(reply)).toContain('The edit of src/discounts.js did not apply (attempt 1).');
  expect(calls(reply)).toEqual([expect.objectContaining({ name: 'read_file', input: { file_path: 'src/discounts.js', offset: 1, limit: 45 } })]);
});

it('goes on from a summary alone: continue, and the next step is the edit the summary names', () => {
  const summary = [
    '[Earlier conversation, compacted. The full text is in t.jsonl (JSON Lines: search it with bash, e.g. grep).]',
    '',
    '1. Requests\n- fix the failing test\n2. Files\n- src/discounts.js: read\n3. Errors\n- (none)\n4. Decisions\n- (none)',
    '5. State\n- Not finished: fix the failing test',
    '- Before any change, tests: 51 of 52 pass.',
    '- The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: expected 9000, got 10000.',
    '- The test calls lineTotal, imported from src/discounts.js.',
    '- README.md:35 says: “Bulk discount: from 10 items of one product”.',
    '- The line to change is src/discounts.js:19: `return quantity > LIMIT;` → `return quantity >= LIMIT;` (`quantity > LIMIT` leaves out exactly 10 (LIMIT is 10), which the test counts in).',
    '6. Next step\n- change line 19 of src/discounts.js',
  ].join('\n');
    // As after /compact between turns: the summary, then your next prompt.
  const reply = ask([{ role: 'user', content: summary }, { role: 'user', content: 'continue' }]);
  expect(calls(reply)).toEqual([expect.objectContaining({ name: 'edit_file', input: { file_path: 'src/discounts.js', old_string: 'return quantity > LIMIT;', new_string: 'return quantity >= LIMIT;' } })]);
});

it('says when there is nothing to continue, and what it can do', () => {
  const reply = ask([{ role: 'user', content: 'continue' }]);
  expect(said(reply)).toMatch(/^There is nothing to continue: no task was started yet\.\nI can play these tasks: fix the failing test/);
});

it('answers anything else with what it can do: the tasks first, then the commands', () => {
  const text = said(ask([{ role: 'user', content: 'how many ts files are here?' }]));
  expect(text).toContain('a script and not an AI, so I did not understand "how many ts files are here?"');
  expect(text.indexOf('fix the failing test'), 'the tasks come first').toBeLessThan(text.indexOf('run <command>'));
  expect(text).toContain('npm run demo');
});

it('summarises under the six headings, from the conversation, and keeps the focus it is asked to', () => {
  const transcript = [
    'USER: fix the failing test',
    'ASSISTANT: Next: run the tests (node --test --test-reporter=tap).',
    'ASSISTANT called bash {"command":"node --test --test-reporter=tap"}',
    `RESULT of bash {"command":"node --test --test-reporter=tap"}:\n${TAP}`,
    'ASSISTANT: Before any change, tests: 51 of 52 pass. The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: expected 9000, got 10000. Next: read the test.',
    'ASSISTANT called read_file {"file_path":"test/discounts.test.js","offset":15,"limit":21}',
    'RESULT of read_file {"file_path":"test/discounts.test.js","offset":15,"limit":21}:\n    21\ttest(\'gives the bulk discount from 10 items\', () => {\n    22\t  assert.equal(lineTotal(1000, 10), 9000);\n    23\t});',
  ].join('\n\n');
  const ask6 = 'Summarise the conversation above so that you can carry on the work from the summary alone.';
  const content = `${transcript}\n\n---\n${ask6}\nThe user asked to keep in particular: the failing test`;
  const summary = said(offlineRespond({ system: 'You summarise.', messages: [{ role: 'user', content }] }));
  expect(summary).toMatch(/1\. Requests\n- fix the failing test\n2\. Files\n- test\/discounts\.test\.js: read; the failing test, “gives the bulk discount from 10 items”, line 21\n3\. Errors\n/);
  expect(summary).toMatch(/5\. State\n- Not finished: fix the failing test\n/);
  expect(summary).toMatch(/6\. Next step\n- find where test\/discounts\.test\.js imports lineTotal from$/);
  expect(summary, 'it says what it was asked to keep').toContain('- Kept in particular, as the user asked: the failing test');
  expect(summary, 'and keeps the lines about it').toMatch(/Kept in particular[^\n]*\n {2}- [^\n]*failing test/);
});

it('the banner says it is a script, lists the tasks before the commands, and how to get a real model', () => {
  const banner = offlineBanner(TOOLS);
  expect(banner).toMatch(/not an AI/);
  expect(banner.indexOf('fix the failing test')).toBeLessThan(banner.indexOf('run <command>'));
  expect(banner).toMatch(/ANTHROPIC_API_KEY[\s\S]*not tried here[\s\S]*ANTHROPIC_BASE_URL=http:\/\/localhost:11434 ANTHROPIC_AUTH_TOKEN=ollama/);
});

it('a sub-agent that failed (Ctrl+C aborted its request) is no report: it asks again', () => {
  const facts = 'The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: expected 9000, got 10000. The test calls lineTotal, imported from src/discounts.js. README.md says nothing about it.';
  const reply = ask([
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [{ type: 'text', text: facts }, use('t1', 'agent', { task: 'Find where lineTotal is defined.' })] },
    { role: 'user', content: [result('t1', 'Error: the sub-agent failed: API error: Request was aborted.', true)] },
    { role: 'user', content: '[interrupted by the user]' },
    { role: 'user', content: 'continue' },
  ], [...TOOLS, { name: 'agent' }]);
  expect(said(reply, 'thinking'), 'no report came back').not.toMatch(/report is back|reported/);
  expect(calls(reply), 'so it asks a sub-agent again').toEqual([expect.objectContaining({ name: 'agent' })]);
});

// ── Issue 33: what the banner promises, the model keeps ──────────────────────────────────────────

const WITH_AGENT = [...TOOLS, { name: 'agent' }];

it('delegate hands a task to the sub-agent, which plays it: the find task runs in the child', () => {
  const parent = ask([{ role: 'user', content: 'delegate find where lineTotal is defined' }], WITH_AGENT);
  expect(calls(parent), 'the main agent calls agent, and nothing else').toEqual([
    expect.objectContaining({ name: 'agent', input: { task: 'find where lineTotal is defined' } }),
  ]);
  // The sub-agent's conversation starts with that task: it searches, as the find task does.
  const child = ask([{ role: 'user', content: 'find where lineTotal is defined' }]);
  expect(calls(child)).toEqual([expect.objectContaining({ name: 'grep' })]);
});

it('delegates only what a sub-agent can do, and says so for anything else', () => {
  const sentence = ask([{ role: 'user', content: 'delegate list the files in src and count them' }], WITH_AGENT);
  expect(calls(sentence), 'no sub-agent for a task it would misread').toEqual([]);
  expect(said(sentence)).toMatch(/list the files in src and count them/);
  expect(said(sentence)).toMatch(/one glob/);
  const glob = ask([{ role: 'user', content: 'delegate list src/*.js' }], WITH_AGENT);
  expect(calls(glob)).toEqual([expect.objectContaining({ name: 'agent', input: { task: 'list src/*.js' } })]);
  const prose = ask([{ role: 'user', content: 'delegate tidy up the code' }], WITH_AGENT);
  expect(calls(prose)).toEqual([]);
  expect(said(prose)).toMatch(/a command or a task/);
  expect(offlineBanner(WITH_AGENT), 'the banner says what delegate takes').toMatch(/delegate <command or task>/);
});

it('list <glob> with bash alone lists what the glob matches, not the whole folder', () => {
  const bashOnly = [{ name: 'bash' }];
  const [md] = calls(ask([{ role: 'user', content: 'list *.md' }], bashOnly));
  expect(md.input.command).not.toBe('ls -la');
  expect(md.input.command).toContain("'*.md'");
  const [all] = calls(ask([{ role: 'user', content: 'list' }], bashOnly));
  expect(all.input.command, 'list alone lists the folder').toBe('ls -la');
  const words = ask([{ role: 'user', content: 'list the files in src' }], bashOnly);
  expect(calls(words), 'words are no glob').toEqual([]);
  expect(said(words).split('\n')).toHaveLength(1);
});

it('offers continue only in the chapters that keep a conversation after Ctrl+C (s04 on)', () => {
  for (const chapter of ['s01', 's02', 's03']) {
    expect(offlineBanner(WITH_AGENT, chapter), chapter).not.toMatch(/▸ continue/);
  }
  for (const chapter of ['s04', 's05', 's06']) {
    expect(offlineBanner(WITH_AGENT, chapter), chapter).toMatch(/▸ continue/);
  }
});

it('continue after a task it stopped does not call that task done: it says how it ended', () => {
  // Run in the repo itself: the failing test is demo/'s, which it does not edit.
  const repo = TAP.replace(/(location: '(?:\/work\/shop\/)?)test\//, '$1demo/test/');
  expect(repo).not.toBe(TAP);
  const messages: any[] = [
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [use('t1', 'bash', { command: 'node --test --test-reporter=tap' })] },
    { role: 'user', content: [result('t1', `${repo}\n[exit code 1]`)] },
  ];
  const declined = ask(messages);
  expect(said(declined), 'it declines to edit the repo itself').toMatch(/I leave it as it is/);
  messages.push({ role: 'assistant', content: declined.content.filter((b: any) => b.type === 'text') });
  messages.push({ role: 'user', content: 'continue' });
  const text = said(ask(messages));
  expect(text).toMatch(/^There is nothing to continue/);
  expect(text).not.toMatch(/is done/);
  expect(text, 'it quotes how the task ended').toMatch(/ended with my answer: “The failing test is in demo\//);
});

it('history counts your prompts, not the interruption note or a summary', () => {
  const interrupted = ask([
    { role: 'user', content: 'fix the failing test' },
    { role: 'assistant', content: [use('t1', 'bash', { command: 'node --test --test-reporter=tap' })] },
    { role: 'user', content: [result('t1', 'Error: interrupted: the agent stopped while this ran.', true)] },
    { role: 'user', content: '[interrupted by the user]' },
    { role: 'user', content: 'history' },
  ]);
  expect(said(interrupted)).toMatch(/^I can see 5 messages: 2 prompts from you, 1 tool call and 1 note that you interrupted me\./);
  expect(said(interrupted)).not.toMatch(/\d\. \[interrupted/);
  const summary = '[Earlier conversation, compacted. The full text is in t.jsonl.]\n\nSummary …';
  const compacted = ask([{ role: 'user', content: summary }, { role: 'user', content: 'history' }]);
  expect(said(compacted)).toMatch(/^I can see 2 messages: 1 prompt from you, 0 tool calls and a summary of the earlier conversation\./);
  expect(said(compacted)).toMatch(/\n {2}1\. history\n/);
});

it('a summary of a summary keeps its files, and no summary keeps raw test-runner lines', () => {
  const summarise = (transcript: string) => {
    const content = `${transcript}\n\n---\nSummarise the conversation above.\nThe user asked to keep in particular: the failing test`;
    return said(offlineRespond({ system: 'You summarise.', messages: [{ role: 'user', content }] }));
  };
  const run = 'ASSISTANT called bash {"command":"node --test --test-reporter=tap"}';
  const first = summarise([
    'USER: fix the failing test',
    run,
    `RESULT of bash {"command":"node --test --test-reporter=tap"}:\n${TAP}`,
    'ASSISTANT: Before any change, tests: 51 of 52 pass. The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: expected 9000, got 10000. Next: read the test.',
    'ASSISTANT called read_file {"file_path":"test/discounts.test.js","offset":15,"limit":21}',
    'RESULT of read_file {"file_path":"test/discounts.test.js","offset":15,"limit":21}:\n    21\ttest(\'gives the bulk discount from 10 items\', () => {',
  ].join('\n\n'));
  const file = '- test/discounts.test.js: read; the failing test, “gives the bulk discount from 10 items”, line 21';
  expect(first).toContain(`2. Files\n${file}\n`);
  const raw = /# Subtest|not ok \d|failureType|type: 'test'|# tests \d/;
  expect(first).not.toMatch(raw);
  const second = summarise([
    `USER: [Earlier conversation, compacted. The full text is in t.jsonl.]\n\n${first}`,
    'USER: run ls',
    'ASSISTANT called bash {"command":"ls"}',
    'RESULT of bash {"command":"ls"}:\nREADME.md',
    'ASSISTANT: Result of bash: README.md',
  ].join('\n\n'));
  expect(second, 'the files the first summary listed').toContain(`2. Files\n${file}\n`);
  expect(second).not.toMatch(raw);
  expect(second, 'and its requests').toMatch(/1\. Requests\n- fix the failing test\n- run ls\n/);
});

it('what it can do lists continue with when it works: from s04 on, after Ctrl+C', () => {
  const text = said(ask([{ role: 'user', content: 'hello' }]));
  expect(text).toMatch(/I can play these tasks: fix the failing test; find where <name> is defined; and, from s04 on, continue a task you stopped \(Ctrl\+C\)\./);
});
