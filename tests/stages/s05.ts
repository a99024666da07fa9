/**
 * s05's stages: context compaction, in the order a builder takes it. All five read ONE REPL run:
 *
 *   1. "Count with seq."  a reply of four calls of 4,900 characters of output, then two replies of
 *      one, then one of three calls of 9,940: past the window's threshold, so the agent compacts
 *      on its own before the fifth request; then the answer.
 *   2. "Tidy up the context."  one reply: echo, the compact tool (with a focus), echo; the answer.
 *   3. "/compact keep the file list": a summary of it all, on request; no turn.
 *   4. "Count once more."  two calls, a reply each; the API answers the next request "prompt is too
 *      long"; the retry must fit under the maximum it named.
 *
 * What the stages rely on beyond the common contract (tests/stages/stage.ts):
 * - The window: 20,000 tokens (small: s05 keeps half of it free for the reply and the margin). The
 *   fake's Models API says so (max_input_tokens), and so does CONTEXT_WINDOW: a build may read
 *   either. The context stays under 40% of it up to the fourth request and passes 65% with the
 *   fourth reply's results; after the summary, about 45%.
 * - Results the model has read go out as short placeholders that name the call (its command),
 *   past the newest few: by the fourth request (five results read) the first has, and it is sent
 *   the same in every request after. The two newest results go out whole.
 * - A summary request is one that offers no bash tool (or says tool_choice none); its reply's text
 *   starts the next request's first message. Every other request is the loop's.
 * - The transcript: a file anywhere under HOME or the workspace that holds the replaced results
 *   whole, named by its path (from /, from ~, or from the workspace) in the message that replaced
 *   them; named from /, it holds them already when that message is first sent.
 * - "prompt is too long" is the API's 400 with its real wording, sent by the scripted model (a
 *   vendor's window smaller than the one the agent was told); the maximum it names is 1,000 tokens
 *   under that request's size.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { httpError, reply, text, toolUse, type Reply } from '../../shared/fake-anthropic.ts';
import type { RunResult } from '../helpers/run-chapter.ts';
import type { RecordedRequest } from '../../shared/fake-anthropic.ts';
import { brief, ending, miss, need, resultText, shape } from './stage.ts';
import type { Agent, Said, Stage } from './stage.ts';

/** What a stage asked, and what it expected. */
type Asked = Omit<Said, 'did'>;

const WINDOW = 20_000;
export const P1 = 'Count with seq.';
const P2 = 'Tidy up the context.';
const SLASH = '/compact keep the file list';
const P3 = 'Count once more.';
const TYPED = [P1, P2, SLASH, P3];
const TOOL_FOCUS = 'the running totals';

/** A bash call of `seq -s, from to`: one line of numbers, so it reads the same in JSON. */
interface Count {
  id: string;
  command: string;
  output: string;
}
const count = (id: string, from: number, n: number): Count => ({
  id,
  command: `seq -s, ${from} ${from + n - 1}`,
  output: Array.from({ length: n }, (_, i) => from + i).join(','),
});
// The counting: six calls of 700 numbers of 6 digits (4,900 characters), four in the first reply;
// then three of 1,420. The last counts: 1,000 each.
export const FIRST = [1, 2, 3, 4, 5, 6].map((k) =>
  count(`toolu_grade_c${k}`, k * 100_000 + 1, 700),
);
const BIG = ['a', 'b', 'c'].map((c, i) =>
  count(`toolu_grade_big${c}`, (7 + i) * 100_000 + 1, 1_420),
);
const LAST = [1, 2].map((k) => count(`toolu_grade_last${k}`, (92 + k) * 10_000 + 1, 1_000));
// The tidying: two small calls around the compact call.
const TIDY = [
  { id: 'toolu_grade_tidy1', command: 'echo tidy-one', output: 'tidy-one' },
  { id: 'toolu_grade_compact', command: '', output: '' },
  { id: 'toolu_grade_tidy2', command: 'echo tidy-two', output: 'tidy-two' },
];
/** What each call's result must hold, sent whole: by id. */
const OUTPUT = new Map([...FIRST, ...BIG, ...TIDY, ...LAST].map((c) => [c.id, c.output]));
const bash = (c: Count) => toolUse('bash', { command: c.command }, c.id);

/** One request as the scripted model saw it. */
export interface Seen {
  /** Its number among all the run's requests (1-based), as `accepted()` counts. */
  n: number;
  request: RecordedRequest;
  kind: 'summary' | 'loop';
  /** The typed line its turn started from ('' before any), and the loop requests since. */
  phase: string;
  step: number;
  reply: Reply;
  /** The ids of the tool calls in the reply. */
  calls: string[];
  /** A summary request's reply text; a "prompt is too long" reply's maximum. */
  recap?: string;
  maximum?: number;
}

/** The text of a message: its string, or its text blocks joined. */
function textOf(message: any): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return (message.content as any[]).map((b) => (b?.type === 'text' ? b.text : '')).join('\n');
}

/** The last block of the last message, if it is text: what a turn starts from. */
function lastText(body: any): string | undefined {
  const last = body.messages?.at(-1);
  if (typeof last?.content === 'string') return last.content;
  const block = last?.content?.at(-1);
  return block?.type === 'text' ? block.text : undefined;
}

const isSummary = (body: any) => {
  const tools = (body.tools as any[] | undefined) ?? [];
  return !tools.some((t) => t?.name === 'bash') || body.tool_choice?.type === 'none';
};

/**
 * The scripted model: it decides from each request alone and what came before, so the stages can
 * replay it over the recorded requests and know what it answered each one.
 */
class Script {
  private phase = '';
  private step = 0;
  private recaps = 0;
  private maximum?: number;

  next(request: RecordedRequest, n: number): Seen {
    const { body, inputTokens } = request;
    const seen = (kind: Seen['kind'], reply: Reply, extra: Partial<Seen> = {}): Seen => {
      const blocks = 'content' in reply ? (reply.content as any[]) : [];
      const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
      return { n, request, kind, phase: this.phase, step: this.step, reply, calls, ...extra };
    };
    if (isSummary(body)) {
      const recap = `RECAP-${++this.recaps}: the work so far, in short.`;
      return seen('summary', reply(text(recap)), { recap });
    }
    const typed = lastText(body);
    if (typed !== undefined && TYPED.includes(typed)) [this.phase, this.step] = [typed, 0];
    else this.step++;
    const { phase, step } = this;
    if (phase === P1) {
      if (step === 0) return seen('loop', reply(...FIRST.slice(0, 4).map(bash)));
      if (step < 3) return seen('loop', reply(bash(FIRST[step + 3])));
      if (step === 3) return seen('loop', reply(...BIG.map(bash)));
      return seen('loop', reply(text('Counted.')));
    }
    if (phase === P2) {
      if (step > 0) return seen('loop', reply(text('Tidied.')));
      const compact = toolUse('compact', { focus: TOOL_FOCUS }, TIDY[1].id);
      return seen('loop', reply(bash(TIDY[0]), compact, bash(TIDY[2])));
    }
    if (phase === P3) {
      if (step < 2) return seen('loop', reply(bash(LAST[step])));
      this.maximum ??= inputTokens - 1_000;
      if (inputTokens <= this.maximum) return seen('loop', reply(text('Counted again.')));
      const said = `prompt is too long: ${inputTokens} tokens > ${this.maximum} maximum`;
      return seen('loop', httpError(400, said), { maximum: this.maximum });
    }
    if (phase === SLASH) return seen('loop', reply(text('That is a command for the agent.')));
    return seen('loop', reply(text('Ok.')));
  }
}

/** Whether a file holds the counting's results whole, as a transcript of them does. */
function holdsCounts(file: string): boolean {
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return false;
  const content = readFileSync(file, 'utf8');
  return content.includes(FIRST[0].output) && content.includes(FIRST[5].output);
}

/**
 * The files that the first message of a request names by an absolute path, and that held the
 * counting's results when the request came: a transcript named there was saved before it was sent.
 */
const onDisk = new WeakMap<RecordedRequest, Set<string>>();
function noteFiles(request: RecordedRequest): void {
  const paths = textOf(request.body.messages?.[0]).match(/\/[^\s"'`()[\]<>,;]+/g) ?? [];
  const files = paths.map((p) => p.replace(/[.:]+$/, ''));
  onDisk.set(request, new Set(files.filter(holdsCounts)));
}

/** The one scripted REPL run all five stages read (exported for s05's own checks on it). */
export const compaction = (agent: Agent) => {
  const script = new Script();
  return agent.repl('compaction', [...TYPED, 'exit'], {
    fake: { contextWindow: WINDOW },
    env: { CONTEXT_WINDOW: String(WINDOW) },
    // This request is the last recorded; its number counts them all, as replay() does.
    respond: (_body, { requests }) => {
      const request = requests.at(-1)!;
      noteFiles(request);
      return script.next(request, requests.length).reply;
    },
  });
};

/** The run's Messages API requests that the model answered, as it saw them; in order. */
export function replay(run: RunResult): Seen[] {
  const script = new Script();
  const out: Seen[] = [];
  run.requests.forEach((request, i) => {
    if (request.path !== '/v1/messages' || request.refused) return;
    out.push(script.next(request, i + 1));
  });
  return out;
}

/** Every block of every message of a request. */
const allBlocks = (request: RecordedRequest): any[] =>
  (request.body.messages as any[]).flatMap((m) => (typeof m.content === 'string' ? [] : m.content));

/** The tool_result blocks of a request, by id: the text sent. */
function resultsOf(request: RecordedRequest): Map<string, string> {
  const results = allBlocks(request).filter((b) => b?.type === 'tool_result');
  return new Map(results.map((b) => [b.tool_use_id, resultText(b)]));
}

/** Every tool id a request holds, in calls or results. */
const idsIn = (request: RecordedRequest) =>
  new Set(
    allBlocks(request)
      .map((b) => b?.id ?? b?.tool_use_id)
      .filter(Boolean),
  );

/**
 * The first loop request after `seen[i]`. If there is none, or the API refused one before it, the
 * stage fails and says so.
 */
function loopAfter(agent: Agent, run: RunResult, seen: Seen[], i: number, said: Asked): Seen {
  const { asked, expected } = said;
  const loop = seen.slice(i + 1).find((s) => s.kind === 'loop');
  const between = run.requests.slice(seen[i].n, loop ? loop.n - 1 : undefined);
  const refused = between.find((r) => r.refused);
  if (refused || !loop) miss(asked, missing(agent, run, seen[i].n), expected);
  return loop;
}

/** Why request `n` is not there: refused (with the API's words), or how the run ended. */
function missing(agent: Agent, run: RunResult, after: number): string {
  const refused = run.requests.slice(after).find((r) => r.refused);
  if (refused) {
    const k = run.requests.indexOf(refused) + 1;
    const { status, message } = refused.refused!;
    return `sent request ${k}, which the API refuses: ${status} ${message}`;
  }
  const end = run.timedOut || run.code !== 0 ? `; the REPL ${ending(run, agent.boundMs)}` : '';
  return `sent no request after request ${after}${end}`;
}

/** Files under a folder (a few levels deep, a bounded number), for the transcript. */
function filesUnder(folder: string, depth = 8, found: string[] = []): string[] {
  if (depth < 0 || found.length > 2_000 || !existsSync(folder)) return found;
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat?.isDirectory() && name !== 'node_modules') filesUnder(path, depth - 1, found);
    else if (stat?.isFile() && stat.size < 20_000_000) found.push(path);
  }
  return found;
}

const FIRST1 = `the result of ${FIRST[0].command} (4,900 characters)`;
/** "RECAP-1", the summary a request must start from. */
const recapOf = (summary: Seen) => summary.recap!.split(':')[0];
const startsFrom = (s: Seen, summary: Seen) =>
  textOf(s.request.body.messages[0]).includes(recapOf(summary));
/** A request's first messages, in one line. */
const opening = (s: Seen, n = 3) =>
  (s.request.body.messages as any[]).slice(0, n).map(shape).join(' / ');
/** The requests of a turn could not all be made: say why. */
const cut = (agent: Agent, run: RunResult, turn: Seen[]) =>
  `sent ${turn.length} requests in that turn; ${missing(agent, run, turn.at(-1)?.n ?? 0)}`;

export const stages: Stage[] = [
  {
    name: 'old tool results go out as placeholders',
    hint:
      'The model has read a result already: what must later requests still send in its place, ' +
      'so the pairing holds and the model knows what to run again? Which results stay whole?',
    async check(agent) {
      const asked = `"${P1}": a reply of four seq calls of 4,900 characters, then two of one`;
      const expected = `by request 4, ${FIRST1} sent as a short placeholder that names the command`;
      const run = await compaction(agent);
      const seen = replay(run);
      const firstSummary = seen.findIndex((s) => s.kind === 'summary');
      const before = firstSummary < 0 ? seen : seen.slice(0, firstSummary);
      const loops = before.filter((s) => s.phase === P1);
      if (loops.length < 4) {
        const early = firstSummary >= 0 && seen[firstSummary].phase === P1;
        const summarised = `sent ${loops.length} requests in the turn, then a summary request`;
        miss(asked, early ? summarised : cut(agent, run, loops), expected);
      }
      const placeholders = new Map<string, string>();
      for (const { n, request } of loops) {
        const results = resultsOf(request);
        const ids = [...results.keys()];
        for (const [i, id] of ids.entries()) {
          const sent = results.get(id)!;
          const output = OUTPUT.get(id) ?? '';
          const whole = sent.includes(output);
          // The newest result (not seen yet) and the one the model has just read go whole.
          if (i >= ids.length - 2) {
            const did = `request ${n} sent a new result shortened: ${brief(sent, 80)}`;
            need(whole, asked, did, 'the newest results sent whole');
            continue;
          }
          const was = placeholders.get(id);
          if (was !== undefined) {
            const how = whole ? 'whole again' : 'another text for';
            const did = `request ${n} sent ${how} a result it had replaced`;
            need(sent === was, asked, did, 'a placeholder, once sent, the same in later requests');
          } else if (!whole) {
            const command = FIRST.find((c) => c.id === id)?.command ?? id;
            const did = `request ${n} sent, for ${command}: ${brief(sent, 100)}`;
            need(sent.length < output.length / 2, asked, did, expected);
            need(sent.includes(command), asked, did, 'a placeholder that names the call (command)');
            placeholders.set(id, sent);
          }
        }
      }
      const fourth = loops[3];
      const first = brief(resultsOf(fourth.request).get(FIRST[0].id) ?? '(no result)', 60);
      const did = `request ${fourth.n} sent ${FIRST1} as ${first}`;
      need(placeholders.has(FIRST[0].id), asked, did, expected);
    },
  },
  {
    name: 'a summary replaces the old part, saved first to a transcript',
    hint:
      'When the context nears the window, what does the agent ask the model for, what does the ' +
      'first message of the next request hold, and where does the full text go first?',
    async check(agent) {
      const asked = `"${P1}": a fourth reply of three seq calls, past 65% of ${WINDOW} tokens`;
      const expected = 'a summary request, then a request that starts with it, not the old results';
      const run = await compaction(agent);
      const seen = replay(run);
      const i = seen.findIndex((s) => s.kind === 'summary');
      const turn = seen.filter((s) => s.phase === P1 && s.kind === 'loop');
      if (i < 0 || seen[i].phase !== P1) {
        const biggest = Math.max(0, ...turn.map((s) => s.request.inputTokens));
        const none = `asked for no summary in that turn (its biggest request: ${biggest} tokens)`;
        miss(asked, turn.length < 5 ? `${none}; ${cut(agent, run, turn)}` : none, expected);
      }
      const summary = seen[i];
      const old = JSON.stringify(summary.request.body.messages).includes(P1);
      const toSummarise = 'the old part sent to be summarised';
      need(old, asked, `sent summary request ${summary.n} without the prompt`, toSummarise);
      const after = loopAfter(agent, run, seen, i, { asked, expected });
      const head = textOf(after.request.body.messages[0]);
      const opens = `its first message holds the summary ("${recapOf(summary)}…")`;
      need(startsFrom(after, summary), asked, `sent request ${after.n}: ${opening(after)}`, opens);
      const kept = FIRST.filter((c) => idsIn(after.request).has(c.id)).map((c) => c.command);
      const still = `sent request ${after.n} still with ${kept.join(', ')}`;
      need(kept.length === 0, asked, still, 'the results before the summary left out');

      // The transcript: a file the summary message names, holding the replaced results whole.
      const files = [...filesUnder(run.home), ...filesUnder(run.workspace)];
      const holding = files.filter(holdsCounts);
      // Named as the model can find it: its path, from / or ~ or the workspace.
      const names = (f: string) => [f, `~/${relative(run.home, f)}`, relative(run.workspace, f)];
      const named = holding.filter((f) => names(f).some((name) => head.includes(name)));
      const some = holding.length ? `e.g. ~/${relative(run.home, holding[0])}` : 'none';
      const where = `files holding them whole: ${holding.length} (${some})`;
      const transcript = 'a transcript of the replaced part, whole, named in the summary message';
      const did = `named no such file in ${brief(head, 90)}; ${where}`;
      need(named.length > 0, asked, did, transcript);
      // Saved first: a file named by its absolute path was there when that request came.
      const late = named.filter((f) => head.includes(f) && !onDisk.get(after.request)?.has(f));
      const first = 'the transcript saved before the next request is sent';
      const wrote = `wrote ${basename(named[0])} after request ${after.n}`;
      need(late.length < named.length, asked, wrote, first);
    },
  },
  {
    name: 'a summary never splits a call from its result',
    hint:
      'The model is waiting for the results of its latest calls. Where can the cut between the ' +
      'summarised part and the kept part fall, and where can it not?',
    async check(agent) {
      const run = await compaction(agent);
      const seen = replay(run);
      let checked = 0;
      for (const [i, summary] of seen.entries()) {
        if (summary.kind !== 'summary') continue;
        // The calls the model made last (a reply the API refused is not one), if still open.
        const latest = seen.slice(0, i).findLast((s) => s.kind === 'loop' && !('error' in s.reply));
        if (!latest || latest.calls.length === 0) continue;
        const waits = latest.calls.join(', ');
        const asked = `a summary (request ${summary.n}) while the model waits for ${waits}`;
        const expected = 'the summary, then those calls and their results, whole, right after';
        const after = loopAfter(agent, run, seen, i, { asked, expected });
        const messages = after.request.body.messages as any[];
        const calls = (m: any) => latest.calls.some((id) => JSON.stringify(m).includes(id));
        const at = messages.findIndex((m) => m.role === 'assistant' && calls(m));
        const results = resultsOf(after.request);
        const lost = latest.calls.filter((id) => !results.get(id)?.includes(OUTPUT.get(id) ?? ''));
        const did = `sent request ${after.n}: ${opening(after, 4)}`;
        need(at >= 0, asked, `${did}, without the calls`, expected);
        const whole = `${did}; not sent whole: the result of ${lost.join(', ')}`;
        need(lost.length === 0, asked, whole, expected);
        checked++;
      }
      // Stage 2 saw one at least: the summary in the counting turn, while three results waited.
      const asked = `"${P1}": a summary while the model waits for the results of its fourth reply`;
      const none = 'asked for no summary while calls waited for their results';
      need(checked > 0, asked, none, 'a summary, then those calls and results');
    },
  },
  {
    name: 'the compact tool and /compact summarise on request',
    hint:
      'The compact tool comes among other calls: when is it safe to compact? And /compact is ' +
      'typed at the REPL: who must see it, the model or the agent?',
    async check(agent) {
      const run = await compaction(agent);
      const seen = replay(run);
      // The tool: after the reply that calls it, a summary with the model's focus, then the rest.
      const asked = `"${P2}": echo, compact {"focus":"${TOOL_FOCUS}"}, echo in one reply`;
      const expected = 'a summary request with that focus, then a request that starts with it';
      const called = seen.findIndex((s) => s.phase === P2 && s.kind === 'loop');
      if (called < 0) miss(asked, `sent no request with "${P2}"`, expected);
      const next = seen[called + 1];
      if (!next) miss(asked, missing(agent, run, seen[called].n), expected);
      const tail = shape(next.request.body.messages.at(-1));
      const no = `sent request ${next.n} (${tail}) with no summary`;
      need(next.kind === 'summary', asked, no, expected);
      const focus = JSON.stringify(next.request.body).includes(TOOL_FOCUS);
      need(focus, asked, `sent summary request ${next.n} without "${TOOL_FOCUS}"`, expected);
      const after = loopAfter(agent, run, seen, called + 1, { asked, expected });
      need(startsFrom(after, next), asked, `sent request ${after.n}: ${opening(after)}`, expected);
      const old = BIG.filter((c) => idsIn(after.request).has(c.id)).map((c) => c.id);
      const before = 'the conversation before that reply summarised';
      need(old.length === 0, asked, `sent request ${after.n} still with ${old.join(', ')}`, before);

      // /compact: no turn; the next prompt starts from the summary, the focus only asked for.
      const slash = `"${SLASH}" typed after the answer to "${P2}", then "${P3}"`;
      const wanted = 'a summary request with "keep the file list", then the next prompt after it';
      const sent = seen.find((s) => s.phase === SLASH);
      if (sent) miss(slash, `sent request ${sent.n}, "${SLASH}" as a prompt to the model`, wanted);
      const p3 = seen.findIndex((s) => s.phase === P3);
      if (p3 < 0) miss(slash, `sent no request with "${P3}"`, wanted);
      const last = seen[p3];
      const summary = seen[p3 - 1];
      const none = `sent request ${last.n} with "${P3}" after no summary`;
      need(summary?.kind === 'summary', slash, none, wanted);
      const asks = JSON.stringify(summary.request.body).includes('keep the file list');
      need(asks, slash, `sent summary request ${summary.n} without "keep the file list"`, wanted);
      const did = `sent request ${last.n}: ${opening(last)}`;
      need(startsFrom(last, summary), slash, did, wanted);
      const kept = TIDY.filter((c) => idsIn(last.request).has(c.id)).map((c) => c.id);
      need(kept.length === 0, slash, `${did}, still with ${kept.join(', ')}`, wanted);
      const leaked = JSON.stringify(last.request.body.messages).includes('keep the file list');
      const only = 'the focus in the summary request only';
      need(!leaked, slash, `sent request ${last.n} with "keep the file list" in it`, only);
    },
  },
  {
    name: '"prompt is too long" compacts, then retries',
    hint:
      'The API counts differently than your estimate and refuses a request as too long. What can ' +
      'the agent do at once, rather than end the turn, and how much must it compact?',
    async check(agent) {
      const asked = `"${P3}": two seq calls; the third request refused: "prompt is too long"`;
      const expected = 'a summary request, then the turn sent again under the maximum; its answer';
      const run = await compaction(agent);
      const seen = replay(run);
      const j = seen.findIndex((s) => s.maximum !== undefined);
      if (j < 0)
        miss(
          asked,
          cut(
            agent,
            run,
            seen.filter((s) => s.phase === P3),
          ),
          expected,
        );
      const { n, maximum, request } = seen[j];
      const size = `${request.inputTokens} tokens > ${maximum} maximum`;
      const refusal = `after request ${n} was refused (${size})`;
      const retry = seen.slice(j + 1).find((s) => s.kind === 'loop');
      if (retry?.phase !== P3) {
        const refused = run.requests.slice(n, retry?.n).some((r) => r.refused);
        miss(asked, refused ? missing(agent, run, n) : `${refusal}, ended the turn`, expected);
      }
      const compacted = seen.slice(j + 1, seen.indexOf(retry)).some((s) => s.kind === 'summary');
      const tokens = retry.request.inputTokens;
      const again = `${refusal}, sent it again (${tokens} tokens) without a summary`;
      need(compacted, asked, again, expected);
      const most = `a retry of ${maximum} tokens at most`;
      need(tokens <= maximum!, asked, `${refusal}, compacted, then sent ${tokens} tokens`, most);
      const end = `retried with ${shape(retry.request.body.messages.at(-1))} at the end`;
      const waited = `the retry ending with the result of ${LAST[1].command}`;
      need(resultsOf(retry.request).has(LAST[1].id), asked, end, waited);
      const answer = 'did not print the answer "Counted again."';
      need(run.stdout.includes('Counted again.'), asked, answer, expected);
    },
  },
];
