/**
 * s03's stages: the sub-agent, in the order a builder takes it. Stages 1–4 read ONE scripted
 * conversation (the key 'delegate'); the last, a child that never stops, a run of its own
 * ('endless'), so that only its mutant and the chapter pay for its 20 rounds.
 *
 * What the stages rely on, beyond the common contract: the `agent` tool takes `{ task }`, and the
 * tools s02 taught keep their names. A child is a conversation of its own, so the scripted model
 * tells it from the parent by its first message: the parent's holds the prompt, a child's its
 * task (and its tools lack `agent`, which stage 2 checks). The parent's rounds:
 *   1. agent LOOK, agent LONG, agent NEST   (stages 1–3 read these children and the results)
 *   2. agent FAIL                           (stage 4: a child whose request fails)
 *   3. the final answer
 * and in 'endless': 1. agent ENDLESS (stage 5: a child that never stops calling tools) 2. the
 * final answer.
 * The calls of round 1 may run one after another or side by side; nothing here reads the order.
 */
import { httpError, reply, text, toolUse, type Reply } from '../../shared/fake-anthropic.ts';
import type { RecordedRequest } from '../../shared/fake-anthropic.ts';
import type { RunResult } from '../helpers/run-chapter.ts';
import {
  blocks,
  brief,
  ended,
  ending,
  miss,
  need,
  resultText,
  shape,
  type Agent,
  type Said,
  type Stage,
} from './stage.ts';

const PROMPT = 'Hand the digging to helpers, then sum up.';
const FINAL = 'All the delegated work is in.';

// The tasks. None holds another, so a request's first message names one task at most.
const LOOK = 'Run the marker command with bash and report what you found.';
const LONG = 'Write the longest report you can.';
const NEST = 'Ask a helper of your own to count the files.';
const NESTED = 'Count the files, as a helper of a helper.';
const ENDLESS = 'Keep checking the build, and never stop.';
const FAIL = 'Check the disk (this request of yours will fail).';

// What the LOOK child sees (its bash output), says on the way (a remark) and reports at the end.
const SEEN = 'child-saw-42';
const REMARK = 'Let me check once more before I report.';
const REPORT = 'The marker is there, and nothing else needs doing.';
// About 12,000 characters (some 3,000 tokens: within any sensible max_tokens).
const LONG_START = 'LONG-REPORT-START';
const LONG_TEXT = `${LONG_START} ${'one more line of a very long report. '.repeat(320)}`;
const REPORT_BOUND = 10_000; // characters of a report the parent may get (s03 keeps 5,000)
const ROUND_BOUND = 40; // model calls a child may make (s03 allows 20, the parent 30)
const WORKING = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep']; // s02's tools

/** A child's reply in its round `round` (1-based), by its task. */
const CHILDREN: Record<string, (round: number) => Reply> = {
  [LOOK]: (round) =>
    round === 1
      ? reply(toolUse('bash', { command: 'echo child-saw-$((6*7))' }, 'toolu_grade_seen'))
      : round === 2
        ? reply(text(REMARK), toolUse('glob', { pattern: '*.md' }, 'toolu_grade_again'))
        : reply(text(REPORT)),
  [LONG]: () => reply(text(LONG_TEXT)),
  [NEST]: (round) =>
    round === 1
      ? reply(toolUse('agent', { task: NESTED }, 'toolu_grade_nested'))
      : reply(text('No helper of my own, then: 0 files counted.')),
  [NESTED]: () => reply(text('A helper of a helper, at your service.')),
  // After 41 calls the model gives up, so a child without a bound ends too, and fails stage 5.
  // Its calls are globs: a bash command would start a process every round.
  [ENDLESS]: (round) =>
    round <= ROUND_BOUND
      ? reply(toolUse('glob', { pattern: 'build-*' }))
      : reply(text('I give up.')),
  [FAIL]: () => httpError(529, 'Overloaded', { 'x-should-retry': 'false' }),
};

/** The parent's reply in its round `round`. */
function parent(round: number): Reply {
  const call = (task: string, id: string) => toolUse('agent', { task }, id);
  if (round === 1) {
    return reply(
      call(LOOK, 'toolu_grade_look'),
      call(LONG, 'toolu_grade_long'),
      call(NEST, 'toolu_grade_nest'),
    );
  }
  if (round === 2) return reply(call(FAIL, 'toolu_grade_fail'));
  return reply(text(FINAL));
}

/** The parent's reply in its round `round`, in the run of the child that never stops. */
function endlessParent(round: number): Reply {
  if (round === 1) return reply(toolUse('agent', { task: ENDLESS }, 'toolu_grade_endless'));
  return reply(text(FINAL));
}

/** A message's text: its string content, or its text blocks joined (tool results left out). */
function textOf(message: any): string {
  if (typeof message?.content === 'string') return message.content;
  return blocks(message, 'text')
    .map((b) => b.text ?? '')
    .join('\n');
}

/** The round a conversation is in: one more than the replies it holds. */
const roundOf = (body: any) => body.messages.filter((m: any) => m.role === 'assistant').length + 1;

/**
 * The scripted model: the parent's replies (`parent`) to a request whose first message holds the
 * prompt, a child's to one whose first message holds its task. A later chapter may add to the
 * first message (s06 adds context), so "holds", not "is".
 */
const respondWith = (parent: (round: number) => Reply) => (body: any) => {
  const first = textOf(body.messages[0]);
  if (first.includes(PROMPT)) return parent(roundOf(body));
  const task = Object.keys(CHILDREN).find((t) => first.includes(t));
  return task ? CHILDREN[task](roundOf(body)) : reply(text('I was given no task I know.'));
};

const delegate = (agent: Agent) =>
  agent.run('delegate', { args: ['-p', PROMPT], respond: respondWith(parent) });
const endless = (agent: Agent) =>
  agent.run('endless', { args: ['-p', PROMPT], respond: respondWith(endlessParent) });

/** The requests of the child given `task`: those with a user message that holds the task. */
function childRequests(run: RunResult, task: string): RecordedRequest[] {
  const says = (m: any) => m.role === 'user' && textOf(m).includes(task);
  return run.requests.filter((r) => r.body.messages.some(says));
}

/**
 * The parent's request `n` (1-based), which the API accepted; if there is none, the stage fails
 * and says how the run stopped before it.
 */
function parentAt(agent: Agent, run: RunResult, n: number, asked: string, expected: string) {
  const own = run.requests.filter((r) => textOf(r.body.messages[0]).includes(PROMPT));
  const request = own[n - 1];
  if (request?.refused) {
    const { status, message } = request.refused;
    const did = `sent the parent’s request ${n}, which the API refuses: ${status} ${message}`;
    miss(asked, did, expected);
  }
  if (!request) {
    const sent = `sent ${run.requests.length} requests (${own.length} of them the parent’s)`;
    miss(asked, `${sent}, then ${ending(run, agent.boundMs)}`, expected);
  }
  return request;
}

/** The tool_result for the call `id` in a request's last message. */
const resultFor = (request: RecordedRequest, id: string) =>
  blocks(request.body.messages.at(-1), 'tool_result').find((b) => b.tool_use_id === id);

/** What a request's last message holds for the call `id`: "the result "…"", or its shape. */
function heldFor(request: RecordedRequest, id: string): string {
  const result = resultFor(request, id);
  if (!result) return shape(request.body.messages.at(-1));
  return `the result ${brief(resultText(result), 100)}${result.is_error ? ' (is_error)' : ''}`;
}

/** What a stage asked, and what it expected. */
type Asked = Omit<Said, 'did'>;

/**
 * The first request of the child given `task` (the call `id`), which the API accepted; if there is
 * none, the stage fails and says what became of the call instead: its result, or how the run ended.
 */
function childStart(agent: Agent, run: RunResult, task: string, id: string, said: Asked) {
  const [first] = childRequests(run, task);
  if (!first) {
    const next = parentAt(agent, run, 2, said.asked, said.expected);
    const did = `started no child: the parent’s next request holds ${heldFor(next, id)}`;
    miss(said.asked, did, said.expected);
  }
  if (first.refused) {
    const { status, message } = first.refused;
    const did = `sent the child’s first request, which the API refuses: ${status} ${message}`;
    miss(said.asked, did, said.expected);
  }
  return first;
}

const toolNames = (request: RecordedRequest) =>
  ((request.body.tools ?? []) as { name: string }[]).map((t) => t.name);

/** A call as a Miss names it: agent {"task":"…"}. */
const called = (task: string) => `agent ${brief({ task }, 90)}`;

export const stages: Stage[] = [
  {
    name: 'the agent tool runs a child with only the task',
    hint:
      'A child starts a conversation of its own. What is in its messages array when it sends ' +
      'its first request, and what of the parent’s conversation must stay out?',
    async check(agent) {
      const asked = `the model called ${called(LOOK)} (id toolu_grade_look)`;
      const expected = 'a request of the child’s own, whose only message is the task, as given';
      const run = await delegate(agent);
      parentAt(agent, run, 1, asked, expected);
      const first = childStart(agent, run, LOOK, 'toolu_grade_look', { asked, expected });
      const messages = first.body.messages as any[];
      const only = messages.length === 1 && messages[0].role === 'user';
      const did = `started the child with ${messages.map(shape).join(' · ')}`;
      need(only && textOf(messages[0]).trim() === LOOK, asked, did, expected);
    },
  },
  {
    name: 'the child has no agent tool',
    hint:
      'What stops a child from handing its task to a child of its own: what is in the tools it ' +
      'is sent with, and what happens if the model calls agent anyway?',
    async check(agent) {
      const asked = `the model called ${called(LOOK)}`;
      const run = await delegate(agent);
      const parentTools = toolNames(parentAt(agent, run, 1, asked, 'the parent’s first request'));
      // The tools s02 taught stay the child's (a later chapter may keep others for the parent).
      const others = parentTools.filter((t) => WORKING.includes(t));
      const expected = `the child sent with no agent tool, and with ${others.join(', ')}`;
      const first = childStart(agent, run, LOOK, 'toolu_grade_look', { asked, expected });
      const childTools = toolNames(first);
      const did = `sent the child’s request with the tools ${childTools.join(', ') || '(none)'}`;
      need(!childTools.includes('agent'), asked, did, expected);
      need(
        others.every((t) => childTools.includes(t)),
        asked,
        did,
        expected,
      );

      // The model may call agent anyway: no child of a child starts, and the call gets an error.
      const nestAsked = `a child (task ${brief(NEST, 60)}) called ${called(NESTED)} anyway`;
      const nestExpected = 'no child of the child: the call answered with an is_error result';
      const nested = childRequests(run, NESTED).length;
      const started = `started a child of the child, which sent ${nested} request(s)`;
      need(nested === 0, nestAsked, started, nestExpected);
      const nest = childRequests(run, NEST);
      if (nest.length < 2) {
        // The child stopped after the call: say what the parent got for it instead.
        const next = parentAt(agent, run, 2, nestAsked, nestExpected);
        const got = heldFor(next, 'toolu_grade_nest');
        const did = `the child sent no request after the call; the parent got ${got}`;
        miss(nestAsked, did, nestExpected);
      }
      const result = resultFor(nest[1], 'toolu_grade_nested');
      const sent = `sent ${heldFor(nest[1], 'toolu_grade_nested')}`;
      need(result?.is_error === true, nestAsked, sent, nestExpected);
    },
  },
  {
    name: 'only the child’s final text comes back, cut at a bound',
    hint:
      'The child read and ran things the parent never needs. Which part of the child’s ' +
      'conversation becomes the agent call’s result, and how long may it be?',
    async check(agent) {
      const asked =
        `a child (call toolu_grade_look) ran bash (output "${SEEN}"), remarked ` +
        `${brief(REMARK, 30)} with one more call, then reported "${REPORT}"`;
      const expected = 'a result for toolu_grade_look holding the report, not flagged is_error';
      const run = await delegate(agent);
      const sees = 'the child’s second request with the output of its bash call';
      childStart(agent, run, LOOK, 'toolu_grade_look', { asked, expected: sees });
      const look = childRequests(run, LOOK);
      const saw = look.length >= 2 && JSON.stringify(look[1].body.messages).includes(SEEN);
      const second = look[1] ? shape(look[1].body.messages.at(-1)) : '(none)';
      need(saw, asked, `sent the child ${second}, without its bash output`, sees);

      const next = parentAt(agent, run, 2, asked, expected);
      const result = resultFor(next, 'toolu_grade_look');
      const did = `sent the parent ${heldFor(next, 'toolu_grade_look')}`;
      need(result && !result.is_error && resultText(result).includes(REPORT), asked, did, expected);
      const alone = 'the final report alone, not the remark made before it';
      need(!resultText(result).includes(REMARK), asked, did, alone);
      const leaked = `sent the parent a request that holds the child’s bash output "${SEEN}"`;
      const kept = 'nothing the child read or ran in the parent’s context';
      need(!JSON.stringify(next.body).includes(SEEN), asked, leaked, kept);

      const longAsked = `a child (${called(LONG)}) answered with ${LONG_TEXT.length} characters`;
      const longExpected =
        'a result for toolu_grade_long: the report’s start, ' +
        `at most ${REPORT_BOUND} characters`;
      const long = resultText(resultFor(next, 'toolu_grade_long'));
      const longDid = `sent ${long.length} characters as its result: ${brief(long, 60)}`;
      const cut = long.length <= REPORT_BOUND && long.includes(LONG_START);
      need(cut, longAsked, longDid, longExpected);
    },
  },
  {
    name: 'a failing child is a result, not a crash',
    hint:
      'The child’s request can fail (the API overloaded, say). Where is that error caught, and ' +
      'what does the parent’s model get for its agent call?',
    async check(agent) {
      const asked = `a child (${called(FAIL)}) whose request fails: 529 Overloaded`;
      const expected =
        'an is_error result for toolu_grade_fail, then the parent’s answer and exit code 0';
      const run = await delegate(agent);
      const next = parentAt(agent, run, 3, asked, expected);
      const result = resultFor(next, 'toolu_grade_fail');
      const did = `sent the parent ${heldFor(next, 'toolu_grade_fail')}`;
      need(result?.is_error === true, asked, did, expected);
      ended(agent, run, asked, expected);
      const printed = `printed ${brief(run.stdout.trim() || '(nothing)')} on stdout`;
      need(run.stdout.includes(FINAL), asked, printed, `"${FINAL}" on stdout`);
    },
  },
  {
    name: 'a child that never stops is stopped by a round bound, and the parent told',
    hint:
      'A child runs the same loop, for as long as its model keeps calling tools. What stops it, ' +
      'and how does the parent learn that it stopped without finishing?',
    async check(agent) {
      const asked = `a child (${called(ENDLESS)}) that calls glob in every reply`;
      const expected =
        `the child stopped within ${ROUND_BOUND} rounds, and an is_error result for ` +
        'toolu_grade_endless (it did not finish)';
      const run = await endless(agent);
      const count = childRequests(run, ENDLESS).length;
      need(count <= ROUND_BOUND, asked, `let the child call the model ${count} times`, expected);
      const next = parentAt(agent, run, 2, asked, expected);
      const result = resultFor(next, 'toolu_grade_endless');
      const did = `sent the parent ${heldFor(next, 'toolu_grade_endless')}`;
      need(result?.is_error === true, asked, did, expected);
    },
  },
];
