/**
 * How the offline demo model reads a prompt, and what it prints back (shared/offline-model.ts and
 * shared/offline/): a command is that command, a huge prompt or a long chain of `then`s gets one
 * line, and nothing it did not write itself reaches the terminal as a control character.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { build } from 'esbuild';
import { expect, it } from 'vitest';
import { startFakeAnthropic } from '../shared/fake-anthropic.ts';
import { offlineRespond } from '../shared/offline-model.ts';
import { REPO, runChapter } from './helpers/run-chapter.ts';

const NAMES = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'];
const TOOLS = NAMES.map((name) => ({ name }));
const SYSTEM = 'You are a coding agent working in /work/shop. Use the tools.';
const ask = (messages: unknown[], tools = TOOLS) =>
  offlineRespond({ system: SYSTEM, tools, messages }) as any;
const calls = (reply: any) => reply.content.filter((b: any) => b.type === 'tool_use');
const said = (reply: any) =>
  reply.content.filter((b: any) => b.type === 'text').map((b: any) => b.text).join('\n');
// Everything a reader sees of a reply: its text and its thinking (shown as `[thinking] …`).
const shown = (reply: any) =>
  reply.content.map((b: any) => b.text ?? b.thinking ?? '').join('\n');
const use = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input });
const result = (id: string, content: string) => ({ type: 'tool_result', tool_use_id: id, content });

// ── Item 3: terminal escapes ─────────────────────────────────────────────────────────────────────

// What a terminal acts on: C0 but newline and tab, DEL, and C1 (U+009B is a one-character CSI).
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
// Retitle the window, clear the screen, write the clipboard, a C1 CSI, DEL, a NUL, a lone CR.
const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07\x9b31m\x7f\x00over\rwritten';

it('shows control characters in a tool result it echoes as visible escapes', () => {
  const reply = ask([
    { role: 'user', content: 'read notes.txt' },
    { role: 'assistant', content: [use('t1', 'read_file', { file_path: 'notes.txt' })] },
    { role: 'user', content: [result('t1', `     1\t${HOSTILE}`)] },
  ]);
  expect(shown(reply)).not.toMatch(CONTROL);
  expect(said(reply), 'each as an escape').toContain(
    '\\x1b]0;pwned\\x07\\x1b[2J\\x1b]52;c;ZWNobyBoaQ==\\x07\\x9b31m\\x7f\\x00over\\x0dwritten',
  );
  expect(said(reply), 'tabs stay').toContain('     1\t');
});

it('shows control characters in file names, the prompt it quotes, and the "On it" line', () => {
  const listed = ask([
    { role: 'user', content: 'list' },
    { role: 'assistant', content: [use('t1', 'glob', { pattern: '*' })] },
    { role: 'user', content: [result('t1', `a.txt\n\x1b]0;evil\x07.txt`)] },
  ]);
  expect(shown(listed)).not.toMatch(CONTROL);
  expect(said(listed)).toContain('\\x1b]0;evil\\x07.txt');
  const quoted = ask([{ role: 'user', content: `hello ${HOSTILE}` }]);
  expect(shown(quoted)).not.toMatch(CONTROL);
  expect(said(quoted)).toContain('did not understand "hello \\x1b]0;pwned');
  const run = ask([{ role: 'user', content: `run printf '${HOSTILE}'` }]);
  expect(shown(run)).not.toMatch(CONTROL);
  expect(said(run)).toContain("On it: run printf '\\x1b]0;pwned\\x07");
  expect(calls(run)[0].input.command, 'the command itself is what bash gets').toContain(HOSTILE);
});

it('shows control characters in its thinking and its summaries as escapes too', () => {
  // The find task thinks about the file the search found: its name came from the tool.
  const file = 'src/\x1b]0;x\x07.js';
  const thinking = ask([
    { role: 'user', content: 'find where lineTotal is defined' },
    { role: 'assistant', content: [use('t1', 'grep', { pattern: 'function lineTotal\\b' })] },
    { role: 'user', content: [result('t1', `${file}:3:export function lineTotal(a) {`)] },
  ]);
  expect(thinking.content[0].type).toBe('thinking');
  expect(shown(thinking)).not.toMatch(CONTROL);
  expect(shown(thinking)).toContain('src/\\x1b]0;x\\x07.js');
  const transcript = 'USER: run cat notes.txt\n\n' +
    `ASSISTANT called bash {"command":"cat notes.txt"}` +
    `\n\nRESULT of bash {"command":"cat notes.txt"} (an error):\n${HOSTILE}`;
  const content = `${transcript}\n\n---\nSummarise the conversation above.\n` +
    `The user asked to keep in particular: pwned`;
  const messages = [{ role: 'user', content }];
  const summary = offlineRespond({ system: 'You summarise.', messages });
  expect(shown(summary)).toMatch(/pwned/);
  expect(shown(summary)).not.toMatch(CONTROL);
});

it('the thinking the server adds to its answer quotes the prompt with escapes too', async () => {
  // A plain answer has no thinking of its own: the fake adds "Working out how to answer: …".
  const fake = await startFakeAnthropic({ respond: offlineRespond });
  try {
    const client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0 });
    const reply = await client.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      thinking: { type: 'adaptive', display: 'summarized' } as any,
      messages: [{ role: 'user', content: `hello ${HOSTILE}` }],
    });
    const thinking = reply.content.find((b) => b.type === 'thinking') as { thinking: string };
    expect(thinking.thinking).toContain('Working out how to answer: "hello \\x1b]0;pwned');
    expect(shown(reply)).not.toMatch(CONTROL);
    // Its quote of the prompt is cut between characters: half an emoji, sent back with the next
    // request, is refused ("no low surrogate in string").
    const emoji = `${'a'.repeat(59)}😀 and more`;
    const first = await client.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      thinking: { type: 'adaptive', display: 'summarized' } as any,
      messages: [{ role: 'user', content: emoji }],
    });
    const next = await client.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      thinking: { type: 'adaptive', display: 'summarized' } as any,
      messages: [
        { role: 'user', content: emoji },
        { role: 'assistant', content: first.content as any },
        { role: 'user', content: 'history' },
      ],
    });
    expect(shown(next)).toContain('2 prompts from you');
  } finally {
    await fake.close();
  }
});

// ── Item 11: a command is that command ───────────────────────────────────────────────────────────

it('a prompt that starts with a command is that command, whatever task words it holds', () => {
  const note = 'write notes.txt: remember to fix the broken test tomorrow';
  expect(calls(ask([{ role: 'user', content: note }]))).toEqual([expect.objectContaining({
    name: 'write_file',
    input: { file_path: 'notes.txt', content: 'remember to fix the broken test tomorrow\n' },
  })]);
  const log = "run git log --oneline --grep 'fix failing tests'";
  expect(calls(ask([{ role: 'user', content: log }]))).toEqual([expect.objectContaining({
    name: 'bash', input: { command: "git log --oneline --grep 'fix failing tests'" },
  })]);
  // And its result is echoed, not taken for a step of the fix task.
  const after = ask([
    { role: 'user', content: note },
    { role: 'assistant', content: [use('t1', 'write_file', { file_path: 'notes.txt' })] },
    { role: 'user', content: [result('t1', 'Wrote notes.txt')] },
  ]);
  expect(calls(after)).toEqual([]);
  expect(said(after)).toMatch(/^Result of write_file/);
});

it('does not start the fix task when it is asked not to fix', () => {
  for (const prompt of [
    'do not fix the failing tests, only tell me which one fails',
    "Please don't fix the broken test yet",
    'I do not want you to fix the failing test',
  ]) {
    const reply = ask([{ role: 'user', content: prompt }]);
    expect(calls(reply), prompt).toEqual([]);
    expect(reply.content.map((b: any) => b.type), 'no task step: no thinking').toEqual(['text']);
    expect(said(reply), 'it says what it can do instead').toMatch(/run <command>/);
  }
  // Still the task: a negation elsewhere in the prompt is not about the fixing.
  const task = ask([{ role: 'user', content: "the tests don't pass. Fix the failing test" }]);
  expect(calls(task)).toEqual([expect.objectContaining({ name: 'bash' })]);
});

// ── Item 8: "then" has a limit ───────────────────────────────────────────────────────────────────

it('joins a handful of commands with "then", and answers a longer chain with one line', () => {
  const five = Array.from({ length: 5 }, (_, i) => `run echo ${i}`).join(' then ');
  expect(calls(ask([{ role: 'user', content: five }]))).toHaveLength(5);
  for (const more of [1, 600, 8000]) {
    const chain = `${five}${' then run true'.repeat(more)}`;
    const reply = ask([{ role: 'user', content: chain }]);
    expect(calls(reply), 'no command runs').toEqual([]);
    expect(said(reply).split('\n'), 'one line').toHaveLength(1);
    // 8,000 is also too long a prompt (112 KB): either line says why.
    if (more < 8000) expect(said(reply)).toMatch(/at most 5 commands/);
  }
});

// ── The small things ─────────────────────────────────────────────────────────────────────────────

it('takes $ for the name in "find where $ is defined"', () => {
  const reply = ask([{ role: 'user', content: 'find where $ is defined' }]);
  expect(shown(reply)).not.toMatch(/\bis is\b/);
  expect(shown(reply)).toContain('find where $ is defined');
});

it('quotes a long prompt in its "On it" line cut between characters, and the cut marked', () => {
  const text = '😀'.repeat(4000); // 8,000 UTF-16 units, each pair one character
  const reply = ask([{ role: 'user', content: `write notes.txt: ${text}` }]);
  expect(calls(reply)[0].input.content, 'the file gets it all').toBe(`${text}\n`);
  const line = said(reply);
  expect(line.length, 'not the whole prompt').toBeLessThan(300);
  expect(line, 'the cut is marked').toMatch(/😀….$/u);
  expect(line, 'no half character').not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
});

it('cuts every line it quotes between characters: no half of an emoji goes back to the API', () => {
  const line = `${'x'.repeat(159)}😀`; // the pair at units 159-160: a cut at 160 halves it
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
  const echoed = ask([
    { role: 'user', content: 'read notes.txt' },
    { role: 'assistant', content: [use('t1', 'read_file', { file_path: 'notes.txt' })] },
    { role: 'user', content: [result('t1', line)] },
  ]);
  expect(said(echoed)).toContain('x'.repeat(159));
  expect(said(echoed)).not.toMatch(lone);
  const prompt = `${'y'.repeat(69)}😀`;
  const history = ask([{ role: 'user', content: prompt }, { role: 'user', content: 'history' }]);
  expect(said(history)).toContain('y'.repeat(69));
  expect(said(history)).not.toMatch(lone);
});

it('answers a prompt too long for a task or a command with one line, and echoes none of it', () => {
  const reply = ask([{ role: 'user', content: `write notes.txt: ${'x'.repeat(50_000)}` }]);
  expect(calls(reply)).toEqual([]);
  expect(said(reply).split('\n')).toHaveLength(1);
  expect(said(reply)).not.toContain('x'.repeat(100));
});

// ── Item 5: reading a prompt is linear ───────────────────────────────────────────────────────────

/**
 * The inputs, made big enough that the old, quadratic reading took minutes on each (at a
 * quarter of these sizes: 'fix ' × 65,536 took 15.7 s; `run a` + 256K spaces, 39 s), answered in a
 * child process that is killed if it has not finished after 30 s: a test that fails, not a hang.
 */
const BIG = `
import { offlineRespond } from './shared/offline-model.ts';
import { runCommands } from './shared/offline/commands.ts';
import { isFixPrompt, readFindPrompt } from './shared/offline/tasks.ts';
const names = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'];
const tools = names.map((name) => ({ name }));
const M = 1 << 20;
const inputs = {
  'fix × 1M': [{ role: 'user', content: 'fix '.repeat(M) }],
  'run a + 1M spaces + x': [{ role: 'user', content: 'run a' + ' '.repeat(M) + 'x' }],
  'where + 1M $': [{ role: 'user', content: 'where ' + '$'.repeat(M) }],
  'edit + 1M a:': [{ role: 'user', content: 'edit ' + 'a:'.repeat(M) }],
  'run true after fix × 1M': [
    { role: 'user', content: 'fix '.repeat(M) },
    { role: 'assistant', content: 'I did not understand.' },
    { role: 'user', content: 'run true' },
  ],
};
for (const [name, messages] of Object.entries(inputs)) {
  console.log('reading: ' + name);
  const reply = offlineRespond({ system: 'working in /w.', tools, messages });
  const text = reply.content.filter((b) => b.type === 'text').map((b) => b.text).join('\\n');
  const called = reply.content.filter((b) => b.type === 'tool_use').map((b) => b.input.command);
  console.log('answer: ' + JSON.stringify({ name, lines: text.split('\\n').length, called }));
}
// The patterns themselves, past the length bound that keeps such prompts from them.
const set = new Set(tools.map((t) => t.name));
const direct = {
  'isFixPrompt(fix × 1M)': () => isFixPrompt('fix '.repeat(M)),
  'readFindPrompt(where + 1M $)': () => readFindPrompt('where ' + '$'.repeat(M)),
  'runCommands(run a + 1M spaces + x)': () => runCommands('run a' + ' '.repeat(M) + 'x', set, {}),
  'runCommands(edit + 1M a:)': () => runCommands('edit ' + 'a:'.repeat(M), set, {}),
};
for (const [name, read] of Object.entries(direct)) {
  console.log('reading: ' + name);
  read();
  console.log('answer: ' + JSON.stringify({ name }));
}
`;

it('reads huge prompts in linear time: the issue’s inputs, under a 30 s watchdog', async () => {
  const built = await build({
    stdin: { contents: BIG, resolveDir: REPO, loader: 'ts' },
    bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'silent',
  });
  const file = join(mkdtempSync(join(tmpdir(), 'offline-prompts-')), 'big.mjs');
  writeFileSync(file, built.outputFiles[0].text);
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
  const watchdog = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])));
  clearTimeout(watchdog);
  const stuck = out.match(/reading: (.*)\n(?![\s\S]*answer)/)?.[1];
  expect(signal, `killed after 30 s while reading: ${stuck}\n${out}`).toBeNull();
  expect(code, out).toBe(0);
  const answers = [...out.matchAll(/^answer: (.*)$/gm)].map((m) => JSON.parse(m[1]));
  expect(answers.map((a) => a.name)).toHaveLength(9);
  for (const a of answers.slice(0, 4)) {
    expect(a, 'one line, no command run').toMatchObject({ lines: 1, called: [] });
  }
  expect(answers[4], 'the next prompt is a command as usual').toMatchObject({ called: ['true'] });
});

// ── End to end: the chapter prints the escapes, and the fake takes the thinking back ───────────

it('a chapter run offline prints a hostile file name escaped: its thinking, its answer', async () => {
  // The find task's thinking names the file the search found; the chapter sends that thinking
  // back with the next request, and the fake checks it against its signature.
  const file = 'src/\x1b]0;pwned\x07\x1b[2J.js';
  const run = await runChapter('s02', {
    offline: true,
    args: ['-p', 'find where lineTotal is defined'],
    env: { OFFLINE_PACE_MS: '0' },
    files: { [file]: 'export function lineTotal(price, n) {\n  return price * n;\n}\n' },
  });
  expect(run.code, run.stderr).toBe(0);
  // The chapter's own `> read_file src/…` line too: paint (shared/terminal.ts) shows it escaped.
  const printed = `${run.stdout}\n${run.stderr}`;
  expect(printed, 'no raw ESC, BEL or other control character').not.toMatch(CONTROL);
  expect(run.stderr, 'the tool call names it escaped').toMatch(/^> read_file src\/\\x1b\]0;pwned/m);
  const escaped = /\[thinking\][^\n]*src\/\\x1b\]0;pwned\\x07/;
  expect(run.stderr, 'the thinking names it escaped').toMatch(escaped);
  const answer = 'lineTotal is defined in src/\\x1b]0;pwned';
  expect(run.stdout, 'and so does the answer').toContain(answer);
});
