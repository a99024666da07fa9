/**
 * The page `npm run inspect` writes (scripts/inspect.ts): a trace of a chapter's run (--trace,
 * shared/trace.ts) as one self-contained HTML file that replays the run request by request.
 * Tooling for readers, not a chapter's mechanism.
 *
 * Drawn here, in Node: the header, a chart of the run as SVG (one step per request, so it shows
 * with no script), and one line per request. What a request held is drawn by page.js in the
 * browser when its line is opened, from a JSON data island that stores each message once, however
 * many requests sent it again: the page grows with the conversation, not with its square. A file
 * that holds several runs (--trace=<file> appends) shows them one after the other.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

// ── Reading a trace ────────────────────────────────────────────────────────────────────────────

export interface TraceHeader {
  type: 'trace';
  version: number;
  run?: string; // the run's id, in every line it wrote (older traces have none)
  chapter?: string; // "s05_context_compact"
  workspace?: string;
  started?: string; // an ISO date
  offline?: boolean; // true: no key, so the offline demo model answered (older traces do not say)
}

/** One HTTP exchange with the API, every try its own (the format is in shared/trace.ts). */
export interface Exchange {
  type: 'exchange';
  n: number; // the order it was sent in
  agent: string; // 'main' | 'sub-agent' | 'compaction'
  method: string;
  path: string; // '/v1/messages', '/v1/models/claude-sonnet-5-5'
  try: number; // 1, then 2 for the SDK's first retry…
  request: any; // the JSON body as sent
  status: number | null;
  response: any; // the message, the error body, or null
  error?: string; // no complete response: why
  retryAfter?: number;
  times: { sent: number; firstByte: number | null; done: number | null };
}

/**
 * `context` (the window and the compaction threshold, at start-up) or `compaction` (why,
 * messages, before, after). It happened after the first `exchanges` exchanges were sent.
 */
export interface TraceEvent {
  type: 'event';
  event: string;
  at: number;
  exchanges?: number;
  agent?: string;
  [field: string]: unknown;
}

/**
 * `--trace=<file>` appends to a file that may hold earlier runs, and runs started together write
 * it at once: each header line starts a run, every line names its run, and each run counts its
 * exchanges from n = 1. So exchanges and events are numbered on through the file, a run after
 * the other (run 2's n = 1 follows run 1's last), and each says which run it belongs to:
 *   run 0: n 1, 2, 3    run 1 (its own 1, 2): n 4, 5
 * A line that names no run (a trace written before runs had ids) belongs to the header above it.
 */
export interface Trace {
  header: TraceHeader; // the first run's
  runs: TraceHeader[]; // one a header line, in file order
  exchanges: NumberedExchange[]; // in the order they were sent
  events: NumberedEvent[]; // in the order they happened
  values: Distinct; // what the requests sent, each value once
  skipped: number; // lines cut off mid-write, too long, or of a kind this page does not know
}

interface Numbered {
  run: number; // the index of its run in `runs`
  inRun?: number; // an exchange's n as recorded, counted from 1 in its run
}
// Its request body is read into `sent` and let go (request: undefined).
type NumberedExchange = Exchange & Numbered & { sent?: Sent };
type NumberedEvent = TraceEvent & Numbered;

/**
 * What a POST /v1/messages sent, its parts as indexes into `values`. The body itself is not
 * kept: a long run's bodies are its conversation sent again and again, most of the trace.
 */
interface Sent {
  params: Record<string, unknown>; // model, max_tokens, thinking, stream…
  system?: number;
  tools?: number;
  messages: number[];
  breakpoints: [number, number][]; // the [message, block]s that carried cache_control
}

export class NotATraceError extends Error {}

// The trace format this page reads: shared/trace.ts's VERSION. A header without one is read as
// this; another version may mean anything, and is refused rather than shown wrong.
const TRACE_VERSION = 1;

const KNOWN_EVENTS = new Set(['context', 'compaction']);

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined; // the last line of a run that was killed mid-write, say
  }
}

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const finite = (value: unknown): value is number => Number.isFinite(value);

/**
 * Any value of a trace as text. String() throws on an object whose toString is not a function
 * ({"toString":1}: a faulty endpoint's error type, say), and so does `${…}`: an object is shown
 * as its JSON instead.
 */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}
const optionalText = (value: unknown) => (value == null ? undefined : textOf(value));

// JSON.parse reads any depth; JSON.stringify and every walk of a value recurse, and a reply
// nested 20,000 deep overflows the stack. Past this depth a value is shown as this mark.
const MAX_DEPTH = 100;
const TOO_DEEP = `[nested too deep to show: more than ${MAX_DEPTH} levels]`;

function isDeeper(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth === 0) return true;
  const items = Array.isArray(value) ? value : Object.values(value);
  return items.some((item) => isDeeper(item, depth - 1));
}

function cutDeep(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth === 0) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => cutDeep(item, depth - 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutDeep(v, depth - 1)]));
}

/** A line's value, cut where it nests deeper than MAX_DEPTH (a copy only if it does). */
const bounded = (value: unknown) =>
  (isDeeper(value, MAX_DEPTH) ? cutDeep(value, MAX_DEPTH) : value);

function asExchange(value: unknown): Exchange | undefined {
  if (!isObject(value) || value.type !== 'exchange' || !finite(value.n)) return;
  if (typeof value.path !== 'string' || !finite(value.times?.sent)) return;
  // Fill in what an older or partial recorder may have left out, so the rest need not ask.
  const { sent, firstByte, done } = value.times;
  return {
    type: 'exchange',
    n: value.n,
    path: value.path,
    request: value.request,
    agent: typeof value.agent === 'string' ? value.agent : 'main',
    method: typeof value.method === 'string' ? value.method : 'POST',
    try: finite(value.try) ? value.try : 1,
    status: finite(value.status) ? value.status : null,
    response: value.response ?? null,
    error: typeof value.error === 'string' ? value.error : undefined,
    retryAfter: finite(value.retryAfter) ? value.retryAfter : undefined,
    times: {
      sent,
      firstByte: finite(firstByte) ? firstByte : null,
      done: finite(done) ? done : null,
    },
  } as Exchange;
}

/** A POST /v1/messages: a step of the chart; other exchanges (the Models API) are listed only. */
const isMessagesRequest = ({ method, path }: { method: string; path: string }) =>
  method === 'POST' && path === '/v1/messages';

const isEvent = (value: unknown): value is TraceEvent =>
  isObject(value) && value.type === 'event' && KNOWN_EVENTS.has(value.event) && finite(value.at);

/** A header line as the page uses it: its texts as text, whatever the line held. */
function asHeader(value: Record<string, any>): TraceHeader {
  return {
    type: 'trace',
    version: finite(value.version) ? value.version : 1,
    run: typeof value.run === 'string' ? value.run : undefined,
    chapter: optionalText(value.chapter),
    workspace: optionalText(value.workspace),
    started: optionalText(value.started),
    offline: typeof value.offline === 'boolean' ? value.offline : undefined,
  };
}

/** A request body's parts, each stored once in `values`; undefined if it sent no messages. */
function sentOf(body: unknown, values: Distinct): Sent | undefined {
  if (!isObject(body) || !Array.isArray(body.messages)) return undefined;
  const { system, tools, messages, ...params } = body;
  const breakpoints: [number, number][] = [];
  return {
    params,
    system: system === undefined ? undefined : values.add(system),
    tools: tools === undefined ? undefined : values.add(tools),
    messages: messages.map((message, i) => values.add(takeBreakpoints(message, i, breakpoints))),
    breakpoints,
  };
}

/**
 * The runs, exchanges and events of a trace: its text, or its lines one at a time (a trace can be
 * larger than any string, and only what the page shows is kept). A line that is not JSON (the
 * last one, cut off when the run was killed) or not of a kind known here is skipped and counted,
 * not fatal; a first line that is not a trace header is: the file is something else.
 */
export function readTrace(input: string | Iterable<string>): Trace {
  const lines = typeof input === 'string' ? input.split('\n') : input;
  const values = new Distinct();
  const runs: TraceHeader[] = [];
  const runIds = new Map<string, number>(); // a run's id → its index in runs
  const exchanges: Trace['exchanges'] = [];
  const events: Trace['events'] = [];
  const highest: number[] = []; // each run's highest n, or count of exchanges before an event
  let skipped = 0;
  for (const text of lines) {
    // A byte-order mark, as some editors save a file, is no part of the header.
    const line = runs.length === 0 ? text.replace(/^\uFEFF/, '') : text;
    if (line.trim() === '') continue;
    const value = bounded(parseLine(line));
    if (runs.length === 0 && !(isObject(value) && value.type === 'trace')) {
      throw new NotATraceError('not a trace: its first line is not {"type":"trace",…}');
    }
    if (isObject(value) && value.type === 'trace') {
      if (value.version !== undefined && value.version !== TRACE_VERSION) {
        const version = JSON.stringify(value.version).slice(0, 40);
        throw new NotATraceError(`a trace of version ${version}, and this inspector reads ` +
          `version ${TRACE_VERSION} only (was it written by a newer copy of this repo?)`);
      }
      const header = asHeader(value); // another run, appended to the same file
      if (header.run !== undefined && !runIds.has(header.run)) runIds.set(header.run, runs.length);
      runs.push(header);
      highest.push(0);
      continue;
    }
    // The run it names; a line that names none belongs to the header above it.
    const named = isObject(value) && typeof value.run === 'string';
    const run = named ? runIds.get(value.run) : runs.length - 1;
    const exchange = asExchange(value);
    if (run === undefined) skipped++; // its run's header is missing
    else if (exchange) {
      highest[run] = Math.max(highest[run], exchange.n);
      const sent = isMessagesRequest(exchange) ? sentOf(exchange.request, values) : undefined;
      exchanges.push({ ...exchange, request: undefined, run, inRun: exchange.n, sent });
    } else if (isEvent(value)) {
      const count = finite(value.exchanges) ? value.exchanges : undefined;
      highest[run] = Math.max(highest[run], count ?? 0);
      events.push({ ...value, exchanges: count, run });
    } else skipped++;
  }
  if (runs.length === 0) throw new NotATraceError('not a trace: it is empty');

  // Where each run's numbers start: after the highest n (or event count) of the runs before it.
  const offsets: number[] = [];
  highest.reduce((offset, most, k) => (offsets[k] = offset) + most, 0);
  for (const exchange of exchanges) exchange.n = offsets[exchange.run] + exchange.inRun!;
  for (const event of events) {
    if (event.exchanges !== undefined) event.exchanges += offsets[event.run];
  }
  // Lines are written as things complete: a slow exchange lands after a later one.
  exchanges.sort((a, b) => a.n - b.n);
  events.sort((a, b) => a.run - b.run || (a.exchanges ?? 0) - (b.exchanges ?? 0) || a.at - b.at);
  return { header: runs[0], runs, exchanges, events, values, skipped };
}

// ── What the chapters put in requests ──────────────────────────────────────────────────────────

// Tier 1 (s05's compact.ts): an old tool result sent as a one-line placeholder.
const PLACEHOLDER = '[cleared to save context: the result of ';
// Tiers 2 and 3: the conversation starts again from a summary of what came before.
const SUMMARY = '[Earlier conversation, compacted.';

type Block = { type: string; [field: string]: any };
type Message = { role: string; content: string | Block[] };

// Anything odd in a trace (a message that is not an object, say) is shown, never a crash.
function blocksOf(message: unknown): Block[] {
  const content = isObject(message) ? message.content : undefined;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isObject) as Block[] : [];
}

function isPlaceholder(block: Block): boolean {
  if (block.type !== 'tool_result') return false;
  const { content } = block;
  const text = typeof content === 'string' ? content : content?.[0]?.text;
  return typeof text === 'string' && text.startsWith(PLACEHOLDER);
}

/** The user message a compaction starts the conversation with. */
function isSummary(message: unknown): boolean {
  const text = blocksOf(message)[0]?.text;
  const byYou = isObject(message) && message.role === 'user';
  return byYou && typeof text === 'string' && text.startsWith(SUMMARY);
}

const isThinking = (block: Block) =>
  block.type === 'thinking' || block.type === 'redacted_thinking';
const count = (message: unknown, test: (block: Block) => boolean) =>
  blocksOf(message).filter(test).length;

// ── Each value once ────────────────────────────────────────────────────────────────────────────

/**
 * Distinct values, each stored once and named by its index: a message resent in 40 requests is
 * one entry, and each request lists indexes. Keyed by the value's JSON, so equal content is one
 * entry whichever line of the trace it was read from.
 */
class Distinct {
  private readonly index = new Map<string, number>();
  readonly json: string[] = [];
  readonly values: unknown[] = [];

  add(value: unknown): number {
    const json = JSON.stringify(value) ?? 'null';
    let id = this.index.get(json);
    if (id === undefined) {
      id = this.json.push(json) - 1;
      this.values.push(value);
      this.index.set(json, id);
    }
    return id;
  }
}

/**
 * s06 marks the last block of the last message with cache_control: the same message, resent
 * later, has none. So the mark is taken off before the message is stored, and kept apart as
 * [message, block] positions, or every message would be stored twice.
 */
function takeBreakpoints(message: unknown, at: number, breakpoints: [number, number][]): unknown {
  if (!isObject(message) || !Array.isArray(message.content)) return message;
  if (!message.content.some((block) => block?.cache_control)) return message;
  const content = message.content.map((block, i) => {
    if (!block?.cache_control) return block;
    breakpoints.push([at, i]);
    const { cache_control: _, ...rest } = block;
    return rest;
  });
  return { ...message, content };
}

// A message as it may change when it is resent: thinking dropped, a tool result replaced.
function skeleton(message: unknown): string {
  const blocks = blocksOf(message)
    .filter((block) => !isThinking(block))
    .map((block) => (block.type === 'tool_result' ? ['result', block.tool_use_id] : block));
  return JSON.stringify([isObject(message) ? message.role : null, blocks]);
}

function howChanged(before: unknown, after: unknown): string {
  const reasons: string[] = [];
  if (count(after, isPlaceholder) > count(before, isPlaceholder)) reasons.push('placeholder');
  if (count(after, isThinking) < count(before, isThinking)) reasons.push('thinking dropped');
  return reasons.join(', ');
}

/**
 * Each message of a request against the previous request of the same agent: `r` sent again as
 * it was, `c` sent again changed (a placeholder, thinking dropped), `n` new. Matched as
 * multisets, not by position: after a compaction the kept messages move up behind the summary.
 * Exact matches first, so a prompt typed twice is once resent and once new, never "changed".
 */
function compareWithPrevious(ids: number[], previous: number[], table: Distinct) {
  const left = new Map<number, number>(); // previous messages not matched yet, by id
  for (const id of previous) left.set(id, (left.get(id) ?? 0) + 1);
  const marks = ids.map((id): string => {
    const times = left.get(id) ?? 0;
    if (times === 0) return 'n';
    left.set(id, times - 1);
    return 'r';
  });
  const why: Record<number, string> = {};
  if (!marks.includes('n')) return { marks: marks.join(''), why };

  // What did not match exactly may be a message sent before, changed since.
  const loose = new Map<string, number[]>();
  for (const [id, times] of left) {
    const key = skeleton(table.values[id]);
    const same = loose.get(key) ?? [];
    for (let k = 0; k < times; k++) same.push(id);
    loose.set(key, same);
  }
  ids.forEach((id, i) => {
    if (marks[i] !== 'n') return;
    const before = loose.get(skeleton(table.values[id]))?.shift();
    if (before === undefined) return;
    marks[i] = 'c';
    const how = howChanged(table.values[before], table.values[id]);
    if (how) why[i] = how;
  });
  return { marks: marks.join(''), why };
}

// ── The replay: what the chart, the list and page.js show of each exchange ─────────────────────

/**
 * One exchange, as the data island holds it (page.js reads these):
 *   { n: 7, agent: 'main', status: 200, system: 0, tools: 1, messages: [2, 3, 9],
 *     marks: 'rrn', why: {}, breakpoints: [[2, 0]], usage: { read: 900, … }, cost: 0.0031, … }
 */
export interface Row {
  n: number; // numbered on through the file, runs after the first included
  run: number; // the index of its run
  inRun?: number; // its n as recorded, from 1 in each run
  try: number;
  agent: string;
  method: string;
  path: string;
  status: number | null;
  error?: string;
  retryAfter?: number;
  times: Exchange['times'];
  isRequest: boolean; // a POST /v1/messages: a step of the chart
  response: unknown;
  usage?: { read: number; written: number; uncached: number; output: number };
  cost?: number;
  params?: Record<string, unknown>; // model, max_tokens, thinking, stream…
  system?: number; // indexes into the distinct values
  tools?: number;
  messages?: number[];
  marks?: string; // a letter a message: r resent, c changed, n new
  why?: Record<number, string>; // how each changed message changed
  breakpoints?: [number, number][]; // the [message, block]s that carried cache_control
  placeholders: number; // tool results sent as placeholders for the first time
  summary: boolean; // starts with a summary it had not sent before
  retryOf?: number; // the n of the try this one repeats
  retriedAs?: number;
  offline?: true; // the offline demo model answered it: no model ran, and it cost nothing
  interrupted?: true; // stopped by Ctrl+C (or as the program exited), not failed
}

/** A run's context window and where it starts compacting (tokens), if it said (s05, s06). */
type Context = { window: number; threshold: number };

export interface Replay {
  trace: Trace;
  rows: Row[];
  values: Distinct;
  contexts: (Context | undefined)[]; // one a run
}

// A count from the trace: 0 if it is not a number, and never so large that a sum of them is
// Infinity (the chart's scale would be too).
const tokens = (value: unknown) => (finite(value) ? Math.min(Math.max(value, 0), 1e15) : 0);

function usageOf(response: unknown): Row['usage'] {
  const usage = isObject(response) ? response.usage : undefined;
  if (!isObject(usage)) return undefined;
  return {
    read: tokens(usage.cache_read_input_tokens),
    written: tokens(usage.cache_creation_input_tokens),
    uncached: tokens(usage.input_tokens),
    output: tokens(usage.output_tokens),
  };
}

function rowOf(exchange: NumberedExchange, header: TraceHeader): Row {
  const { n, run, inRun, agent, method, path, status, error, retryAfter, times, response } =
    exchange;
  const isRequest = isMessagesRequest(exchange);
  const row: Row = { n, run, inRun, try: exchange.try, agent, method, path, status, error,
    retryAfter, times, isRequest, response, placeholders: 0, summary: false };
  row.usage = isRequest ? usageOf(response) : undefined;
  // The offline demo model's requests cost nothing: no price for a model that did not run.
  if (header.offline) row.offline = true;
  if (wasInterrupted(row)) row.interrupted = true; // page.js says so instead of "failed"
  const model = exchange.sent?.params.model;
  if (row.usage && typeof model === 'string' && !row.offline) row.cost = cost(model, row.usage);
  return row;
}

// Dollars per million tokens: the figures of s06_prompt/cache.ts, which has them from
// https://platform.claude.com/docs/en/about-claude/pricing. Copied, not imported: cache.ts loads
// shared/client.ts, which starts the SDK and the offline demo server, and a tool that only reads
// a file has no use for either. tests/inspect-page.test.ts reads cache.ts and checks they agree.
export const PRICES: Record<string, { input: number; output: number }> = {
  'claude-sonnet-5-5': { input: 2, output: 10 },
};
// Reading from the cache costs 0.1× the input price; writing to it, for the default 5 minutes,
// 1.25×.
export const CACHE_PRICE = { read: 0.1, written: 1.25 };

/** What a request cost in dollars, or undefined for a model without a price here. */
function cost(model: string, usage: NonNullable<Row['usage']>): number | undefined {
  const price = Object.hasOwn(PRICES, model) ? PRICES[model] : undefined;
  if (!price) return undefined;
  const input = usage.uncached + usage.read * CACHE_PRICE.read +
    usage.written * CACHE_PRICE.written;
  return (input * price.input + usage.output * price.output) / 1e6;
}

/** What a request sent, each message compared with the same agent's last request's. */
function readRequest(row: Row, sent: Sent, before: Row | undefined, values: Distinct) {
  const { params, system, tools, messages: ids, breakpoints } = sent;
  Object.assign(row, { params, system, tools });
  const { marks, why } = compareWithPrevious(ids, before?.messages ?? [], values);
  Object.assign(row, { messages: ids, marks, why, breakpoints });
  ids.forEach((id, i) => {
    const message = values.values[id];
    if (marks[i] !== 'r') row.placeholders += count(message, isPlaceholder);
    if (marks[i] === 'n' && isSummary(message)) row.summary = true;
  });
}

/**
 * Every exchange as a row, each message stored once and compared with what went before: the
 * same agent's previous request in the same run (another run's n = 3 is another conversation).
 */
export function replay(trace: Trace): Replay {
  const { values } = trace;
  const latest = new Map<string, Row>(); // each agent's latest request, by `run agent`
  const rows = trace.exchanges.map((exchange) => {
    const row = rowOf(exchange, trace.runs[exchange.run]);
    if (!row.isRequest) return row;
    const key = `${row.run} ${row.agent}`;
    const before = latest.get(key);
    latest.set(key, row);
    // The SDK's retry sends the same body again: say which try it repeats.
    if (row.try > 1 && before) {
      row.retryOf = before.n;
      before.retriedAs = row.n;
    }
    if (exchange.sent) readRequest(row, exchange.sent, before, values);
    return row;
  });
  // Each run's context window and threshold: its last context event's, if they are numbers.
  const contexts: (Context | undefined)[] = trace.runs.map(() => undefined);
  for (const { event, run, window, threshold } of trace.events) {
    if (event !== 'context') continue;
    const valid = finite(window) && finite(threshold) && window > 0 && threshold > 0;
    contexts[run] = valid ? { window, threshold } : undefined;
  }
  return { trace, rows, values, contexts };
}

// ── Writing HTML ───────────────────────────────────────────────────────────────────────────────

const ESCAPES: Record<string, string> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
};
/** Text as HTML text or an attribute value: nothing in it can open a tag or end a quote. */
export const escapeHtml = (text: unknown) => textOf(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * JSON that can sit inside <script type="application/json">: a `</script>` or `<!--` in any text
 * would end the data island or change how the HTML parser reads it, so no `<` appears raw. U+2028
 * and U+2029 are escaped too, for any tool that still reads the JSON as JavaScript.
 */
export function jsonForScript(json: string): string {
  const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(4, '0');
  return json.replace(/[<\u2028\u2029]/g, (c) => `\\u${hex(c)}`);
}

const number = (n: number) => n.toLocaleString('en-US');
const dollars = (value: number | undefined) =>
  value === undefined ? '—' : `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`;
const seconds = (ms: number | null) =>
  ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
const inputOf = (u: NonNullable<Row['usage']>) => u.read + u.written + u.uncached;

/** A span of time: `4.2 s`, or minutes and seconds (`12:05`) past a minute. */
function duration(ms: number): string {
  if (ms < 60_000) return seconds(ms);
  const whole = Math.floor(ms / 1000);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

function when(iso: string | undefined): string {
  if (!iso || Number.isNaN(Date.parse(iso))) return 'an unknown time';
  return `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

const ASSETS = new URL('.', import.meta.url);
const SCRIPT = readFileSync(new URL('page.js', ASSETS), 'utf8');
const STYLE = readFileSync(new URL('page.css', ASSETS), 'utf8');
// Inlined as they are: neither may hold the tag that would end it early.
if (/<\/script/i.test(SCRIPT) || /<\/style/i.test(STYLE)) {
  throw new Error('page.js or page.css holds a closing </script> or </style> tag');
}
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

/**
 * The page may run its own script and style, and nothing else: no fetch, no image from the
 * network, no form. Anything a trace's text could smuggle in as HTML would be refused too.
 */
export const CSP = [
  "default-src 'none'",
  `script-src 'sha256-${sha256(SCRIPT)}'`,
  `style-src 'sha256-${sha256(STYLE)}'`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The whole page for a trace: its text, or its lines one at a time (scripts/inspect.ts reads a
 * file so). Throws NotATraceError if it is not one.
 */
export function renderPage(trace: string | Iterable<string>, options: { title?: string } = {}) {
  const run = replay(readTrace(trace));
  const title = options.title ?? titleOf(run.trace.runs);
  const rows = JSON.stringify(withSharedLists(run.rows));
  const runs = run.trace.runs.length;
  const island = `{"values":[${run.values.json.join(',')}],"runs":${runs},"rows":${rows}}`;
  // <link rel="icon" href="data:,">: or the browser asks the network for /favicon.ico.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${renderHeader(run, title)}
${renderChart(run)}
${renderList(run)}
<script type="application/json" id="trace-data">${jsonForScript(island)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/**
 * Most requests send the same agent's previous list of messages again, and one or two more. So a
 * row of the island names the earlier row its list starts like, and for how many messages:
 *   { n: 7, shared: [6, 170], messages: [171, 172], marks: 'nn' }  (page.js puts them together)
 * Otherwise the lists alone, a few numbers a message, would grow with the square of the run.
 */
function withSharedLists(rows: Row[]): object[] {
  const latest = new Map<string, Row>(); // each agent's latest request with messages, by run
  return rows.map((row) => {
    if (!row.messages) return row;
    const key = `${row.run} ${row.agent}`;
    const before = latest.get(key);
    latest.set(key, row);
    const ids = row.messages;
    const previous = before?.messages ?? [];
    let same = 0;
    while (same < ids.length && same < previous.length && ids[same] === previous[same]) same++;
    if (same === 0) return row;
    // Those messages were all in the previous request: their marks are all `r`, left out too.
    const marks = row.marks!.slice(same);
    return { ...row, shared: [before!.n, same], messages: ids.slice(same), marks };
  });
}

// ── The header: what ran, when, and what it came to ────────────────────────────────────────────

const chapterOf = (header: TraceHeader) => header.chapter ?? 'agent';
const plural = (n: number, one: string, many = `${one}s`) => `${number(n)} ${n === 1 ? one : many}`;

/** `s05_context_compact trace, 2026-11-24 10:00:00 UTC`, or `…, 3 runs from 2026-11-24 …` */
function titleOf(runs: TraceHeader[]): string {
  const chapters = [...new Set(runs.map(chapterOf))].join(', ');
  if (runs.length === 1) return `${chapters} trace, ${when(runs[0].started)}`;
  return `${chapters} trace, ${runs.length} runs from ${when(runs[0].started)}`;
}

function renderHeader(run: Replay, title: string): string {
  const { runs, skipped } = run.trace;
  const requests = run.rows.filter((row) => row.isRequest);
  const byAgent = new Map<string, number>();
  for (const row of requests) byAgent.set(row.agent, (byAgent.get(row.agent) ?? 0) + 1);
  const agents = [...byAgent].map(([agent, n]) => `${number(n)} ${agent}`).join(', ');
  const failed = requests.filter(hasFailed).length;
  const interrupted = requests.filter(wasInterrupted).length;
  const used = requests.flatMap((row) => (row.usage ? [row.usage] : []));
  const sum = (part: (u: NonNullable<Row['usage']>) => number) =>
    used.reduce((total, u) => total + part(u), 0);
  const input = sum(inputOf);
  const fromCache = input ? Math.round((sum((u) => u.read) / input) * 100) : 0;
  // From the first request to the last of each run, added up: runs may be days apart.
  const firsts = new Map<number, number>(); // each run's first time sent, and its last time
  const lasts = new Map<number, number>();
  for (const { run: k, times } of run.rows) {
    if (!firsts.has(k)) firsts.set(k, times.sent);
    lasts.set(k, Math.max(lasts.get(k) ?? -Infinity, times.done ?? times.sent));
  }
  let span = 0;
  for (const [k, first] of firsts) span += lasts.get(k)! - first;
  const contexts = [...new Set(run.contexts.flatMap((c) => (c ? [JSON.stringify(c)] : [])))];
  const context: Context | undefined = contexts.length === 1 ? JSON.parse(contexts[0]) : undefined;

  const facts = [
    `${plural(requests.length, 'request')} to the model${agents ? ` (${agents})` : ''}`,
    ...describeOthers(run.rows.filter((row) => !row.isRequest)),
    failed ? `${number(failed)} failed` : '',
    interrupted ? `${number(interrupted)} interrupted` : '',
    `${number(input)} input tokens, ${fromCache}% read from the cache`,
    `${number(sum((u) => u.output))} output tokens`,
    describeCost(requests),
    run.rows.length === 0 ? '' : `${duration(span)} from the first request to the last` +
      (runs.length > 1 ? ' (each run\'s, added up)' : ''),
    context ? `context window ${number(context.window)} tokens, ` +
      `compaction from ${number(context.threshold)}` : '',
  ].filter(Boolean);
  const where = runs.length === 1
    ? [`${chapterOf(runs[0])}, started ${when(runs[0].started)}`]
    : [`${runs.length} runs, appended to one file: the first started ${when(runs[0].started)}, ` +
      `the last ${when(runs.at(-1)!.started)}`];
  const workspaces = [...new Set(runs.flatMap((h) => (h.workspace ? [h.workspace] : [])))];
  if (workspaces.length === 1) where.push(`in ${workspaces[0]}`);
  else if (workspaces.length > 1) where.push(`in ${workspaces.length} folders`);
  const lines = `line${skipped === 1 ? '' : 's'}`;
  const note = skipped ? `<p class="note">${number(skipped)} ${lines} of the trace skipped: cut ` +
    'off mid-write, too long to read, or of a kind this page does not know.</p>\n' : '';
  const these = runs.length === 1 ? 'this run' : 'these runs';
  return `<header>
<h1>${escapeHtml(title)}</h1>
<p class="lede">Every request ${these} sent to the model, in order: the chart shows each one's \
size in tokens, and opening one shows what it sent and what came back.</p>
<p class="where">${escapeHtml(where.join(' · '))}</p>
${describeOffline(runs)}<ul class="facts">\
${facts.map((fact) => `<li>${escapeHtml(fact)}</li>`).join('')}</ul>
${note}</header>`;
}

/** GET /v1/models/{id}: s05 and s06 ask the API for the model's context window at start-up. */
const isModelLookup = ({ method, path }: Row) => method === 'GET' && path.startsWith('/v1/models/');

/**
 * The exchanges listed that are not requests to the model, so that the header counts what the
 * list shows: `1 lookup of the model (GET /v1/models/claude-sonnet-5-5): its context window, …`
 */
function describeOthers(others: Row[]): string[] {
  const lookups = others.filter(isModelLookup);
  const paths = [...new Set(lookups.map((row) => row.path))];
  const path = paths.length === 1 ? paths[0] : '/v1/models/{id}';
  return [
    lookups.length ? `${plural(lookups.length, 'lookup')} of the model (GET ${path}): its ` +
      'context window, asked at start-up' : '',
    others.length > lookups.length
      ? `${plural(others.length - lookups.length, 'other exchange')} with the API` : '',
  ];
}

/** `cost $0.0612, an estimate at list prices`: what the tokens would cost, not a bill. */
function describeCost(requests: Row[]): string {
  const paid = requests.filter((row) => !row.offline);
  if (requests.length > 0 && paid.length === 0) return ''; // the offline demo model's only
  const costs = paid.flatMap((row) => (row.cost === undefined ? [] : [row.cost]));
  if (costs.length === 0) return 'cost —';
  const unpriced = paid.filter((row) => row.usage).length - costs.length;
  const offline = paid.length < requests.length ? '; none for the offline runs' : '';
  return `cost ${dollars(costs.reduce((a, b) => a + b, 0))}, an estimate at list prices` +
    `${unpriced ? ` (and ${unpriced} of unknown price)` : ''}${offline}`;
}

/** An offline run: what answered, and that no model ran. */
function describeOffline(runs: TraceHeader[]): string {
  const offline = runs.filter((header) => header.offline).length;
  if (offline === 0) return '';
  const which = runs.length === 1 ? 'This run was offline'
    : offline === runs.length ? 'Every run was offline'
    : `${offline} of the ${runs.length} runs were offline`;
  return `<p class="note offline">${which}: with no API key set, the offline demo model answered \
(shared/offline-model.ts: a few rules, not an AI). So no model ran, nothing was charged, and the \
token counts are its estimates.</p>\n`;
}

/**
 * Stopped by the reader (Ctrl+C), not by the API: what shared/trace.ts writes for a request
 * aborted before the response began (the SDK's words, or fetch's), in the middle of a stream,
 * or still open when the program exited. (A stream the chapter gave up on as silent is aborted
 * the same way: the trace cannot tell the two apart.)
 */
const INTERRUPTED = new RegExp('^(Request was aborted\\.|This operation was aborted|' +
  'aborted before the reply was complete|the program exited before the end)');
const wasInterrupted = (row: Row) =>
  (row.status ?? 200) < 400 && row.error !== undefined && INTERRUPTED.test(row.error);
const hasFailed = (row: Row) =>
  !wasInterrupted(row) && (Boolean(row.error) || (row.status ?? 200) >= 400);

/** What went wrong, in a few words: `529 overloaded_error`, `Request was aborted.` */
function failure(row: Row): string {
  if (!hasFailed(row)) return '';
  const body = row.response as { error?: { type?: unknown } } | null;
  const type = textOf(body?.error?.type ?? 'error'); // as the endpoint sent it: maybe not a text
  const status = (row.status ?? 200) >= 400 ? `${row.status} ${type}` : '';
  return [status, row.error].filter(Boolean).join(' ');
}

// ── The chart: one step per request, drawn here so it needs no script ──────────────────────────

// Pixels. As wide as the page's column, and page.css scales it down to a narrower window. Above
// the plot: two rows of labels (compactions, the start of each run), then the placeholder marks.
const CHART = { width: 1158, left: 64, right: 16, top: 52, height: 200, bottom: 18 };
const LABEL_ROWS = [14, 28]; // the baselines of the label rows
const MARK_ROW = CHART.top - 11; // the top of the placeholder marks
const MAX_BAR = 48; // a short run's bars stay bars, not a wall
type Scale = (tokens: number) => number; // tokens → y

/**
 * An event goes before the first exchange sent after it: the recorder counts the exchanges sent
 * before each event. (A trace without that count: the first sent later, its summary's aside.)
 */
function sentAfter(row: Row, event: NumberedEvent): boolean {
  if (finite(event.exchanges)) return row.n > event.exchanges;
  if (row.run !== event.run) return row.run > event.run;
  return row.agent !== 'compaction' && row.times.sent >= event.at;
}

/** Tier 3 is a compaction you or the model asked for; tier 2, one that had to happen. */
function tierOf(event: TraceEvent): number {
  return event.why === 'you asked' || event.why === 'the model asked' ? 3 : 2;
}

function describeCompaction(event: TraceEvent): string {
  const show = (value: unknown) => escapeHtml(finite(value) ? number(value) : value ?? '?');
  const [why, messages, before, after] = [event.why, event.messages, event.before, event.after]
    .map(show);
  return `compaction, tier ${tierOf(event)} (${why}): ${messages} messages replaced by a ` +
    `summary; context ${before} → ${after} tokens (estimated)`;
}

const compactionsOf = (run: Replay) => run.trace.events.filter((e) => e.event === 'compaction');

/** `run 2 of 3: s06_prompt, started 2026-11-24 10:00:00 UTC, in /home/me/app` */
function describeRun(run: Replay, k: number): string {
  const header = run.trace.runs[k];
  const where = header.workspace ? `, in ${header.workspace}` : '';
  return `run ${k + 1} of ${run.trace.runs.length}: ${chapterOf(header)}, started ` +
    `${when(header.started)}${where}`;
}

function renderChart(run: Replay): string {
  const steps = run.rows.filter((row) => row.isRequest);
  if (steps.length === 0) return '<section class="chart"><p>No requests.</p></section>';
  // The steps share the plot's width: a short run's are wide, a long run's a pixel or so.
  const right = CHART.width - CHART.right;
  const width = (right - CHART.left) / steps.length;
  const xOf = (i: number) => CHART.left + i * width; // the left of step i; of steps.length: the end
  const totals = steps.map((row) => (row.usage ? inputOf(row.usage) + row.usage.output : 0));
  // Not Math.max(...totals): a spread of 300,000 arguments overflows the stack.
  const highest = totals.reduce((a, b) => Math.max(a, b), 1);
  // A window far above every request (200,000 tokens, and a short run) would flatten the steps
  // to nothing: then the chart stops short of it, and says so under it.
  const shown = run.contexts.map((c) => (c && c.threshold <= highest * 2.5 ? c : undefined));
  const reach = shown.reduce((a, c) => Math.max(a, c?.window ?? 0), highest) * 1.05;
  const tick = tickStep(reach);
  const top = Math.ceil(reach / tick) * tick;
  const y: Scale = (value) => round(CHART.top + CHART.height - (value / top) * CHART.height);

  // Where each run's steps start, and where each compaction falls: before the step sent after it.
  const starts = run.trace.runs.map(() => steps.length); // then the first step of each run
  for (let i = steps.length - 1; i >= 0; i--) starts[steps[i].run] = i;
  for (let k = starts.length - 2; k >= 0; k--) starts[k] = Math.min(starts[k], starts[k + 1]);
  const compactions = compactionsOf(run).map((event) =>
    ({ event, at: indexOr(steps.findIndex((row) => sentAfter(row, event)), steps.length) }));
  let previous: Context | undefined; // the last run's before this one that said its window
  const limitLines = shown.flatMap((context, k) => {
    if (!context) return [];
    const before = previous;
    previous = context;
    const named = !before || JSON.stringify(before) !== JSON.stringify(context);
    return limits(context, y, xOf(starts[k]), xOf(starts[k + 1] ?? steps.length), { named });
  });
  const markers = placeLabels([
    ...starts.slice(1).map((at, i) => ({ x: round(xOf(at)), label: `run ${i + 2}`,
      draw: (row: number | undefined) => runMarker(describeRun(run, i + 1), xOf(at), row) })),
    ...compactions.map(({ event, at }) => ({ x: round(xOf(at)), label: `C${tierOf(event)}`,
      draw: (row: number | undefined) => compactionMarker(event, xOf(at), row) })),
  ]);
  const stretches = new Set([...starts.slice(1), ...compactions.map((c) => c.at)]);
  const parts = [
    axis(top, tick, y, right),
    ...steps.map((row, i) => step(row, xOf(i), width, y)),
    ...limitLines,
    ...placeholderMarks(steps, stretches, (i) => xOf(i) + width / 2),
    ...markers,
  ];
  const height = CHART.top + CHART.height + CHART.bottom;
  const label = `Tokens of each of the ${plural(steps.length, 'request')}`;
  const offScale = [...new Set(run.contexts.flatMap((c, k) =>
    (c && !shown[k] ? [describeOffScale(c)] : [])))];
  const note = offScale.length ? `<p class="note off-scale">${offScale.join(' ')}</p>\n` : '';
  return `<section class="chart">
<div class="plot"><svg${width < 4 ? ' class="dense"' : ''} width="${CHART.width}" \
height="${height}" viewBox="0 0 ${CHART.width} ${height}" aria-label="${escapeHtml(label)}">
${parts.join('\n')}
</svg></div>
<p class="hover" id="chart-info">Point at a step to see its tokens; click it to open its \
request.</p>
${note}${legend({ lines: limitLines.length > 0, runs: run.trace.runs.length > 1 })}
</section>`;
}

const indexOr = (index: number, otherwise: number) => (index === -1 ? otherwise : index);
const round = (value: number) => Math.round(value * 10) / 10;
const short = (n: number) => (n >= 1000 ? `${round(n / 1000)}k` : String(Math.round(n)));

/** A round step between grid lines, four or five of them: 1, 2, 2.5 or 5 times a power of 10. */
function tickStep(highest: number): number {
  const rough = highest / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((step) => step >= rough)!;
}

function axis(top: number, tick: number, y: Scale, right: number): string {
  const lines: string[] = [];
  for (let value = 0; value <= top; value += tick) {
    const grid = `<line class="grid" x1="${CHART.left}" x2="${right}" y1="${y(value)}" \
y2="${y(value)}"/>`;
    lines.push(`${grid}<text class="tick" x="${CHART.left - 6}" y="${y(value) + 4}">\
${short(value)}</text>`);
  }
  return lines.join('\n');
}

const STEP_CLASS: Record<string, string> = { main: 'main', 'sub-agent': 'sub-agent' };

/**
 * One request, a link to its line in the list: its input (read from the cache, written to it,
 * uncached) and its output stacked, a red foot if it failed, a band on top if an agent other
 * than the main one sent it. All above the axis: nothing is drawn below zero tokens.
 */
function step(row: Row, x: number, width: number, y: Scale): string {
  // Bars with a gap between them while there is room for one; past that, side by side.
  const bar = width >= 4 ? Math.min(MAX_BAR, width * 0.8) : width;
  const left = round(x + (width - bar) / 2);
  const base = CHART.top + CHART.height;
  const rect = (kind: string, top: number, height: number) =>
    `<rect class="${kind}" x="${left}" y="${top}" width="${round(bar)}" height="${height}"/>`;
  // A hit area of the step's full height: a short bar is as easy to point at as a tall one.
  const parts = [`<rect class="hit" x="${round(x)}" y="${CHART.top}" width="${round(width)}" \
height="${CHART.height}"/>`];
  const u = row.usage;
  const stack: [string, number][] = u
    ? [['read', u.read], ['written', u.written], ['uncached', u.uncached], ['output', u.output]]
    : [];
  let level = 0;
  for (const [kind, value] of stack) {
    if (value <= 0) continue;
    const bottom = y(level);
    level += value;
    parts.push(rect(kind, y(level), round(bottom - y(level))));
  }
  const foot = hasFailed(row) ? 'failure' : wasInterrupted(row) ? 'interrupted' : undefined;
  if (foot) parts.push(rect(foot, base - 6, 6));
  // The band sits on the bar: under the axis it would read as tokens below zero.
  const top = Math.min(y(level), foot ? base - 6 : base);
  if (row.agent !== 'main') parts.push(rect('band', round(top - 8), 6));
  const classes = ['step', STEP_CLASS[row.agent] ?? 'summariser'];
  if (hasFailed(row)) classes.push('failed');
  if (wasInterrupted(row)) classes.push('interrupted');
  return `<a class="${classes.join(' ')}" data-n="${row.n}" href="#r${row.n}"><title>\
${escapeHtml(stepTitle(row))}</title>${parts.join('')}</a>`;
}

function stepTitle(row: Row): string {
  const who = `#${row.n} ${row.agent}${row.try > 1 ? `, try ${row.try}` : ''}`;
  if (!row.usage) return `${who}: ${failure(row) || 'no usage'}`;
  const u = row.usage;
  const input = `${number(inputOf(u))} in (${number(u.read)} read from the cache, ` +
    `${number(u.written)} written to it, ${number(u.uncached)} uncached)`;
  const cleared = row.placeholders ? `; ${placeholders(row.placeholders)} for the first time` : '';
  return `${who}: ${input}, ${number(u.output)} out${cleared}`;
}

/** `1 tool result sent as a placeholder`, `3 tool results sent as placeholders` */
const placeholders = (n: number) =>
  `${plural(n, 'tool result')} sent as ${n === 1 ? 'a placeholder' : 'placeholders'}`;

/**
 * Tier 1 sends old results as placeholders on nearly every request of a long run: a mark on each
 * would be a solid band. So one mark a stretch (from a compaction or the start of a run to the
 * next), on the first request of it that sent one, saying how many the stretch sent in all.
 */
function placeholderMarks(steps: Row[], stretches: Set<number>, middleOf: (i: number) => number) {
  const marks: { i: number; first: Row; last: Row; results: number }[] = [];
  let open: (typeof marks)[number] | undefined;
  steps.forEach((row, i) => {
    if (stretches.has(i)) open = undefined;
    if (!row.placeholders) return;
    if (!open) marks.push(open = { i, first: row, last: row, results: 0 });
    open.last = row;
    open.results += row.placeholders;
  });
  return marks.map(({ i, first, last, results }) => {
    const middle = round(middleOf(i));
    const until = last === first ? `in #${first.n}` : `from #${first.n} to #${last.n}`;
    const what = `${placeholders(results)} ${until}`;
    return `<a class="placeholder-mark" href="#r${first.n}"><path class="placeholders" \
data-n="${first.n}" d="M${middle - 4} ${MARK_ROW}h8l-4 7z"/><title>${what}</title></a>`;
  });
}

/**
 * Each marker's label goes in the first row where it clears the label before it; a label with no
 * room left is not drawn (its line, and its title, still are).
 */
function placeLabels(markers: { x: number; label: string; draw: (row?: number) => string }[]) {
  const ends = LABEL_ROWS.map(() => -Infinity);
  return markers.sort((a, b) => a.x - b.x).map(({ x, label, draw }) => {
    const row = ends.findIndex((end) => x + 3 >= end);
    if (row !== -1) ends[row] = x + 3 + label.length * 7 + 4; // 11px text: about 7px a letter
    return draw(row === -1 ? undefined : row);
  });
}

/** A dashed line down from the label rows, and `C2` or `C3` in the row it was given. */
function compactionMarker(event: TraceEvent, x: number, row: number | undefined): string {
  const tier = tierOf(event);
  const left = round(x);
  const text = row === undefined ? '' : `<text x="${left + 3}" y="${LABEL_ROWS[row]}">C${tier}\
</text>`;
  return `<g class="compaction tier-${tier}" data-tier="${tier}"><line x1="${left}" \
x2="${left}" y1="${LABEL_ROWS[0] - 10}" y2="${CHART.top + CHART.height}"/>${text}\
<title>${describeCompaction(event)}</title></g>`;
}

/** A thin line where a run appended to the same file starts, and `run 2`. */
function runMarker(description: string, x: number, row: number | undefined): string {
  const left = round(x);
  const label = /^run \d+/.exec(description)![0];
  const text = row === undefined ? '' : `<text x="${left + 3}" y="${LABEL_ROWS[row]}">${label}\
</text>`;
  return `<g class="run-start"><line x1="${left}" x2="${left}" y1="${LABEL_ROWS[0] - 10}" \
y2="${CHART.top + CHART.height + 14}"/>${text}<title>${escapeHtml(description)}</title></g>`;
}

function describeOffScale({ window, threshold }: Context): string {
  return `Above the top of the chart: the context window, ${number(window)} tokens, and the \
compaction threshold, ${number(threshold)}.`;
}

/** The window and threshold of one run, from its first step to the next run's. */
function limits({ window, threshold }: Context, y: Scale, from: number, to: number,
  options: { named: boolean }) {
  const lines: [string, number, string][] = [
    ['window', window, 'context window'],
    ['threshold', threshold, 'compaction threshold'],
  ];
  // A name only where there is room for it, and once for a value the runs share.
  const named = options.named && to - from > 180;
  return lines.map(([kind, value, name]) => `<g class="${kind}"><line x1="${round(from)}" \
x2="${round(to)}" y1="${y(value)}" y2="${y(value)}"/>${named ? `<text x="${round(from) + 4}" \
y="${y(value) - 4}">${name} ${number(value)}</text>` : ''}</g>`);
}

function legend(options: { lines: boolean; runs: boolean }): string {
  const items: [string, string][] = [
    ['read', 'input read from the cache'],
    ['written', 'input written to the cache'],
    ['uncached', 'input, uncached'],
    ['output', 'output'],
    ['sub-agent', 'sent by a sub-agent'],
    ['summariser', 'a compaction summary request'],
    ['failure', 'failed (an error, or no complete reply)'],
    ['interrupted', 'interrupted (Ctrl+C, or a silent stream given up on)'],
    ['compaction', 'compaction (C2 automatic, C3 asked for)'],
    ['placeholders', 'where tool results start going out as placeholders'],
  ];
  if (options.runs) items.push(['run-start', 'the start of a run (appended to the same file)']);
  if (options.lines) {
    items.push(['window', 'context window'], ['threshold', 'compaction threshold']);
  }
  const shown = items.map(([kind, name]) =>
    `<li><span class="swatch swatch-${kind}"></span>${name}</li>`);
  return `<ul class="legend">${shown.join('')}</ul>`;
}

// ── The list: one line per exchange; page.js fills a line in when it is opened ─────────────────

function renderList(run: Replay): string {
  const compactions = compactionsOf(run);
  const several = run.trace.runs.length > 1;
  const lines: string[] = [];
  let next = 0; // the next compaction to place
  let current = -1; // the run of the last line
  const place = (before: (event: NumberedEvent) => boolean) => {
    while (next < compactions.length && before(compactions[next])) {
      lines.push(compactionLine(compactions[next++]));
    }
  };
  const startRuns = (upTo: number) => {
    for (; current < upTo; current++) if (several) lines.push(runLine(run, current + 1));
  };
  const starts = new Map<number, number>(); // each run's first time sent, for the `+4.2 s`
  for (const row of run.rows) {
    if (!starts.has(row.run)) starts.set(row.run, row.times.sent);
    place((event) => event.run < row.run); // the last compactions of the runs before this one
    startRuns(row.run);
    place((event) => sentAfter(row, event));
    lines.push(requestLine(row, starts.get(row.run)!));
  }
  place(() => true);
  startRuns(run.trace.runs.length - 1); // runs after the last exchange, with none of their own
  const runs = several ? ` The file holds ${run.trace.runs.length} runs, appended one after the \
other: each starts with a line of its own, and numbers on from the last.` : '';
  return `<main>
<h2>Requests</h2>
<p class="note">Each line opens to show the request as sent: what is new since the same \
agent's previous request, set apart from what was sent again.${runs}</p>
<div class="requests">
${lines.join('\n')}
</div>
</main>`;
}

function compactionLine(event: TraceEvent): string {
  const tier = tierOf(event);
  return `<div class="event compaction" data-tier="${tier}">${describeCompaction(event)}</div>`;
}

function runLine(run: Replay, k: number): string {
  return `<div class="event run-start" id="run${k + 1}">${escapeHtml(describeRun(run, k))}</div>`;
}

// The agent's name is text from the trace: it becomes a class only if it is one of these.
const AGENTS = ['main', 'sub-agent', 'compaction'];

/** `#7 +4.2 s main tool_use 9 messages: 2 new … in 3,681 · out 78 $0.0081 20 ms` */
function requestLine(row: Row, start: number): string {
  const agent = AGENTS.includes(row.agent) ? `agent agent-${row.agent}` : 'agent';
  const bits: [string, string][] = [
    ['n', `#${row.n}`],
    ['at', `+${duration(row.times.sent - start)}`],
    [agent, row.agent],
  ];
  if (row.try > 1) bits.push(['retry', `try ${row.try}`]);
  if (!row.isRequest) bits.push(['path', `${row.method} ${row.path}`]);
  if (isModelLookup(row)) bits.push(['what', "the model's context window, looked up at start-up"]);
  if (hasFailed(row)) bits.push(['error', failure(row)]);
  if (wasInterrupted(row)) bits.push(['interrupted', `interrupted: ${row.error}`]);
  if (row.retriedAs) bits.push(['retry', `retried as #${row.retriedAs}`]);
  const stop = (row.response as { stop_reason?: unknown } | null)?.stop_reason;
  if (row.isRequest && typeof stop === 'string') bits.push(['stop', stop]);
  if (row.marks !== undefined) bits.push(['messages', describeMarks(row.marks)]);
  if (row.summary) bits.push(['has-summary', 'summary']);
  if (row.placeholders) {
    bits.push(['has-placeholders', plural(row.placeholders, 'new placeholder')]);
  }
  if (row.usage) {
    const u = row.usage;
    // `in 1,649 (cache: 1,329 read, 320 written) · out 93`
    const cache = [u.read && `${number(u.read)} read`, u.written && `${number(u.written)} written`]
      .filter(Boolean);
    const cached = cache.length ? ` (cache: ${cache.join(', ')})` : '';
    bits.push(['tokens', `in ${number(inputOf(u))}${cached} · out ${number(u.output)}`]);
    if (!row.offline) bits.push(['cost', dollars(row.cost)]); // no price for the offline model
  }
  const { sent, done } = row.times;
  bits.push(['time', seconds(done === null ? null : done - sent)]);
  const summary = bits.map(([kind, text]) => `<span class="${kind}">${escapeHtml(text)}</span>`);
  return `<details class="request${row.isRequest ? '' : ' other'}" id="r${row.n}" \
data-n="${row.n}"><summary>${summary.join(' ')}</summary><div class="body"></div></details>`;
}

/** 'rrrnn' → `5 messages: 2 new`; 'n' → `1 new message` */
function describeMarks(marks: string): string {
  const fresh = marks.split('n').length - 1;
  const changed = marks.split('c').length - 1;
  if (fresh === marks.length) return plural(fresh, 'new message');
  const split = [fresh && `${fresh} new`, changed && `${changed} changed`].filter(Boolean);
  const sent = plural(marks.length, 'message');
  return split.length ? `${sent}: ${split.join(', ')}` : `${sent}, all resent`;
}
