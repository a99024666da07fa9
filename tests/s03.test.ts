import { describe, expect, it } from 'vitest';
import { httpError, reply, text, toolUse, type Reply } from '../shared/fake-anthropic.ts';
import { loopBehaviours } from './behaviours/loop.ts';
import { runChapter, toolResults as resultsOf } from './helpers/run-chapter.ts';
import { shared } from './helpers/shared.ts';

loopBehaviours('s03', { offlineCommands: ['run', 'read', 'list', 'search', 'write', 'edit', 'delegate', 'history'], tooLongPrompt: true });
// The tool behaviours run on s02 and s06; tests/layout.test.ts proves that s03's bash.ts, workspace.ts,
// files.ts and search.ts are s02's, byte for byte (the loop behaviours cover tools.ts's dispatch).

// The grader's stages (tests/stages/s03.ts, run on s03 by tests/grade-s03.test.ts) check the agent
// tool's contract: the child starts with only its task, has every tool but agent, gives back only
// its final text (cut at a bound), is stopped by a round bound, and fails as a result. The tests
// here check what only s03 does: its messages and figures, its stderr, how it keeps the thinking.

/** A request comes from a sub-agent when its conversation starts with the task it was given. */
const isChild = (body: any, task: string) => body.messages[0].content === task;
const thinkingIn = (body: any) => JSON.stringify(body.messages).match(/"type":"thinking"/g) ?? [];

describe.concurrent('s03: nine sub-agents in one reply, most of which do not end well', () => {
  // One parent run: its first reply makes these agent calls, which run one at a time, in order; each
  // task scripts its sub-agent (by its round, 1-based). Then the parent answers.
  const CALLS: [id: string, task: string, child: (round: number) => Reply][] = [
    // A glob, not a bash command: it starts no process, in each of its 20 rounds.
    ['toolu_runaway', 'never stop', () => reply(toolUse('glob', { pattern: '*.none' }))],
    ['toolu_huge', 'report a lot', () => reply(text('x'.repeat(30_000)))],
    ['toolu_cut', 'get cut off', (round) =>
      round === 1
        ? reply(text('Let me look around first.'), toolUse('bash', { command: 'true' }))
        : { content: [toolUse('bash', { command: 'true' })], stop_reason: 'max_tokens' }],
    ['toolu_error', 'meet an API error', () => httpError(529, 'child overloaded', { 'x-should-retry': 'false' })],
    ['toolu_empty', '  \n ', () => reply(text('an empty task must never reach a sub-agent'))],
    ['toolu_refusal', 'refuse', () => ({ content: [text('I will not do that.')], stop_reason: 'refusal' })],
    ['toolu_a', 'task A', (round) => (round === 1 ? reply(toolUse('bash', { command: 'echo task A' })) : reply(text('task A done')))],
    ['toolu_b', 'task B', (round) => (round === 1 ? reply(toolUse('bash', { command: 'echo task B' })) : reply(text('task B done')))],
    // A reply that holds a complete call but says end_turn, as some compatible endpoints send.
    ['toolu_end', 'Count the files.', (round) =>
      round === 1
        ? { content: [text('Running it.'), toolUse('bash', { command: 'ls | wc -l' })], stop_reason: 'end_turn' }
        : reply(text('REPORT: 0 files'))],
  ];
  const r = shared(() =>
    runChapter('s03', {
      args: ['-p', 'go'],
      respond: (body) => {
        const call = CALLS.find(([, task]) => body.messages[0].content === task);
        if (call) return call[2](body.messages.filter((m: any) => m.role === 'assistant').length + 1);
        if (body.messages[0].content !== 'go') return httpError(500, `no script for ${JSON.stringify(body.messages[0].content)}`);
        return body.messages.length === 1
          ? reply(...CALLS.map(([id, task]) => toolUse('agent', { task }, id)))
          : reply(text('Parent is done.'));
      },
    }),
  );
  /** The requests a sub-agent sent, by its task. */
  const childRequests = (task: string) => r().requests.filter((q) => isChild(q.body, task));
  const parentRequests = () => r().requests.filter((q) => q.body.messages[0].content === 'go');
  /** The result the parent got for the agent call with this id. */
  const result = (id: string) => resultsOf(r().requests.at(-1)!.body).find((x: any) => x.tool_use_id === id);

  it('the parent gets a result for every call, in order, and finishes', () => {
    expect(r().code, r().stderr).toBe(0);
    expect(resultsOf(r().requests.at(-1)!.body).map((x: any) => x.tool_use_id)).toEqual(CALLS.map(([id]) => id));
    const only = 'stdout holds only the parent’s answer, none of the reports';
    expect(r().stdout.trim(), only).toBe('Parent is done.');
  });

  it('gives the sub-agent a system prompt of its own, and marks its lines on stderr', () => {
    const [first] = childRequests('task A');
    const own = 'the child has its own system prompt';
    expect(first.body.system, own).not.toEqual(parentRequests()[0].body.system);
    const childLine = r().stderr.split('\n').find((l) => l.includes('$ echo task A'));
    const marked = 'the child’s tool calls are shown (on stderr), marked as the sub-agent’s';
    expect(childLine, marked).toMatch(/^│ /);
    const used = /└ sub-agent used \d+ input \+ \d+ output tokens/;
    expect(r().stderr, 'and its token use is shown').toMatch(used);
  });

  it('keeps each conversation’s thinking to itself, and shows only the parent’s', () => {
    // The fake refuses a thinking block sent after anything but what it was made after.
    const child = childRequests('task A')[1].body;
    expect(thinkingIn(child), 'the child’s own tool round keeps its thinking').toHaveLength(2);
    const parent = r().requests.at(-1)!.body;
    const own = 'the parent keeps its own, and gets none of the children’s';
    expect(thinkingIn(parent), own).toHaveLength(2);
    const shown = '[thinking] Working out how to answer:';
    expect(r().stderr, 'a sub-agent thinks quietly').not.toContain(`${shown} "task A`);
    expect(r().stderr, 'the parent’s thinking is shown').toContain(`${shown} "go`);
  });

  it('says how many rounds a sub-agent that never stops was given', () => {
    const childCalls = childRequests('never stop').length;
    expect(result('toolu_runaway').content).toMatch(new RegExp(`stopped after ${childCalls} rounds`));
  });

  it('caps a huge report before the parent sees it', () => {
    expect(result('toolu_huge').content.length, 'about 5,000 characters reach the parent, not 30,000').toBeLessThan(5_200);
    expect(result('toolu_huge').content, 'with a note that it was cut').toMatch(/cut/);
  });

  it('returns no report, rather than an earlier remark, when the final reply was cut off', () => {
    expect(result('toolu_cut').content, 'a remark from round 1 is not an answer').not.toContain('Let me look around first.');
    expect(result('toolu_cut').content).toContain('no report');
  });

  it('turns an API error inside the sub-agent into one readable line, and closes its box', () => {
    const line = 'Error: the sub-agent failed: API error 529: child overloaded';
    expect(result('toolu_error').content, 'one readable line, not a raw error object').toBe(line);
    const opened = r().stderr.match(/┌ sub-agent/g) ?? [];
    const closed = r().stderr.match(/└ sub-agent/g) ?? [];
    expect(closed.length, 'every sub-agent’s closing line is printed, the failed one’s too').toBe(opened.length);
    expect(r().stderr, 'one that got no reply names no tokens').not.toMatch(/used 0 input \+ 0 output/);
    expect(r().stderr).toMatch(/└ sub-agent got no reply/);
  });

  it('refuses an empty task before sending anything', () => {
    expect(result('toolu_empty')).toMatchObject({ is_error: true, content: expect.stringMatching(/task is empty/) });
    const blank = r().requests.filter((q) => typeof q.body.messages[0].content === 'string' && !q.body.messages[0].content.trim());
    expect(blank, 'no request for the child: the API would refuse a whitespace-only message').toEqual([]);
  });

  it('says when a sub-agent did not finish normally (a refusal) instead of passing its words on as a report', () => {
    expect(result('toolu_refusal'), 'a refused task is an error for the parent').toMatchObject({ is_error: true });
    expect(result('toolu_refusal').content).toMatch(/did not finish normally \(stop_reason: refusal\)[\s\S]*I will not do that\./);
  });

  it('runs the agent calls of one reply one at a time, in order', () => {
    const order = r().requests.map((q) => q.body.messages[0].content).filter((task) => task !== 'go');
    const runs = order.filter((task, i) => task !== order[i - 1]); // each sub-agent's requests, as one
    const started = CALLS.map(([, task]) => task).filter((task) => task.trim());
    expect(runs, 'sub-agents may change the workspace, so each starts after the one before has finished').toEqual(started);
    expect([result('toolu_a').content, result('toolu_b').content]).toEqual(['task A done', 'task B done']);
  });

  it('runs the calls of a reply that says end_turn in a sub-agent too: its parent gets the report, not "no report"', () => {
    expect(childRequests('Count the files.'), 'the call was run, and its result sent back').toHaveLength(2);
    expect(result('toolu_end').content, 'the sub-agent ran its call, then reported').toContain('REPORT: 0 files');
  });
});

describe('s03: the agent tool offline', () => {
  it('works offline: "delegate run …" goes through a sub-agent', async () => {
    const run = await runChapter('s03', { offline: true, args: ['-p', 'delegate run echo from-the-child'] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/┌ sub-agent: run echo from-the-child/);
    expect(run.stderr).toMatch(/│ \$ echo from-the-child/);
  });
});
