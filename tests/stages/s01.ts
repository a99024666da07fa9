/**
 * s01's stages: the agent loop, in the order a builder takes it.
 *
 * Two runs (a mutant of stage k costs the runs of stages 1–k, so the long one comes last):
 *   'repl'   the REPL, four prompts, each its own turn: 1 a prompt answered with text alone
 *            (stage 1) · 2 four rounds: one call · three calls in one reply · a text and a call
 *            in a reply that says end_turn (some compatible endpoints do) · the answer (2–4) ·
 *            3 a reply that thinks and calls bash, then the answer · 4 a prompt answered at once
 *            (stage 5);
 *   'endless' a -p run where the model calls a tool in every reply; it gives up after 41 (6).
 * The scripted model answers by the prompt it is at and the rounds since, so a stage that fails
 * leaves the prompts after it to be answered as scripted.
 */
import { reply, text, thinking, toolUse, type Reply } from '../../shared/fake-anthropic.ts';
import {
  accepted,
  blocks,
  brief,
  crashIn,
  ending,
  lastLines,
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

// The REPL's prompts, and how many times the model calls a tool at the last before it gives up.
const HELLO = 'Say hello to the grader.';
const ANSWER = 'Hello, grader.';
const PROMPT = 'Run the commands.';
const ONE = { command: 'echo stage-$((6*7))' };
const THREE = ['first', 'second', 'third'];
const LATE = 'echo late >late.txt';
const FIRST = 'First prompt.';
const SECOND = 'Second prompt.';
const ENDLESS = 'Keep going.';
const GIVE_UP_AFTER = 41;

/** The text of the latest prompt typed: the last user message that is not only tool results. */
function latestPrompt(messages: any[]): { text: string; at: number } {
  for (let at = messages.length - 1; at >= 0; at--) {
    const { role, content } = messages[at];
    if (role !== 'user') continue;
    if (typeof content === 'string') return { text: content, at };
    const typed = (content as any[]).find((b) => b?.type === 'text');
    if (typed && !(content as any[]).some((b) => b?.type === 'tool_result')) {
      return { text: typed.text, at };
    }
  }
  return { text: '', at: -1 };
}

/** The scripted model of the REPL run: what it answers depends on the prompt it is at. */
function replAnswer(body: any): Reply {
  const { text: prompt, at } = latestPrompt(body.messages);
  const rounds = body.messages.length - 1 - at; // messages since the prompt: two a round
  if (prompt.includes(HELLO)) return reply(text(ANSWER));
  if (prompt.includes(PROMPT)) {
    const round = rounds / 2;
    if (round === 0) return reply(toolUse('bash', ONE, 'toolu_grade_one'));
    if (round === 1) {
      const calls = THREE.map((word, i) =>
        toolUse('bash', { command: `echo ${word}` }, `toolu_grade_${i + 1}`),
      );
      return reply(...calls);
    }
    if (round === 2) {
      const late = toolUse('bash', { command: LATE }, 'toolu_grade_late');
      return { content: [text('One more.'), late], stop_reason: 'end_turn' };
    }
    return reply(text('All done, grader.'));
  }
  if (prompt.includes(FIRST) && rounds === 0) {
    return reply(
      thinking('I will look first.'),
      toolUse('bash', { command: 'echo looked' }, 'toolu_grade_think'),
    );
  }
  if (prompt.includes(FIRST)) return reply(text('Looked.'));
  if (prompt.includes(SECOND)) return reply(text('Second answer.'));
  return reply(text('I give up.'));
}

const repl = (agent: Agent) =>
  agent.repl('repl', [HELLO, PROMPT, FIRST, SECOND, 'exit'], { respond: replAnswer });

/** A -p run where the model calls a tool in every reply, until it gives up after 41. */
const endless = (agent: Agent) =>
  agent.run('endless', {
    args: ['-p', ENDLESS],
    respond: (_body, { index }) =>
      index < GIVE_UP_AFTER
        ? reply(toolUse('bash', { command: 'true' }))
        : reply(text('I give up.')),
  });

/** The requests of the REPL run sent for the prompt `typed`, with their numbers (1-based). */
function requestsFor(run: RunResult, typed: string) {
  return run.requests
    .map((request, i) => ({ request, n: i + 1 }))
    .filter(({ request }) => latestPrompt(request.body?.messages ?? []).text.includes(typed));
}

/** What the terminal showed after `typed` was typed, up to the next prompt. */
function shownAfter(run: RunResult, typed: string): string | undefined {
  const at = run.stdout.indexOf(typed);
  if (at < 0) return undefined;
  return run.stdout.slice(at + typed.length).split(/\n[^\s>][^\n>]*>+ /)[0];
}

/** Why no request came for a prompt: a crash, how the run ended, or what the terminal showed. */
function noRequest(agent: Agent, run: RunResult, typed: string): string {
  const shown = shownAfter(run, typed);
  const crash = crashIn(shown ?? '');
  if (crash) return `sent no request: it crashed: ${crash}`;
  if (shown === undefined || run.timedOut || run.code !== 0) {
    return `sent no request, then ${ending(run, agent.boundMs)}`;
  }
  return `sent no request; the terminal showed: ${lastLines(shown, 2)}`;
}

/**
 * Request `i` (1-based) of those sent for the prompt `typed`, which the API accepted; if there is
 * none, the stage fails and says why.
 */
function nth(
  agent: Agent,
  run: RunResult,
  typed: string,
  i: number,
  asked: string,
  expected: string,
) {
  const sent = requestsFor(run, typed);
  const found = sent[i - 1];
  if (!found) {
    const why = sent.length
      ? `sent ${sent.length} request(s) for it`
      : noRequest(agent, run, typed);
    miss(asked, `${why}, then ${ending(run, agent.boundMs)}`, expected);
  }
  accepted(agent, run, found.n, asked, expected);
  return found.request;
}

/** The last message of a request's body. */
const lastOf = (request: any) => request.body.messages.at(-1);

export const stages: Stage[] = [
  {
    name: 'a prompt gets an answer',
    hint:
      'What does one call to client.messages.stream() need (model, max_tokens, messages), and ' +
      'where does the text of its reply go?',
    async check(agent) {
      const asked = `in the REPL, "${HELLO}"; the model answers "${ANSWER}" and calls no tool`;
      const expected = `a request that ends with the prompt, then "${ANSWER}" shown`;
      const run = await repl(agent);
      const [first] = requestsFor(run, HELLO);
      need(first, asked, noRequest(agent, run, HELLO), expected);
      accepted(agent, run, first.n, asked, expected);
      const last = first.request.body.messages.at(-1);
      need(JSON.stringify(last).includes(HELLO), asked, `sent ${shape(last)}`, expected);
      const answered = run.stdout.slice(run.stdout.indexOf(HELLO)).includes(ANSWER);
      const shown = lastLines(shownAfter(run, HELLO) ?? '', 2);
      need(answered, asked, `showed ${brief(shown)}`, expected);
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
      const run = await repl(agent);
      const second = nth(agent, run, PROMPT, 2, asked, expected);
      const results = blocks(lastOf(second), 'tool_result');
      const result = results.find((b) => b.tool_use_id === 'toolu_grade_one');
      need(result, asked, `sent ${shape(lastOf(second))}`, expected);
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
      const run = await repl(agent);
      const third = nth(agent, run, PROMPT, 3, asked, expected);
      const results = blocks(lastOf(third), 'tool_result');
      const ids = results.map((b) => b.tool_use_id).join(', ');
      need(
        ids === 'toolu_grade_1, toolu_grade_2, toolu_grade_3',
        asked,
        `sent ${shape(lastOf(third))}`,
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
        `in "${PROMPT}": a reply of text and a bash call (${LATE}) that says end_turn, ` +
        'then an answer';
      const run = await repl(agent);
      const file = join(run.workspace, 'late.txt');
      const wrote = existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
      const sent = requestsFor(run, PROMPT);
      if (wrote !== 'late') {
        const did = `sent ${sent.length} request(s) for it; late.txt was not written`;
        miss(
          asked,
          did,
          'the call run (late.txt holds "late"), its result sent, the loop going on',
        );
      }
      nth(agent, run, PROMPT, 4, asked, 'a fourth request with the result of the late call');
      const four = 'no request after the answer: 4 for this prompt in all';
      need(sent.length === 4, asked, `sent ${sent.length} requests for it`, four);
      const shown = shownAfter(run, PROMPT) ?? '';
      const answer = 'the answer shown, then the next prompt';
      need(
        shown.includes('All done, grader.'),
        asked,
        `showed ${brief(lastLines(shown, 2))}`,
        answer,
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
        `in the REPL, "${FIRST}": a reply that thinks, then calls bash; the answer; ` +
        `then "${SECOND}"`;
      const run = await repl(agent);
      const within =
        'the assistant message with the thinking blocks as they came, before the tool result';
      const [, second] = requestsFor(run, FIRST);
      const sentFirst = `sent ${requestsFor(run, FIRST).length} request(s) for the first prompt`;
      need(second, asked, `${sentFirst}, then ${ending(run, agent.boundMs)}`, within);
      accepted(agent, run, second.n, asked, within);
      const latest = second.request.body.messages.at(-2);
      need(blocks(latest, 'thinking').length > 0, asked, `sent back ${shape(latest)}`, within);
      const next = 'the second prompt sent with no thinking blocks from the turn before';
      const [third] = requestsFor(run, SECOND);
      need(third, asked, `sent no request for the second prompt`, next);
      accepted(agent, run, third.n, asked, next);
      const kept = (third.request.body.messages as any[]).flatMap((m) => blocks(m, 'thinking'));
      need(
        kept.length === 0,
        asked,
        `sent ${kept.length} thinking block(s) with the second prompt`,
        next,
      );
    },
  },
  {
    name: 'a model that never stops calling tools is stopped by a round bound',
    hint: 'What stops the loop if the model calls a tool in every reply, forever?',
    async check(agent) {
      const asked = `-p "${ENDLESS}": a model that calls bash (true) in every reply`;
      const expected = 'the loop gives up by itself within 40 rounds (s01 stops after 30)';
      // After 41 calls the model gives up, so a loop without a bound ends too, and fails here.
      const run = await endless(agent);
      const sent = run.requests.map((request, i) => ({ request, n: i + 1 }));
      const refused = sent.find(({ request }) => request.refused);
      if (refused) accepted(agent, run, refused.n, asked, expected);
      need(!run.timedOut, asked, `was still running after ${agent.boundMs / 1000} s`, expected);
      need(
        sent.length > 0,
        asked,
        `sent no request for it, then ${ending(run, agent.boundMs)}`,
        expected,
      );
      need(sent.length <= 40, asked, `called the model ${sent.length} times for it`, expected);
    },
  },
];
