import { endTurnBehaviours } from './behaviours/end-turn.ts';
import { jobBehaviours } from './behaviours/jobs.ts';
import { describe, expect, it } from 'vitest';
import { httpError, reply, text, toolUse, type Reply } from '../shared/fake-anthropic.ts';
import { loopBehaviours } from './behaviours/loop.ts';
import { runChapter, toolResults as resultsOf } from './helpers/run-chapter.ts';

loopBehaviours('s03', { offlineCommands: ['run', 'read', 'list', 'search', 'write', 'edit', 'delegate', 'history'] });
// The tool behaviours run on s02 and s06; tests/layout.test.ts proves that s03's bash.ts, workspace.ts,
// files.ts and search.ts are s02's, byte for byte (the loop behaviours cover tools.ts's dispatch).

const TASK = 'Find every TODO in src/ and report them by file.';
/** A request comes from the sub-agent when its conversation starts with the task it was given. */
const isChild = (body: any, task = TASK) => body.messages[0].content === task;
const toolNames = (body: any) => (body.tools as { name: string }[]).map((t) => t.name);

/** Route requests: the parent delegates TASK once, then finishes; `child` answers the sub-agent's requests. */
function delegating(child: (body: any, round: number) => Reply) {
  let childRound = 0;
  let parentRound = 0;
  return (body: any): Reply => {
    if (isChild(body)) return child(body, ++childRound);
    return ++parentRound === 1 ? reply(toolUse('agent', { task: TASK }, 'toolu_agent')) : reply(text('Parent is done.'));
  };
}

describe.concurrent('s03: the agent tool', () => {
  it('runs the task in a fresh context and returns only the final report to the parent', async () => {
    const run = await runChapter('s03', {
      args: ['-p', 'what is left to do?'],
      respond: delegating((_body, round) =>
        round === 1 ? reply(toolUse('bash', { command: 'echo CHILD-TOOL-OUTPUT' })) : reply(text('REPORT: 2 TODOs in src/a.ts')),
      ),
    });
    expect(run.code, run.stderr).toBe(0);
    const childRequests = run.requests.filter((r) => isChild(r.body));
    const parentRequests = run.requests.filter((r) => !isChild(r.body));
    expect(childRequests, 'the sub-agent made two calls: one tool round, one report').toHaveLength(2);

    const first = childRequests[0].body;
    expect(first.messages, 'the child starts with exactly one message: the task').toEqual([{ role: 'user', content: TASK }]);
    expect(toolNames(first), 'no agent tool for the child: no sub-agents of sub-agents').not.toContain('agent');
    expect(toolNames(first), 'the child keeps the working tools').toEqual(expect.arrayContaining(['bash', 'read_file', 'edit_file', 'grep']));
    expect(first.system, 'the child has its own system prompt').not.toEqual(parentRequests[0].body.system);
    expect(JSON.stringify(childRequests[1].body), 'the child did see its own tool output').toContain('CHILD-TOOL-OUTPUT');

    const back = parentRequests[1].body;
    const [result] = resultsOf(back);
    expect(result, 'the report comes back as the result of the agent call').toMatchObject({ tool_use_id: 'toolu_agent' });
    expect(result.is_error).toBeFalsy();
    expect(result.content).toContain('REPORT: 2 TODOs in src/a.ts');
    expect(JSON.stringify(back), 'none of the child’s tool output may enter the parent’s context').not.toContain('CHILD-TOOL-OUTPUT');

    const childLine = run.stderr.split('\n').find((l) => l.includes('$ echo CHILD-TOOL-OUTPUT'));
    expect(childLine, 'the child’s tool calls are shown (on stderr), marked as the sub-agent’s').toMatch(/^│ /);
    expect(run.stderr, 'and its token use is shown').toMatch(/sub-agent used \d+ input \+ \d+ output tokens/);
    expect(run.stdout.trim(), 'stdout holds only the parent’s answer').toBe('Parent is done.');

    // Thinking: each conversation keeps its own, and nothing of one enters the other (the fake
    // refuses a block sent after anything but what it was made after).
    const thinkingIn = (body: any) => JSON.stringify(body.messages).match(/"type":"thinking"/g) ?? [];
    expect(thinkingIn(childRequests[1].body), 'the child’s own tool round keeps its thinking').toHaveLength(2);
    expect(JSON.stringify(childRequests[1].body), 'none of the parent’s').not.toContain('what is left to do?');
    expect(thinkingIn(back), 'the parent keeps its own, and gets none of the child’s').toHaveLength(2);
    expect(run.stderr, 'a sub-agent thinks quietly').not.toContain(`[thinking] Working out how to answer: "${TASK}`);
    expect(run.stderr, 'the parent’s thinking is shown').toContain('[thinking] Working out how to answer: "what is left');
  });

  it('cuts off a sub-agent that never stops; the parent gets an is_error result and finishes', async () => {
    const run = await runChapter('s03', { args: ['-p', 'go'], respond: delegating(() => reply(toolUse('bash', { command: 'true' }))) });
    expect(run.code, run.stderr).toBe(0);
    const childCalls = run.requests.filter((r) => isChild(r.body)).length;
    expect(childCalls, 'the sub-agent has a lower round bound than the main loop (about 20)').toBeLessThanOrEqual(25);
    expect(childCalls).toBeGreaterThanOrEqual(5);
    const [result] = resultsOf(run.requests.at(-1)!.body);
    expect(result, 'a runaway child comes back as an error the parent can read').toMatchObject({ tool_use_id: 'toolu_agent', is_error: true });
    expect(result.content).toMatch(new RegExp(`stopped after ${childCalls} rounds`));
    expect(run.stdout).toContain('Parent is done.');
  });

  it('caps a huge report before the parent sees it', async () => {
    const huge = 'x'.repeat(30_000);
    const run = await runChapter('s03', { args: ['-p', 'go'], respond: delegating(() => reply(text(huge))) });
    const [result] = resultsOf(run.requests.at(-1)!.body);
    expect(result.content.length, 'about 5,000 characters reach the parent, not 30,000').toBeLessThan(5_200);
    expect(result.content, 'with a note that it was cut').toMatch(/cut/);
  });

  it('returns no report, rather than an earlier remark, when the final reply was cut off', async () => {
    const run = await runChapter('s03', {
      args: ['-p', 'go'],
      respond: delegating((_b, round) =>
        round === 1
          ? reply(text('Let me look around first.'), toolUse('bash', { command: 'true' }))
          : { content: [toolUse('bash', { command: 'true' })], stop_reason: 'max_tokens' },
      ),
    });
    const [result] = resultsOf(run.requests.at(-1)!.body);
    expect(result.content, 'a remark from round 1 is not an answer').not.toContain('Let me look around first.');
    expect(result.content).toContain('no report');
  });

  it('turns an API error inside the sub-agent into a readable is_error result; the parent goes on', async () => {
    const run = await runChapter('s03', {
      args: ['-p', 'go'],
      respond: delegating(() => httpError(529, 'child overloaded', { 'x-should-retry': 'false' })),
    });
    expect(run.code, 'the parent must survive its child’s failure').toBe(0);
    const [result] = resultsOf(run.requests.at(-1)!.body);
    expect(result).toMatchObject({ tool_use_id: 'toolu_agent', is_error: true });
    expect(result.content, 'one readable line, not a raw error object').toBe('Error: the sub-agent failed: API error 529: child overloaded');
    expect(run.stderr, 'the sub-agent’s closing line is printed even when it failed').toMatch(/└ sub-agent used/);
  });

  it('refuses an empty task before sending anything', async () => {
    const run = await runChapter('s03', {
      args: ['-p', 'go'],
      replies: [reply(toolUse('agent', { task: '  \n ' }, 'toolu_empty')), reply(text('ok'))],
    });
    expect(run.requests, 'no request for the child: the API would refuse a whitespace-only message').toHaveLength(2);
    const [result] = resultsOf(run.requests[1].body);
    expect(result).toMatchObject({ tool_use_id: 'toolu_empty', is_error: true, content: expect.stringMatching(/task is empty/) });
  });

  it('says when a sub-agent did not finish normally (a refusal) instead of passing its words on as a report', async () => {
    const run = await runChapter('s03', {
      args: ['-p', 'go'],
      respond: delegating(() => ({ content: [text('I will not do that.')], stop_reason: 'refusal' })),
    });
    const [result] = resultsOf(run.requests.at(-1)!.body);
    expect(result, 'a refused task is an error for the parent').toMatchObject({ tool_use_id: 'toolu_agent', is_error: true });
    expect(result.content).toMatch(/did not finish normally \(stop_reason: refusal\)[\s\S]*I will not do that\./);
  });

  it('refuses an agent call made by the sub-agent itself', async () => {
    const run = await runChapter('s03', {
      args: ['-p', 'go'],
      respond: delegating((_b, round) => (round === 1 ? reply(toolUse('agent', { task: 'nested' })) : reply(text('ok')))),
    });
    const second = run.requests.filter((r) => isChild(r.body))[1].body;
    expect(resultsOf(second)[0], 'a sub-agent must not start sub-agents').toMatchObject({ is_error: true, content: expect.stringMatching(/unknown tool "agent"/) });
    expect(run.requests.some((r) => r.body.messages[0].content === 'nested'), 'no nested sub-agent was started').toBe(false);
  });

  it('runs two agent calls from one reply one at a time, in order', async () => {
    const order: string[] = [];
    const run = await runChapter('s03', {
      args: ['-p', 'go'],
      respond: (body) => {
        const first = body.messages[0].content;
        if (first === 'task A' || first === 'task B') {
          order.push(first);
          return body.messages.length === 1 ? reply(toolUse('bash', { command: `echo ${first}` })) : reply(text(`${first} done`));
        }
        return body.messages.length === 1
          ? reply(toolUse('agent', { task: 'task A' }, 'toolu_a'), toolUse('agent', { task: 'task B' }, 'toolu_b'))
          : reply(text('both done'));
      },
    });
    expect(order, 'sub-agents may change the workspace, so the second starts after the first has finished').toEqual(['task A', 'task A', 'task B', 'task B']);
    expect(resultsOf(run.requests.at(-1)!.body).map((r: any) => r.content)).toEqual(['task A done', 'task B done']);
  });

  it('works offline: "delegate run …" goes through a sub-agent', async () => {
    const run = await runChapter('s03', { offline: true, args: ['-p', 'delegate run echo from-the-child'] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/┌ sub-agent: run echo from-the-child/);
    expect(run.stderr).toMatch(/│ \$ echo from-the-child/);
  });
});

jobBehaviours('s03', { ctrlC: 'exits' });
endTurnBehaviours('s03', { subagent: true });
