/**
 * Streams the real Messages API sent (tests/real-streams/: the SDK authors' recordings, see SOURCES.md
 * there), replayed through every chapter in writes that cut each multi-byte character. Each chapter
 * plays them all in one REPL session, one prompt per stream: what the reader sees must be what the API
 * sent, the text on stdout, the thinking on stderr.
 *
 * The files stay as recorded; what a test needs is changed here, in code. A recorded tool call the
 * chapter must run becomes a harmless bash call (same id, same fragments, new name and input), and
 * parrot-thinking-multiply.sse becomes a thinking-then-tool_use turn, which nobody recorded: its
 * thinking block, real signature and all, then ts-tool-use.sse's call.
 */
import Anthropic from '@anthropic-ai/sdk';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  httpError,
  recorded,
  replayCuts,
  reply,
  startFakeAnthropic,
  text,
  type RecordedRequest,
  type Reply,
} from '../shared/fake-anthropic.ts';
import { REPO, chapters, promptOf, runRepl, type RunResult } from './helpers/run-chapter.ts';
import { shared } from './helpers/shared.ts';

// ── The streams, and what each one carries ──────────────────────────────────────────────────────

const file = (name: string) => readFileSync(join(REPO, 'tests/real-streams', `${name}.sse`), 'utf8');

/** Each event's data, parsed (events without JSON data, such as a bare comment, are left out). */
function events(sse: string): any[] {
  return [...sse.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]));
}

/** What a stream carries for the reader: its text (all text deltas, in order) and each thinking block's text. */
function carried(sse: string) {
  let text = '';
  const thinking: string[] = [];
  for (const e of events(sse)) {
    if (e.type === 'content_block_start' && e.content_block.type === 'thinking') thinking.push('');
    if (e.delta?.type === 'text_delta') text += e.delta.text;
    if (e.delta?.type === 'thinking_delta') thinking[thinking.length - 1] += e.delta.thinking;
  }
  return { text, thinking };
}

/**
 * parrot-thinking-multiply.sse and py-server-tool-result.sse end without the blank line that ends an
 * event (the API ends every event with one; these lost it on the way into a test file). A client
 * drops an event that never ends (the SSE rule), so their message_stop does not count, and the SDK
 * has no message. Their plays add the blank line; one play keeps parrot as stored.
 */
const ended = (sse: string) => (sse.endsWith('\n\n') ? sse : `${sse.replace(/\n*$/, '')}\n\n`);

// ── Adapting a stream, in code ──────────────────────────────────────────────────────────────────

/**
 * The stream with some events' data changed: `edit` returns the new data, or undefined to leave the
 * line as it is, byte for byte (the API pads its data lines with spaces; an edited line keeps them).
 */
function editEvents(sse: string, edit: (data: any) => any): string {
  return sse.replace(/^data: (.*?)([ \t]*)$/gm, (line, json: string, padding: string) => {
    const edited = edit(JSON.parse(json));
    return edited === undefined ? line : `data: ${JSON.stringify(edited)}${padding}`;
  });
}

/**
 * The stream's one tool call, renamed, with `input(recorded)` as its input JSON: cut where the
 * recorded one was, in proportion, into as many fragments (the empty ones stay empty). `id`: a new id.
 */
function retool(sse: string, name: string, input: (recorded: string) => string, id?: string): string {
  const starts = events(sse).filter((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use');
  if (starts.length !== 1) throw new Error(`retool: ${starts.length} tool calls in the stream, not one`);
  const index = starts[0].index;
  const isInput = (e: any) => e.delta?.type === 'input_json_delta' && e.index === index;
  const parts = events(sse).filter(isInput).map((e) => e.delta.partial_json as string);
  const before = parts.join('');
  const after = input(before);
  let seen = 0;
  const pieces = parts.map((part) => {
    const from = Math.round((seen / before.length) * after.length);
    seen += part.length;
    return after.slice(from, Math.round((seen / before.length) * after.length));
  });
  let n = 0;
  return editEvents(sse, (e) => {
    if (e.type === 'content_block_start' && e.index === index) {
      return { ...e, content_block: { ...e.content_block, name, ...(id ? { id } : {}) } };
    }
    if (isInput(e)) return { ...e, delta: { ...e.delta, partial_json: pieces[n++] } };
    return undefined;
  });
}

const bash = (command: string) => () => JSON.stringify({ command });

/** The blocks of an SSE text, each an event, without the blank lines between them. */
const sseEvents = (sse: string) => sse.split(/\n\n+/).filter((e) => e.trim()).map((e) => e.replace(/\n+$/, ''));
const dataOf = (event: string) => JSON.parse(event.match(/^data: (.*)$/m)![1]);

/**
 * parrot-thinking-multiply.sse as a thinking-then-tool_use turn: its message_start and thinking block
 * (index 0, with its real signature), then ts-tool-use.sse's call (index 1 there too) as a bash call
 * with an id of its own, and parrot's message_delta with stop_reason "tool_use".
 */
function thinkingThenTool(command: string, id: string): string {
  const parrot = sseEvents(file('parrot-thinking-multiply'));
  const call = sseEvents(retool(file('ts-tool-use'), 'bash', bash(command), id));
  const head = parrot.filter((e) => ['message_start', 'ping'].includes(dataOf(e).type) || dataOf(e).index === 0);
  const tail = parrot.filter((e) => ['message_delta', 'message_stop'].includes(dataOf(e).type));
  const toolUse = (d: any) => ({ ...d, delta: { ...d.delta, stop_reason: 'tool_use' } });
  const stop = tail.map((e) => editEvents(e, (d) => (d.type === 'message_delta' ? toolUse(d) : undefined)));
  return `${[...head, ...call.filter((e) => dataOf(e).index === 1), ...stop].join('\n\n')}\n\n`;
}

// ── The session: one prompt per stream ─────────────────────────────────────────────────────────

interface Play {
  /** What is typed: the stream's name (no stream's text contains one). */
  prompt: string;
  /** The fake's answers to the turn's requests, in order (retries included). */
  replies: Reply[];
  /** The bash command of the turn's (rewritten) call, and the recorded id it must be answered under. */
  runs?: { command: string; id: string };
}

const tooMany = httpError(429, 'Number of requests has exceeded your rate limit', { 'retry-after-ms': '10' });
const CUT_OFF = 'touch cut-off.txt'; // the command of the max_tokens call, were it ever run
const cutOff = (json: string) => json.replace('"filename": "taxes.txt', `"command": "${CUT_OFF}`);
const THOUGHT = { command: 'echo ran the call after the thinking', id: 'toolu_adapted_thinking_then_call' };
/** A recorded call, run as `command`, then its recorded answer (or "Hello there!" where none was recorded). */
const tool = (name: string, command: string, id: string, answer = 'ts-basic'): Play => ({
  prompt: name,
  replies: [recorded(retool(ended(file(name)), 'bash', bash(command))), recorded(file(answer))],
  runs: { command, id },
});

const PLAYS: Play[] = [
  ...['ts-basic', 'ts-fable-long-text', 'php-usage', 'php-citations', 'py-structured-json'].map((name) => ({
    prompt: name,
    replies: [recorded(file(name))],
  })),
  // Recorded after two 429s (those were JSON errors): the SDK retries, then the stream comes.
  { prompt: 'py-structured-json-after-429', replies: [tooMany, tooMany, recorded(file('py-structured-json-after-429'))] },
  { prompt: 'php-thinking', replies: [recorded(file('php-thinking'))] },
  { prompt: 'parrot-thinking-multiply', replies: [recorded(ended(file('parrot-thinking-multiply')))] },
  // As stored: the text and thinking arrive, the message never ends (see `ended`).
  { prompt: 'parrot-thinking-multiply, as stored', replies: [recorded(file('parrot-thinking-multiply'))] },
  ...['php-refusal-mid-text', 'ts-fable-thinking-refusal', 'ts-fable-web-search-refusal'].map((name) => ({
    prompt: name,
    replies: [recorded(file(name))],
  })),
  { prompt: 'ts-error-event', replies: [recorded(file('ts-error-event'))] },
  // Cut off at max_tokens inside the call's input: as a bash call it would touch a file, if run.
  {
    prompt: 'ts-incomplete-partial-json',
    replies: [recorded(retool(file('ts-incomplete-partial-json'), 'bash', cutOff))],
  },
  tool('ts-tool-use', 'echo ran ts-tool-use', 'toolu_01NRLabsLyVHZPKxbKvkfSMn'),
  tool('go-next-streaming.tool', 'echo ran go-next', 'toolu_017QoD96fYwGzCWvLfaPADWg'),
  tool('go-streaming-all.tool', 'echo ran go-all', 'toolu_01RaX2WYWRWCbaeFHssmGJXG', 'go-streaming-all.answer'),
  tool('py-runner-weather-1.tool', 'echo ran w1', 'toolu_018acGYLtfR52q9yDbWaEdQZ', 'py-runner-weather-1.answer'),
  tool('py-runner-weather-2.tool', 'echo ran w2', 'toolu_01TJoxvFknVdnV9XpWFPaRmY', 'py-runner-weather-2.answer'),
  // A client tool call among server tool blocks the chapters do not know (and drop).
  tool('py-server-tool-result', 'echo ran py-server-tool-result', 'tu_client_001'),
  {
    prompt: 'parrot thinking, then a call',
    replies: [recorded(thinkingThenTool(THOUGHT.command, THOUGHT.id)), recorded(file('go-streaming-all.answer'))],
    runs: THOUGHT,
  },
];

/** The prompt a request answers: the latest user message that is not tool results. */
function promptOfRequest(body: any): string {
  const typed = body.messages.filter((m: any) => m.role === 'user' && !blocks(m).some((b) => b.type === 'tool_result'));
  return promptOf(typed.at(-1));
}
const blocks = (m: any): any[] => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content);

/** The fake's answers: each prompt's replies in turn, retries included. */
function respondByPrompt() {
  const served = new Map<string, number>();
  return (body: any): Reply => {
    const prompt = promptOfRequest(body);
    const n = served.get(prompt) ?? 0;
    served.set(prompt, n + 1);
    const next = PLAYS.find((p) => p.prompt === prompt)?.replies[n];
    const none = `real-streams test: no reply ${n + 1} scripted for "${prompt}"`;
    return next ?? httpError(500, none, { 'x-should-retry': 'false' });
  };
}

/** The chapter's stderr goes to a file in its home folder: the terminal shows stdout alone. */
const STDERR_TO_FILE = ['sh', '-c', 'exec "$@" 2>"$HOME/stderr.txt"', 'sh'];

/** What stdout shows after each prompt (and the end of its line) up to the next prompt, by prompt. */
function turnsOf(stdout: string, label: string): Map<string, string> {
  const parts = stdout.split(label).slice(1); // before the first prompt: nothing of ours
  const lineEnd = parts.at(-1)!.replace(/^exit/, ''); // how the terminal ends a typed line: "\n\n"
  expect(lineEnd, 'the last thing typed is "exit", and nothing follows its line').toMatch(/^\n+$/);
  const prompts = PLAYS.map((p) => p.prompt);
  const turns = new Map<string, string>();
  parts.forEach((part, i) => {
    const typed = `${prompts[i]}${lineEnd}`;
    if (i < prompts.length && part.startsWith(typed)) turns.set(prompts[i], part.slice(typed.length));
  });
  return turns;
}

// ── Every chapter plays them all ────────────────────────────────────────────────────────────────

it('serves every stream in writes that cut each of its multi-byte characters in two', () => {
  const served = PLAYS.flatMap((p) => p.replies.flatMap((x) => ('sse' in x ? [x] : [])));
  const wide = served.filter((x) => /[^\x00-\x7f]/.test(x.sse));
  expect(wide.length, 'the recordings hold °, × and —').toBeGreaterThan(0);
  for (const { sse } of wide) {
    const bytes = Buffer.from(sse, 'utf8');
    const cuts = replayCuts(bytes);
    expect(cuts.length, 'one cut a character').toBe([...sse].filter((c) => c.codePointAt(0)! > 0x7f).length);
    for (const at of cuts) expect(bytes[at] & 0xc0, 'each cut is before a continuation byte').toBe(0x80);
  }
});

for (const chapter of chapters().map((dir) => dir.slice(0, 3))) {
  describe.concurrent(`${chapter}: recorded streams of the real API`, () => {
    const r = shared(async () => {
      const run = await runRepl(chapter, [...PLAYS.map((p) => p.prompt), 'exit'], {
        respond: respondByPrompt(),
        wrapper: STDERR_TO_FILE,
      });
      return { ...run, stderr: readFileSync(join(run.home, 'stderr.txt'), 'utf8') } satisfies RunResult;
    });
    const label = `${chapter} >> `;
    /** The requests sent for a prompt, in order (retries included). */
    const sentFor = (prompt: string) => r().requests.filter((q) => promptOfRequest(q.body) === prompt);

    it('plays every stream and leaves on "exit"; the fake refused no request', () => {
      expect(r().code, `the REPL should end with exit code 0; stderr:\n${r().stderr.slice(-2000)}`).toBe(0);
      const refused = r().requests.filter((q) => q.refused).map((q) => q.refused!.message);
      expect(refused, 'every request must pass the strict fake').toEqual([]);
      for (const p of PLAYS) {
        expect(sentFor(p.prompt), `one request per scripted reply for "${p.prompt}"`).toHaveLength(p.replies.length);
      }
    });

    it('prints the text each stream carries on stdout once and whole, and nothing else', () => {
      const turns = turnsOf(r().stdout, label);
      for (const p of PLAYS) {
        // Each reply's text, then a newline once it is done (the chapter ends the answer's line).
        const texts = p.replies.flatMap((x) => ('sse' in x ? [carried(x.sse).text] : [])).filter(Boolean);
        const expected = texts.map((t) => `${t}\n`).join('');
        expect(turns.get(p.prompt), `stdout after "${p.prompt}": the stream's text, exactly as sent`).toBe(expected);
      }
    });

    it('shows the thinking on stderr only, after "[thinking] "', () => {
      const all = PLAYS.flatMap((p) => p.replies.flatMap((x) => ('sse' in x ? carried(x.sse).thinking : [])));
      expect(all.length, 'the recordings hold thinking blocks').toBeGreaterThan(0);
      for (const thought of new Set(all)) {
        const times = all.filter((t) => t === thought).length;
        const shown = r().stderr.split(`[thinking] ${thought}`).length - 1;
        expect(shown, `stderr shows this thinking once per stream that carries it:\n${thought}`).toBe(times);
        expect(r().stdout, 'thinking is not part of the answer on stdout').not.toContain(thought.slice(0, 30));
      }
    });

    it('notes a refusal, a max_tokens cut and an error event, and goes on', () => {
      const count = (text: string) => r().stderr.split(text).length - 1;
      expect(count('(the model declined to continue)'), 'three streams stop with "refusal"').toBe(3);
      const cut = /\(reply cut off at max_tokens=\d+; any tool call/;
      expect(r().stderr, 'one stream is cut off at max_tokens').toMatch(cut);
      expect(r().stderr, 'the error event, as one readable line').toMatch(/^API error: Overloaded$/m);
      const unended = /^Error: stream ended without producing a Message with role=assistant$/m;
      expect(r().stderr, 'parrot as stored: its message never ends (see `ended`), one line says so').toMatch(unended);
      expect(r().stderr, 'no stack trace').not.toMatch(/\n\s+at /);
      const retries = r().stderr.match(/\(API 429: it asks to wait 0\.01 s; the SDK will retry\)/g) ?? [];
      expect(retries, 'the SDK retries the two 429s, and says so').toHaveLength(2);
    });

    it('does not run the tool call of a reply cut off at max_tokens, nor send it back', () => {
      expect(existsSync(join(r().workspace, 'cut-off.txt')), 'a cut-off call may have half its input').toBe(false);
      expect(r().stderr).not.toContain(`$ ${CUT_OFF}`);
      const at = r().requests.findIndex((q) => promptOfRequest(q.body) === 'ts-incomplete-partial-json');
      const later = JSON.stringify(r().requests.slice(at + 1).map((q) => q.body.messages));
      expect(later, 'a tool_use never answered: the API would refuse').not.toContain('toolu_01EKqbqmZrGRXy18eN7m9kvY');
    });

    it('runs each rewritten tool call and answers it under its recorded id', () => {
      for (const p of PLAYS.filter((x) => x.runs)) {
        const { command, id } = p.runs!;
        expect(r().stderr, `the call of "${p.prompt}" is shown as it runs`).toContain(`$ ${command}`);
        const [, next] = sentFor(p.prompt);
        const results = blocks(next.body.messages.at(-1)).filter((b) => b.type === 'tool_result');
        expect(results.map((b) => b.tool_use_id), `the results sent after "${p.prompt}"`).toEqual([id]);
        expect(JSON.stringify(results[0].content), 'the command’s output').toContain(command.replace('echo ', ''));
      }
    });

    it('sends a recorded thinking block back unchanged within its tool-use turn, and the fake takes it', () => {
      const [first, next] = sentFor('parrot thinking, then a call');
      const parrot = file('parrot-thinking-multiply');
      const { signature } = events(parrot).find((e) => e.delta?.type === 'signature_delta').delta;
      const block = { type: 'thinking', thinking: carried(parrot).thinking[0], signature };
      const turn = next.body.messages.at(-2);
      expect(turn.role).toBe('assistant');
      expect(turn.content[0], 'the thinking block as it came: same text, same signature').toStrictEqual(block);
      const call = { type: 'tool_use', id: THOUGHT.id, name: 'bash' };
      expect(turn.content[1], 'then the call it led to').toMatchObject(call);
      const served = [first, next].map((q: RecordedRequest) => q.refused ?? q.injected);
      expect(served, 'the fake served both: it took the block back').toEqual([undefined, undefined]);
    });
  });
}

// ── The fake binds a recorded thinking block to the request it answered ─────────────────────────

describe('the fake: a recorded thinking block is bound to the request it was served for', () => {
  it('takes it back unchanged in that conversation, and refuses it edited or elsewhere', async () => {
    // The first request gets the recorded turn; the ones that send it back, a short answer.
    const turn = recorded(thinkingThenTool('echo hi', 'toolu_bound'));
    const respond = (body: any) => (body.messages.length === 1 ? turn : reply(text('ok')));
    const fake = await startFakeAnthropic({ respond });
    try {
      const client = new Anthropic({ apiKey: 'test', baseURL: fake.url, maxRetries: 0 });
      const tools = [{ name: 'bash', description: 'Run a command', input_schema: { type: 'object' as const } }];
      const ask = { model: 'claude-sonnet-5-5', max_tokens: 1000, system: 'You are a coding agent.', tools };
      const question = { role: 'user' as const, content: 'multiply 27 by 453' };
      const answer = await client.messages.stream({ ...ask, messages: [question] }).finalMessage();
      const [thought, call] = answer.content as any[];
      expect(call.input, 'the call as rewritten').toEqual({ command: 'echo hi' });

      const result = { type: 'tool_result' as const, tool_use_id: 'toolu_bound', content: 'hi' };
      const send = async (content: any[], system = ask.system) => {
        const back = [{ role: 'assistant' as const, content }, { role: 'user' as const, content: [result] }];
        const messages = [question, ...back];
        const sent = client.messages.create({ ...ask, system, messages });
        return sent.then(() => 'accepted', (err) => String(err.message));
      };
      expect(await send([thought, call]), 'unchanged, in the conversation it was made for').toBe('accepted');
      expect(await send([{ ...thought, thinking: 'edited' }, call])).toMatch(/cannot be modified/);
      expect(await send([thought, call], 'Another system prompt.')).toMatch(/bound to a different conversation/);
      expect(await send([{ ...thought, signature: 'made-up' }, call])).toMatch(/Invalid `signature`/);
    } finally {
      await fake.close();
    }
  });
});
