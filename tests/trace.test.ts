/**
 * --trace (shared/trace.ts), as a reader uses it: a chapter run with the flag, over real HTTP
 * against the strict fake, and the JSON Lines file it leaves. What goes in (each request exactly as
 * the API received it, each try, the replies, the agents, the compactions), what never does (the
 * key, any header), the file's and folder's modes, and a trace that cannot be written.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpError, reply, text, toolUse, type Reply } from '../shared/fake-anthropic.ts';
import { runChapter, TEST_KEY } from './helpers/run-chapter.ts';

type Line = Record<string, any>;
const readTrace = (file: string): Line[] =>
  readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
const exchanges = (lines: Line[]) =>
  lines.filter((l) => l.type === 'exchange').sort((a, b) => a.n - b.n);
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe.concurrent('--trace', () => {
  it('writes each request as the API received it, and each reply, in a 0600 file', async () => {
    const run = await runChapter('s01', {
      args: ['-p', 'list the files', '--trace=trace.jsonl'],
      replies: [reply(toolUse('bash', { command: 'echo TOOL-OUT' })), reply(text('Two files.'))],
    });
    expect(run.code, run.stderr).toBe(0);
    const file = join(run.workspace, 'trace.jsonl');
    expect(run.stderr).toContain(`[trace: ${file}]`);
    expect(mode(file)).toBe('600');
    const lines = readTrace(file);
    expect(lines[0]).toMatchObject({ type: 'trace', version: 1, chapter: 's01_agent_loop' });
    const sent = exchanges(lines);
    expect(sent.map((e) => [e.n, e.agent, e.method, e.path, e.try, e.status])).toEqual([
      [1, 'main', 'POST', '/v1/messages', 1, 200],
      [2, 'main', 'POST', '/v1/messages', 1, 200],
    ]);
    // The body exactly as sent: the same JSON the fake parsed, the tool result included.
    expect(sent.map((e) => e.request)).toEqual(run.requests.map((r) => r.body));
    expect(JSON.stringify(sent[1].request)).toContain('TOOL-OUT');
    expect(sent[0].response.content).toContainEqual(expect.objectContaining({ type: 'tool_use' }));
    expect(sent[0].response.stop_reason).toBe('tool_use');
    expect(sent[1].response.content.at(-1)).toMatchObject({ type: 'text', text: 'Two files.' });
    expect(sent[1].response.usage.input_tokens).toBeGreaterThan(0);
    for (const { times } of sent) {
      expect(times.sent).toBeLessThanOrEqual(times.firstByte);
      expect(times.firstByte).toBeLessThanOrEqual(times.done);
    }
    const raw = readFileSync(file, 'utf8');
    expect(raw, 'the key never reaches the file').not.toContain(TEST_KEY);
    expect(raw.toLowerCase(), 'nor any header').not.toMatch(/authorization|x-api-key|127\.0\.0\.1/);
  });

  it('with no file named, writes a new one in the default folder (0700)', async () => {
    const run = await runChapter('s02', { args: ['--trace', '-p', 'hi'], replies: [reply(text('Hello.'))] });
    expect(run.code, run.stderr).toBe(0);
    const root = join(run.home, '.learn-agent-harness', 'traces');
    const [folder] = readdirSync(root);
    expect(folder).toMatch(/^.+-[0-9a-f]{8}$/);
    const [name] = readdirSync(join(root, folder));
    expect(name).toMatch(/s02_tools-\d+\.jsonl$/);
    expect(mode(join(root, folder))).toBe('700');
    expect(mode(join(root, folder, name))).toBe('600');
    expect(run.stderr).toContain(join(root, folder, name));
    expect(exchanges(readTrace(join(root, folder, name)))).toHaveLength(1);
  });

  it('records every try: a 529 the SDK retried is a line of its own, with its body', async () => {
    const overloaded = httpError(529, 'Overloaded', { 'retry-after-ms': '10' });
    const run = await runChapter('s01', {
      args: ['-p', 'hi', '--trace=t.jsonl'],
      replies: [overloaded, reply(text('Made it.'))],
    });
    expect(run.code, run.stderr).toBe(0);
    const [first, second] = exchanges(readTrace(join(run.workspace, 't.jsonl')));
    expect(first).toMatchObject({ n: 1, try: 1, status: 529 });
    expect(first.response.error).toMatchObject({ type: 'overloaded_error', message: 'Overloaded' });
    expect(second).toMatchObject({ n: 2, try: 2, status: 200 });
    expect(second.request).toEqual(first.request);
  });

  it('records a reply cut off by an error event as far as it got, with the error', async () => {
    const cut: Reply = { content: [text('Half an answer'), text('never sent')], errorAfterBlocks: 1 };
    const run = await runChapter('s01', { args: ['-p', 'hi', '--trace=t.jsonl'], replies: [cut] });
    expect(run.code).toBe(1);
    const [only] = exchanges(readTrace(join(run.workspace, 't.jsonl')));
    expect(only.status).toBe(200);
    expect(only.error).toMatch(/Overloaded/);
    expect(JSON.stringify(only.response)).toContain('Half an answer');
  });

  it('records a reply that Ctrl+C stopped as far as it got, and what stopped it', async () => {
    const slow: Reply = { content: [text('First words. '.repeat(40))], eventDelayMs: 100 };
    const run = await runChapter('s04', {
      args: ['-p', 'hi', '--trace=t.jsonl'],
      replies: [slow],
      signalWhen: { after: /Working out/, signal: 'SIGINT' }, // the thinking, on stderr
    });
    expect(run.code).toBe(130);
    const [only] = exchanges(readTrace(join(run.workspace, 't.jsonl')));
    expect(only).toMatchObject({ status: 200, error: expect.stringMatching(/abort/i) });
    // Stopped while it thought: the thinking so far is there, and no stop reason.
    expect(only.response.content[0]).toMatchObject({ type: 'thinking' });
    expect(only.response.content[0].thinking).toContain('Working out');
    expect(only.response.stop_reason).toBeNull();
    expect(only.times.done).toBeGreaterThanOrEqual(only.times.firstByte);
  });

  it('marks the requests of a sub-agent and of a compaction summary, and the compaction', async () => {
    const respond = (body: any): Reply => {
      if (body.messages[0].content === 'the task') return reply(text('REPORT'));
      if (!body.tools) return reply(text('SUMMARY of the work'));
      const last = JSON.stringify(body.messages.at(-1));
      if (last.includes('REPORT')) return reply(toolUse('compact', {}));
      if (last.includes('compacted')) return reply(text('Done.'));
      return reply(toolUse('agent', { task: 'the task' }));
    };
    const run = await runChapter('s05', { args: ['-p', 'go', '--trace=t.jsonl'], respond });
    expect(run.code, run.stderr).toBe(0);
    const lines = readTrace(join(run.workspace, 't.jsonl'));
    const [lookup, ...sent] = exchanges(lines);
    expect(lookup, 'the window, looked up first').toMatchObject({ method: 'GET', request: null });
    expect(lookup.path).toBe('/v1/models/claude-sonnet-5-5');
    expect(lookup.response.max_input_tokens).toEqual(expect.any(Number));
    expect(sent.map((e) => e.agent)).toEqual(['main', 'sub-agent', 'main', 'compaction', 'main']);
    const events = lines.filter((l) => l.type === 'event');
    expect(events.map((e) => e.event)).toEqual(['context', 'compaction']);
    expect(events[0]).toMatchObject({ exchanges: 1, window: lookup.response.max_input_tokens });
    expect(events[0].threshold).toBeLessThan(events[0].window);
    const compaction = sent.find((e) => e.agent === 'compaction')!;
    expect(events[1]).toMatchObject({ why: 'the model asked', exchanges: compaction.n });
    expect(events[1].transcript).toMatch(/\.jsonl$/);
    expect(events[1].before).toEqual(expect.any(Number));
  });

  it('cannot be written: one warning, and the turn goes on', async () => {
    const run = await runChapter('s01', {
      args: ['-p', 'hi', '--trace=blocked/t.jsonl'],
      replies: [reply(text('Answered anyway.'))],
      setup: (workspace) => writeFileSync(join(workspace, 'blocked'), 'a file, not a folder'),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Answered anyway.');
    expect(run.stderr.match(/the trace could not be written/g)).toHaveLength(1);
  });

  it('is listed in every chapter\'s help', async () => {
    const run = await runChapter('s06', { args: ['-h'] });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/--trace\[=<file>\]/);
  });
});
