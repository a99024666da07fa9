/**
 * s01's stages: the agent loop, in the order a builder takes it.
 * Scripted conversations are shared by key: the stages 2–4 read one run of four rounds.
 */
import { reply, text, thinking, toolUse } from '../../shared/fake-anthropic.ts';
import {
  accepted,
  blocks,
  brief,
  ended,
  miss,
  need,
  resultText,
  shape,
  type Agent,
  type Stage,
} from './stage.ts';
import type { RunResult } from '../helpers/run-chapter.ts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const PROMPT = 'Say hello to the grader.';
const ANSWER = 'Hello, grader.';

/** One prompt, one reply of text alone. */
const answer = (agent: Agent) =>
  agent.run('answer', { args: ['-p', PROMPT], replies: [reply(text(ANSWER))] });

// Four rounds: one call · three calls in one reply · a text and a call in a reply that says
// end_turn (some compatible endpoints do) · the answer.
const ONE = { command: 'echo stage-$((6*7))' };
const THREE = ['first', 'second', 'third'];
const tools = (agent: Agent) =>
  agent.run('tools', {
    args: ['-p', 'Run the commands.'],
    replies: [
      reply(toolUse('bash', ONE, 'toolu_grade_one')),
      reply(
        ...THREE.map((word, i) =>
          toolUse('bash', { command: `echo ${word}` }, `toolu_grade_${i + 1}`),
        ),
      ),
      {
        content: [
          text('One more.'),
          toolUse('bash', { command: 'echo late > late.txt' }, 'toolu_grade_late'),
        ],
        stop_reason: 'end_turn',
      },
      reply(text('All done, grader.')),
    ],
  });

/** The last message of request `n`'s body. */
const lastMessage = (run: RunResult, n: number) => run.requests[n - 1].body.messages.at(-1);

export const stages: Stage[] = [
  {
    name: 'a prompt gets an answer',
    hint:
      'What does one call to client.messages.stream() need (model, max_tokens, messages), and ' +
      'where does the text of its reply go once the stream ends?',
    async check(agent) {
      const asked = `-p "${PROMPT}"; the model answers "${ANSWER}" and calls no tool`;
      const run = await answer(agent);
      const first = accepted(agent, run, 1, asked, 'one request whose last message is the prompt');
      const said = JSON.stringify(first.body.messages.at(-1) ?? null);
      need(
        said.includes(PROMPT),
        asked,
        `sent ${shape(first.body.messages.at(-1))}`,
        'the prompt as the last user message',
      );
      ended(agent, run, asked, 'the answer on stdout, then exit code 0');
      need(
        run.stdout.includes(ANSWER),
        asked,
        `printed ${brief(run.stdout.trim() || '(nothing)')} on stdout`,
        `"${ANSWER}" on stdout`,
      );
    },
  },
  {
    name: 'a bash call runs, and its output goes back with the call’s id',
    hint:
      'After a reply with a tool_use block, what must the next request end with, and how does ' +
      'the API know which call a result answers?',
    async check(agent) {
      const asked = `the model called bash ${brief(ONE)} (id toolu_grade_one)`;
      const expected = 'a user message with a tool_result for toolu_grade_one holding "stage-42"';
      const run = await tools(agent);
      accepted(agent, run, 2, asked, expected);
      const results = blocks(lastMessage(run, 2), 'tool_result');
      const result = results.find((b) => b.tool_use_id === 'toolu_grade_one');
      need(result, asked, `sent ${shape(lastMessage(run, 2))}`, expected);
      need(
        resultText(result).includes('stage-42'),
        asked,
        `sent the result ${brief(resultText(result))}`,
        expected,
      );
    },
  },
  {
    name: 'several calls in one reply are answered in one message, in order',
    hint:
      'A reply can hold several tool_use blocks. How many user messages answer them, and in ' +
      'what order?',
    async check(agent) {
      const asked = 'one reply with three bash calls: echo first, echo second, echo third';
      const expected =
        'one user message: tool_result ×3 for toolu_grade_1, _2, _3 with first, second, third';
      const run = await tools(agent);
      accepted(agent, run, 3, asked, expected);
      const results = blocks(lastMessage(run, 3), 'tool_result');
      const ids = results.map((b) => b.tool_use_id).join(', ');
      need(
        ids === 'toolu_grade_1, toolu_grade_2, toolu_grade_3',
        asked,
        `sent ${shape(lastMessage(run, 3))}`,
        expected,
      );
      const texts = results.map(resultText);
      need(
        THREE.every((word, i) => texts[i].includes(word)),
        asked,
        `sent the results ${texts.map((t) => brief(t, 40)).join(', ')}`,
        expected,
      );
    },
  },
  {
    name: 'the turn ends when a reply calls no tool',
    hint:
      'stop_reason says "end_turn" on a reply that still calls a tool (some endpoints do). What ' +
      'in the reply itself tells the loop whether to go round again?',
    async check(agent) {
      const asked =
        'a reply of text and a bash call (echo late > late.txt) that says end_turn, then an answer';
      const run = await tools(agent);
      const file = join(run.workspace, 'late.txt');
      const wrote = existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
      if (wrote !== 'late') {
        const did =
          run.requests.length < 4
            ? `sent ${run.requests.length} requests; late.txt was not written`
            : 'did not write late.txt';
        miss(
          asked,
          did,
          'the call run (late.txt holds "late"), its result sent, the loop going on',
        );
      }
      accepted(agent, run, 4, asked, 'a fourth request with the result of the late call');
      need(
        run.requests.length === 4,
        asked,
        `sent ${run.requests.length} requests`,
        'no request after the answer: 4 in all',
      );
      ended(agent, run, asked, 'the answer on stdout, then exit code 0');
      need(
        run.stdout.includes('All done, grader.'),
        asked,
        `printed ${brief(run.stdout.trim())}`,
        'the final answer on stdout',
      );
    },
  },
  {
    name: 'a model that never stops calling tools is stopped by a round bound',
    hint: 'What stops the loop if the model calls a tool in every reply, forever?',
    async check(agent) {
      const asked = 'a model that calls bash (true) in every reply';
      const expected = 'the loop gives up by itself within 40 rounds (s01 stops after 30)';
      // After 41 calls the model gives up, so a loop without a bound ends too, and fails here.
      const run = await agent.run('endless', {
        args: ['-p', 'Keep going.'],
        respond: (_body, { index }) =>
          index < 41 ? reply(toolUse('bash', { command: 'true' })) : reply(text('I give up.')),
      });
      const refused = run.requests.find((r) => r.refused);
      if (refused) accepted(agent, run, run.requests.indexOf(refused) + 1, asked, expected);
      need(!run.timedOut, asked, `was still running after ${agent.boundMs / 1000} s`, expected);
      need(
        run.requests.length <= 40,
        asked,
        `called the model ${run.requests.length} times`,
        expected,
      );
    },
  },
  {
    name: 'thinking goes back within a turn, and is dropped at the next',
    hint:
      'A reply’s thinking blocks are signed and bound to the conversation. What must the next ' +
      'request of the same turn send back, and what does a new prompt start without?',
    async check(agent) {
      const asked =
        'in the REPL: a reply that thinks, then calls bash; the answer; then a second prompt';
      const run = await agent.repl('thinking', ['First prompt.', 'Second prompt.', 'exit'], {
        replies: [
          reply(
            thinking('I will look first.'),
            toolUse('bash', { command: 'echo looked' }, 'toolu_grade_think'),
          ),
          reply(text('Looked.')),
          reply(text('Second answer.')),
        ],
      });
      const within =
        'the assistant message with the thinking blocks as they came, before the tool result';
      const second = accepted(agent, run, 2, asked, within);
      const latest = second.body.messages.at(-2);
      need(blocks(latest, 'thinking').length > 0, asked, `sent back ${shape(latest)}`, within);
      const next = 'the second prompt sent with no thinking blocks from the turn before';
      const third = accepted(agent, run, 3, asked, next);
      const kept = (third.body.messages as any[]).flatMap((m) => blocks(m, 'thinking'));
      need(
        kept.length === 0,
        asked,
        `sent ${kept.length} thinking block(s) with the second prompt`,
        next,
      );
    },
  },
];
