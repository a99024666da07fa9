/**
 * Context compaction (new in s05). Every round sends the whole conversation again; three tiers
 * keep it small enough for the model's context window:
 *   1. microCompact, on every request, free: old tool results go out as a one-line placeholder.
 *   2. compact, when the context nears the window (or the API says "prompt is too long"): the
 *      older part is saved as a transcript, and a summary written by the model takes its place.
 *   3. the `compact` tool and /compact [focus]: the same, when the model or you ask for it.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, Tool } from '@anthropic-ai/sdk/resources';
import type { ToolResultBlockParam, ToolUseBlockParam, Usage } from '@anthropic-ai/sdk/resources';
import { client, describeError } from '../shared/client.ts';
import { finalMessage } from '../shared/stream.ts';
import { DIM, paint, YELLOW } from '../shared/terminal.ts';
import { head, keepEnds } from '../shared/text.ts';
import { traceAs, traceEvent } from '../shared/trace.ts';
import type { Agent } from './subagent.ts';
import { withoutThinking } from './thinking.ts';

const KEEP_RESULTS = 3; // the most recent tool results the model has seen stay whole…
const SMALL_RESULT = 2_000; // …and so does any result up to this many characters
const MARGIN = 13_000; // tokens kept free besides the reply's, for estimates that are off
const ROOM_SHARE = 0.5; // …but with the reply's room, at most this share of a small window
const MIN_WINDOW = 10_000; // below this, the prompt, tools and a summary leave no room to work
const TAIL_SHARE = 0.1; // the share of the window kept word for word after a summary
const MAX_FAILURES = 3; // failed auto-compactions in a row before giving up on them
const LOOKUP_TIMEOUT = 5_000; // ms to wait for the Models API to tell the window

/** What compaction keeps between calls. The main agent has one; a sub-agent has none. */
export interface Compaction {
  model: string; // the model whose window counts, and which writes the summary
  maxTokens: number; // the longest reply: room for it is kept free
  measured: { tokens: number; messages: number }; // the context, up to the first `messages`
  window?: number; // the model's context window, once looked up
  failures: number; // auto-compactions in a row that failed: no summary, or still too big
  requested?: CompactOptions; // the model called `compact`: done when its round is over
}

export function startCompaction(model: string, maxTokens: number): Compaction {
  return { model, maxTokens, measured: { tokens: 0, messages: 0 }, failures: 0 };
}

export const COMPACT_TOOL: Tool = {
  name: 'compact',
  description:
    'Summarise the conversation so far to free context, once this round of tool calls is ' +
    'answered. Use it when a long task has left a lot behind that is no longer needed. The full ' +
    'text stays saved.',
  input_schema: {
    type: 'object',
    properties: {
      focus: {
        type: 'string',
        description: 'What the summary must keep in particular, e.g. "the API design"',
      },
    },
  },
};

/** The `compact` tool: the compaction happens once every call of the model's reply is answered. */
export async function requestCompaction(state: Compaction, input: { focus?: string }) {
  const { focus } = input; // the model's words, and the summariser is told so
  state.requested = { why: 'the model asked', focus, askedBy: 'assistant', whole: true };
  return 'The conversation will be compacted when this round of tool calls is over.';
}

/** A tool call as a placeholder or a summary names it: `read_file {"file_path":"src/a.ts"}`. */
function callName(call: ToolUseBlockParam | undefined): string {
  if (!call) return 'a tool call';
  const input = JSON.stringify(call.input);
  return `${call.name} ${input.length > 200 ? `${head(input, 200)}…` : input}`;
}
function resultText(result: ToolResultBlockParam): string {
  return typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
}
export function blocksOf(message: MessageParam): ContentBlockParam[] {
  const { content } = message;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/**
 * Tier 1. A tool result the model has already answered (it lies before the model's latest reply)
 * is sent as a placeholder that names the call, so the model knows what to run again if it needs
 * it. The most recent KEEP_RESULTS and the small ones stay whole; a result it has not seen yet is
 * never touched. Only what is sent changes: the log keeps every result whole. And a result once
 * replaced stays replaced (results only ever get older): past the request that first sends it so,
 * each request starts with the same bytes as the one before, what prompt caching (s06) needs.
 */
export function microCompact(messages: MessageParam[]): MessageParam[] {
  const calls = new Map<string, ToolUseBlockParam>();
  let lastReply = -1;
  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    lastReply = i;
    for (const block of blocksOf(message)) {
      if (block.type === 'tool_use') calls.set(block.id, block);
    }
  });
  // The results the model has seen, oldest first: all but the newest KEEP_RESULTS, if big, go.
  const before = messages.slice(0, lastReply).flatMap(blocksOf);
  const seen = before.filter((block) => block.type === 'tool_result');
  const big = (result: ToolResultBlockParam) => resultText(result).length > SMALL_RESULT;
  const old = seen.slice(0, -KEEP_RESULTS).filter(big);
  if (old.length === 0) return messages;
  const replace = new Set<ContentBlockParam>(old);
  const sent = messages.map((message) => {
    if (!blocksOf(message).some((block) => replace.has(block))) return message;
    const content = blocksOf(message).map((block) => {
      if (block.type !== 'tool_result' || !replace.has(block)) return block;
      const call = callName(calls.get(block.tool_use_id));
      const size = resultText(block).length;
      const placeholder = `[cleared to save context: the result of ${call}, ${size} characters.`;
      return { ...block, content: `${placeholder} Run it again if needed.]` };
    });
    return { ...message, content } as MessageParam;
  });
  // A thinking block is bound to all before it: none can follow the first result replaced.
  const first = sent.findIndex((message, i) => message !== messages[i]);
  return [...sent.slice(0, first), ...withoutThinking(sent.slice(first))];
}

// Tier 2 needs the context's size: the last reply's usage measured it (what the model was given,
// cache included, and what it wrote); what came since is estimated, at 4 characters a token.
export const estimate = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4);

/** After a reply: its usage is the size of the context up to and including it. */
export function measure(state: Compaction, usage: Usage, messages: number): void {
  const { cache_read_input_tokens: read, cache_creation_input_tokens: written } = usage;
  const tokens = usage.input_tokens + (read ?? 0) + (written ?? 0) + usage.output_tokens;
  state.measured = { tokens, messages };
}

/** The context's size in tokens: measured, plus an estimate of what came since. */
export function contextSize(messages: MessageParam[], agent: Agent): number {
  const { measured } = agent.compaction!;
  // Nothing measured yet, or compacted since: estimate what would be sent, system and tools too.
  if (measured.messages === 0 || measured.messages > messages.length) {
    return estimate([agent.system, agent.tools, microCompact(messages)]);
  }
  return measured.tokens + estimate(messages.slice(measured.messages));
}

/** At start-up: the window, looked up now; or what is wrong with CONTEXT_WINDOW, if anything. */
export async function lookUpWindow(state: Compaction): Promise<string | undefined> {
  const setting = process.env.CONTEXT_WINDOW;
  const usable = !setting || (/^\d+$/.test(setting) && Number(setting) >= MIN_WINDOW);
  if (!usable) return `CONTEXT_WINDOW=${setting}: expected a number, ${MIN_WINDOW} tokens or more`;
  const window = await contextWindow(state);
  traceEvent('context', { window, threshold: threshold(state, window) }); // for --trace
}

/** The model's context window: CONTEXT_WINDOW if set, else the Models API's, else 200,000. */
async function contextWindow(state: Compaction): Promise<number> {
  if (Number(process.env.CONTEXT_WINDOW) > 0) return Number(process.env.CONTEXT_WINDOW);
  // Looked up once, and not waited for long: an endpoint may never answer.
  const options = { timeout: LOOKUP_TIMEOUT, maxRetries: 0 };
  state.window ??= await client.models.retrieve(state.model, {}, options).then(
    (model) => model.max_input_tokens ?? 200_000,
    (err) => {
      // An Anthropic-compatible vendor may not serve the Models API, or may never answer.
      const why = `the Models API did not say (${describeError(err)})`;
      console.error(paint(DIM, `[context window: ${why}; assuming 200,000 tokens]`));
      return 200_000;
    },
  );
  return state.window;
}

/** Where compaction starts: the window, minus room for the longest reply and the margin. */
function threshold(state: Compaction, window: number): number {
  // A small window cannot spare 21,000 tokens (CONTEXT_WINDOW=20000): the room shrinks with it.
  return window - Math.min(state.maxTokens + MARGIN, window * ROOM_SHARE);
}

const SUMMARY_SYSTEM =
  'You summarise the conversation of a coding agent, so that it can carry on from the summary.';
const SUMMARY_PROMPT = [
  'Summarise the conversation above so that you can carry on the work from the summary alone.',
  'Keep, under these headings:',
  '1. Requests: everything the user asked for and every constraint they set, word for word ' +
    'where short.',
  '2. Files: each file read, created or changed, and what about it matters.',
  '3. Errors: what went wrong and how it was fixed (or that it was not).',
  '4. Decisions: what was decided, and why.',
  '5. State: where the work stands now.',
  '6. Next step: what was about to happen.',
  'Answer with the summary only, in plain text. Do not call any tool.',
].join('\n');

const SHOWN_TEXT = 10_000; // characters of a prompt or reply that a summary request shows

/** A conversation as plain text for the summary request: with no tool blocks, no pairing rule. */
function asText(messages: MessageParam[]): string {
  const calls = new Map<string, ToolUseBlockParam>();
  const lines = messages.flatMap((message) =>
    blocksOf(message).map((block) => {
      const who = message.role === 'user' ? 'USER' : 'ASSISTANT';
      if (block.type === 'text') return `${who}: ${keepEnds(block.text, SHOWN_TEXT)}`;
      if (block.type === 'tool_use') {
        calls.set(block.id, block);
        return `ASSISTANT called ${callName(block)}`;
      }
      if (block.type !== 'tool_result') return '';
      const text = resultText(block);
      const long = text.length > 2_000;
      const shown = long ? `${head(text, 2_000)}… (${text.length} characters)` : text;
      const error = block.is_error ? ' (an error)' : '';
      return `RESULT of ${callName(calls.get(block.tool_use_id))}${error}:\n${shown}`;
    }),
  );
  return lines.filter(Boolean).join('\n\n');
}

export function isTooLong(err: unknown): boolean {
  return err instanceof Anthropic.BadRequestError && /prompt is too long/.test(err.message);
}

/** The model's summary of `old`. If that request is too long too, the oldest half is left out. */
async function summarise(old: MessageParam[], state: Compaction, options: CompactOptions) {
  const { focus, askedBy } = options;
  let ask = SUMMARY_PROMPT;
  if (focus) ask += `\nThe ${askedBy} asked to keep in particular: ${focus}`;
  for (let from = 0; ; from = Math.ceil((from + old.length) / 2)) {
    let skipped = '';
    if (from > 0) skipped = `[${from} earlier messages left out: they are in the transcript]\n\n`;
    const content = `${skipped}${asText(old.slice(from))}\n\n---\n${ask}`;
    const messages: MessageParam[] = [{ role: 'user', content }];
    const { model, maxTokens } = state;
    const params = { model, max_tokens: maxTokens, system: SUMMARY_SYSTEM, messages };
    try {
      // No tools offered: the model cannot call one. Not printed: the summary is for the model.
      const reply = await finalMessage(client.messages.stream(params, { signal: options.signal }));
      const texts = reply.content.map((block) => (block.type === 'text' ? block.text : ''));
      const summary = texts.join('').trim();
      if (!summary || reply.stop_reason === 'refusal') {
        throw new Error(`no summary (${reply.stop_reason})`);
      }
      return summary;
    } catch (err) {
      if (!isTooLong(err) || from >= old.length - 1) throw err;
    }
  }
}

/** When the model cannot summarise: what can be taken from the history without it. */
function extractSummary(old: MessageParam[]): string {
  // A prompt is the first text block of a message of yours without tool results.
  const isPrompt = (m: MessageParam) => !blocksOf(m).some((block) => block.type === 'tool_result');
  const firsts = old.filter((m) => m.role === 'user' && isPrompt(m)).map((m) => blocksOf(m)[0]);
  const requests = firsts.map((b) => `- ${b?.type === 'text' ? keepEnds(b.text, SHOWN_TEXT) : ''}`);
  const files = new Set<string>();
  const errors: string[] = [];
  for (const block of old.flatMap(blocksOf)) {
    if (block.type === 'tool_use') {
      const path = (block.input as { file_path?: unknown }).file_path;
      if (typeof path === 'string') files.add(path);
    }
    if (block.type === 'tool_result' && block.is_error) {
      errors.push(`- ${head(resultText(block), 300)}`);
    }
  }
  return [
    '(The model could not write a summary; this one was taken from the conversation.)',
    `Requests:\n${requests.join('\n') || '- (none)'}`,
    `Files touched: ${[...files].join(', ') || '(none)'}`,
    `Last errors:\n${errors.slice(-3).join('\n') || '- (none)'}`,
  ].join('\n\n');
}

const isResults = (m: MessageParam) => blocksOf(m).some((block) => block.type === 'tool_result');
const SUMMARY_HEAD = '[Earlier conversation, compacted.';
const REQUEST = '\n\nThe request being worked on, word for word:\n';

/**
 * A cut inside a turn would leave its prompt to the summary: it follows it word for word instead
 * (after a second compaction in that turn, as the first summary message kept it).
 */
function requestInProgress(old: MessageParam[], tail: MessageParam[]): string {
  const isPrompt = (m: MessageParam) => m.role === 'user' && !isResults(m);
  // Nothing kept (no turn is going on), or the tail opens a turn with its own prompt.
  if (tail.length === 0 || tail.some(isPrompt)) return '';
  const prompt = old.findLast(isPrompt);
  const first = prompt && blocksOf(prompt)[0]; // s06 adds a block of context after your words
  if (first?.type !== 'text') return '';
  if (!first.text.startsWith(SUMMARY_HEAD)) return `${REQUEST}${first.text}`;
  const at = first.text.lastIndexOf(REQUEST);
  return at === -1 ? '' : first.text.slice(at);
}

/**
 * Where the kept tail starts: about TAIL_SHARE of the window back, but never later than what the
 * model has not answered yet (your newest prompt, or the results of its latest calls, with those
 * calls), and at a message that no tool_use is cut off from. `whole`: as early as that allows, for
 * a compaction that was asked for, or that the API's "prompt is too long" calls for.
 */
function tailStart(messages: MessageParam[], window: number, whole: boolean): number {
  const lastReply = messages.findLastIndex((message) => message.role === 'assistant');
  const last = messages.at(-1);
  // A prompt before your newest that was never answered (one the API refused) may be summarised.
  let start = messages.length; // the model has answered everything
  if (last?.role === 'user') start = isResults(last) ? lastReply : messages.length - 1;
  if (start <= 0) return 0; // the model has seen nothing yet
  while (!whole && start > 0 && estimate(messages.slice(start - 1)) < window * TAIL_SHARE) start--;
  // A tail may open with a reply, or a message of yours; never with results it left the calls of.
  while (start < messages.length && isResults(messages[start])) start++;
  return start;
}

interface CompactOptions {
  why: string; // said in the notice: 'auto', 'you asked', …
  focus?: string; // what the summary must keep in particular…
  askedBy?: 'user' | 'assistant'; // …in whose words: /compact is yours, the tool is the model's
  whole?: boolean; // summarise all that can be (asked for, or refused), not just the older part
  signal?: AbortSignal; // Ctrl+C: nothing is compacted
}

/**
 * Tiers 2 and 3: replace the older part of the conversation with a summary. That part is saved
 * first, as a transcript the model can search with bash; the log records the compaction, so -c
 * resumes the compacted conversation, and keeps everything before it.
 */
export async function compact(messages: MessageParam[], agent: Agent, options: CompactOptions) {
  const state = agent.compaction!;
  const window = await contextWindow(state);
  const before = contextSize(messages, agent);
  const cut = tailStart(messages, window, options.whole ?? false);
  if (cut === 0) return false; // nothing old enough to summarise
  const old = messages.slice(0, cut);
  console.error(paint(DIM, `[compacting (${options.why}): ${cut} messages]`));
  let summary: string;
  let failed = false;
  try {
    summary = await traceAs('compaction', () => summarise(old, state, options)); // --trace
  } catch (err) {
    if (options.signal?.aborted) throw err; // Ctrl+C: nothing is compacted
    const why = `the summary request failed (${describeError(err)})`;
    console.error(paint(YELLOW, `${why}; using one made from the history`));
    summary = extractSummary(old);
    failed = true;
  }
  // Saved now, whole, just before it is replaced: a Ctrl+C during the summary leaves nothing.
  const transcript = agent.log?.transcript(old) ?? '(not saved: no session)';
  const where = `The full text is in ${transcript} (JSON Lines: search it with bash, e.g. grep).`;
  // The request being worked on, if the cut fell inside its turn, follows word for word.
  const request = requestInProgress(old, messages.slice(cut));
  const content = `${SUMMARY_HEAD} ${where}]\n\n${summary}${request}`;
  const message: MessageParam = { role: 'user', content };
  // What is kept loses its thinking blocks: each is bound to all before it, now a summary.
  messages.splice(0, messages.length, message, ...withoutThinking(messages.slice(cut)));
  agent.log?.compaction(cut, message, transcript);
  state.measured = { tokens: 0, messages: 0 }; // the next reply measures it again
  const after = contextSize(messages, agent);
  const stillFull = after > threshold(state, window);
  if (options.why === 'auto') state.failures = failed || stillFull ? state.failures + 1 : 0;
  const saved = `${cut} messages saved to ${transcript}; context ${before} → ${after} tokens`;
  console.error(paint(DIM, `[compacted: ${saved} (estimated)]`));
  traceEvent('compaction', { why: options.why, messages: cut, before, after, transcript });
  return true;
}

/** `/compact [focus]` at the REPL, or false if `query` is not one. Ctrl+C cancels it: no change. */
export async function compactCommand(query: string, messages: MessageParam[], agent: Agent) {
  if (query !== '/compact' && !query.startsWith('/compact ')) return false;
  const focus = query.slice('/compact'.length).trim() || undefined;
  const interrupt = new AbortController();
  const cancel = () => interrupt.abort();
  process.on('SIGINT', cancel);
  const options = { why: 'you asked', focus, askedBy: 'user', whole: true } as const;
  try {
    await compact(messages, agent, { ...options, signal: interrupt.signal });
  } catch (err) {
    if (!interrupt.signal.aborted) console.error(describeError(err));
    else console.error(paint(YELLOW, '(interrupted: nothing was compacted)'));
  } finally {
    process.off('SIGINT', cancel);
  }
  return true;
}

/** A prompt that cannot fit even after a summary is refused: kept, it would fail every request. */
export async function checkPromptFits(prompt: string, agent: Agent): Promise<void> {
  const state = agent.compaction!;
  const window = await contextWindow(state);
  const size = estimate([agent.system, agent.tools, prompt]); // with what every request sends
  const free = window - threshold(state, window); // for the reply, and estimates that are off
  if (size <= window - free) return;
  const room = `the context window is ${window} tokens, with ${free} kept free`;
  const instead = 'put the text in a file and ask for the file to be read';
  throw new Error(`that prompt is about ${size} tokens, and ${room}. Not sent: ${instead}.`);
}

/** Tier 2, before a request: past the threshold, compact (unless it failed MAX_FAILURES times). */
export async function compactIfFull(messages: MessageParam[], agent: Agent, signal?: AbortSignal) {
  const state = agent.compaction!;
  const full = contextSize(messages, agent) > threshold(state, await contextWindow(state));
  if (!full || state.failures >= MAX_FAILURES) return;
  await compact(messages, agent, { why: 'auto', signal });
  const off = 'compaction keeps failing; it is off for this run';
  if (state.failures === MAX_FAILURES) console.error(paint(YELLOW, off));
}
