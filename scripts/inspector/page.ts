/**
 * The page `npm run inspect` writes (scripts/inspect.ts): a trace of a chapter's run (--trace,
 * shared/trace.ts) as one self-contained HTML file that replays the run request by request.
 * Tooling for readers, not a chapter's mechanism.
 *
 * Drawn here, in Node: the header, a chart of the run as SVG (one step per request, so it shows
 * with no script), and one line per request. What a request held is drawn by page.js in the
 * browser when its line is opened, from a JSON data island that stores each message once, however
 * many requests sent it again: the page grows with the conversation, not with its square.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Usage } from '@anthropic-ai/sdk/resources';
import { cost } from '../../s06_prompt/cache.ts';

// ── Reading a trace ────────────────────────────────────────────────────────────────────────────

export interface TraceHeader {
  type: 'trace';
  version: number;
  chapter?: string; // "s05_context_compact"
  workspace?: string;
  started?: string; // an ISO date
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

export interface Trace {
  header: TraceHeader;
  exchanges: Exchange[]; // in the order they were sent
  events: TraceEvent[]; // in the order they happened
  skipped: number; // lines cut off mid-write, or of a kind this page does not know
}

export class NotATraceError extends Error {}

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

function asExchange(value: unknown): Exchange | undefined {
  if (!isObject(value) || value.type !== 'exchange' || !finite(value.n)) return;
  if (typeof value.path !== 'string' || !finite(value.times?.sent)) return;
  // Fill in what an older or partial recorder may have left out, so the rest need not ask.
  const { sent, firstByte, done } = value.times;
  return {
    ...value,
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

const isEvent = (value: unknown): value is TraceEvent =>
  isObject(value) && value.type === 'event' && KNOWN_EVENTS.has(value.event) && finite(value.at);

/**
 * The header, exchanges and events of a trace. A line that is not JSON (the last one, cut off
 * when the run was killed) or not of a kind known here is skipped and counted, not fatal; a first
 * line that is not a trace header is: the file is something else.
 */
export function readTrace(text: string): Trace {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.trim() !== '');
  const header = first === -1 ? undefined : parseLine(lines[first]);
  if (!isObject(header) || header.type !== 'trace') {
    const what = first === -1 ? 'it is empty' : 'its first line is not {"type":"trace",…}';
    throw new NotATraceError(`not a trace: ${what}`);
  }
  const exchanges: Exchange[] = [];
  const events: TraceEvent[] = [];
  let skipped = 0;
  for (const line of lines.slice(first + 1)) {
    if (line.trim() === '') continue;
    const value = parseLine(line);
    const exchange = asExchange(value);
    if (exchange) exchanges.push(exchange);
    else if (isEvent(value)) events.push(value);
    else skipped++;
  }
  // Lines are written as things complete: a slow exchange lands after a later one.
  exchanges.sort((a, b) => a.n - b.n);
  events.sort((a, b) => (a.exchanges ?? 0) - (b.exchanges ?? 0) || a.at - b.at);
  return { header: header as TraceHeader, exchanges, events, skipped };
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
    for (let k = 0; k < times; k++) loose.set(key, [...(loose.get(key) ?? []), id]);
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
  n: number;
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
}

export interface Replay {
  trace: Trace;
  rows: Row[];
  values: Distinct;
  context?: { window: number; threshold: number };
}

const tokens = (value: unknown) => (finite(value) ? value : 0);

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

function rowOf(exchange: Exchange): Row {
  const { n, agent, method, path, status, error, retryAfter, times, response } = exchange;
  const isRequest = method === 'POST' && path === '/v1/messages';
  const row: Row = { n, try: exchange.try, agent, method, path, status, error, retryAfter, times,
    isRequest, response, placeholders: 0, summary: false };
  row.usage = isRequest ? usageOf(response) : undefined;
  const model = exchange.request?.model;
  if (row.usage && typeof model === 'string') {
    const { read, written, uncached, output } = row.usage;
    const usage = { input_tokens: uncached, output_tokens: output,
      cache_read_input_tokens: read, cache_creation_input_tokens: written } as Usage;
    row.cost = cost(model, usage);
  }
  return row;
}

/** What a request sent: each part stored once, each message compared with the last request's. */
function readRequest(row: Row, body: Record<string, any>, before: Row | undefined,
  values: Distinct) {
  const { system, tools, messages, ...params } = body;
  row.params = params;
  if (system !== undefined) row.system = values.add(system);
  if (tools !== undefined) row.tools = values.add(tools);
  const breakpoints: [number, number][] = [];
  const ids = (messages as unknown[]).map((message, i) =>
    values.add(takeBreakpoints(message, i, breakpoints)));
  const { marks, why } = compareWithPrevious(ids, before?.messages ?? [], values);
  Object.assign(row, { messages: ids, marks, why, breakpoints });
  ids.forEach((id, i) => {
    const message = values.values[id];
    if (marks[i] !== 'r') row.placeholders += count(message, isPlaceholder);
    if (marks[i] === 'n' && isSummary(message)) row.summary = true;
  });
}

/** Every exchange as a row, each message stored once and compared with what went before. */
export function replay(trace: Trace): Replay {
  const values = new Distinct();
  const latest = new Map<string, Row>(); // each agent's latest request
  const rows = trace.exchanges.map((exchange) => {
    const row = rowOf(exchange);
    if (!row.isRequest) return row;
    const before = latest.get(row.agent);
    latest.set(row.agent, row);
    // The SDK's retry sends the same body again: say which try it repeats.
    if (row.try > 1 && before) {
      row.retryOf = before.n;
      before.retriedAs = row.n;
    }
    const body = exchange.request;
    if (isObject(body) && Array.isArray(body.messages)) readRequest(row, body, before, values);
    return row;
  });
  const event = trace.events.findLast((e) => e.event === 'context');
  const context = event && { window: Number(event.window), threshold: Number(event.threshold) };
  const known = context && context.window > 0 && context.threshold > 0;
  return { trace, rows, values, context: known ? context : undefined };
}

// ── Writing HTML ───────────────────────────────────────────────────────────────────────────────

const ESCAPES: Record<string, string> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
};
/** Text as HTML text or an attribute value: nothing in it can open a tag or end a quote. */
export const escapeHtml = (text: unknown) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);

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

/** The whole page for the text of a trace. Throws NotATraceError if it is not one. */
export function renderPage(traceText: string, options: { title?: string } = {}): string {
  const run = replay(readTrace(traceText));
  const { header } = run.trace;
  const title = options.title ?? `${header.chapter ?? 'agent'} trace, ${when(header.started)}`;
  const rows = JSON.stringify(withSharedLists(run.rows));
  const island = `{"values":[${run.values.json.join(',')}],"rows":${rows}}`;
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
  const latest = new Map<string, Row>(); // each agent's latest request with messages
  return rows.map((row) => {
    if (!row.messages) return row;
    const before = latest.get(row.agent);
    latest.set(row.agent, row);
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

function renderHeader(run: Replay, title: string): string {
  const { header, skipped } = run.trace;
  const requests = run.rows.filter((row) => row.isRequest);
  const byAgent = new Map<string, number>();
  for (const row of requests) byAgent.set(row.agent, (byAgent.get(row.agent) ?? 0) + 1);
  const agents = [...byAgent].map(([agent, n]) => `${number(n)} ${agent}`).join(', ');
  const failed = requests.filter(hasFailed).length;
  const used = requests.flatMap((row) => (row.usage ? [row.usage] : []));
  const sum = (part: (u: NonNullable<Row['usage']>) => number) =>
    used.reduce((total, u) => total + part(u), 0);
  const input = sum(inputOf);
  const fromCache = input ? Math.round((sum((u) => u.read) / input) * 100) : 0;
  const costs = requests.flatMap((row) => (row.cost === undefined ? [] : [row.cost]));
  const unpriced = used.length - costs.length;
  const total = costs.length ? dollars(costs.reduce((a, b) => a + b, 0)) : '—';
  const first = run.rows[0]?.times.sent;
  const last = Math.max(...run.rows.map((row) => row.times.done ?? row.times.sent));

  const facts = [
    `${number(requests.length)} requests${agents ? ` (${agents})` : ''}`,
    failed ? `${number(failed)} failed` : '',
    `${number(input)} input tokens, ${fromCache}% read from the cache`,
    `${number(sum((u) => u.output))} output tokens`,
    `cost ${total}${unpriced && costs.length ? ` (and ${unpriced} of unknown price)` : ''}`,
    first === undefined ? '' : `${duration(last - first)} from the first request to the last`,
    run.context ? `context window ${number(run.context.window)} tokens, ` +
      `compaction from ${number(run.context.threshold)}` : '',
  ].filter(Boolean);
  const where = [`${header.chapter ?? 'agent'}, started ${when(header.started)}`];
  if (header.workspace) where.push(`in ${header.workspace}`);
  const lines = `line${skipped === 1 ? '' : 's'}`;
  const note = skipped ? `<p class="note">${number(skipped)} ${lines} of the trace skipped: cut ` +
    'off mid-write, or of a kind this page does not know.</p>\n' : '';
  return `<header>
<h1>${escapeHtml(title)}</h1>
<p class="where">${escapeHtml(where.join(' · '))}</p>
<ul class="facts">${facts.map((fact) => `<li>${escapeHtml(fact)}</li>`).join('')}</ul>
${note}</header>`;
}

const hasFailed = (row: Row) => Boolean(row.error) || (row.status ?? 200) >= 400;

/** What went wrong, in a few words: `529 overloaded_error`, `Request was aborted.` */
function failure(row: Row): string {
  if (!hasFailed(row)) return '';
  const body = row.response as { error?: { type?: unknown } } | null;
  const status = (row.status ?? 200) >= 400 ? `${row.status} ${body?.error?.type ?? 'error'}` : '';
  return [status, row.error].filter(Boolean).join(' ');
}

// ── The chart: one step per request, drawn here so it needs no script ──────────────────────────

const PLOT = { left: 64, top: 36, height: 200, bottom: 36, right: 24 };
type Scale = (tokens: number) => number; // tokens → y

/**
 * An event goes before the first exchange sent after it: the recorder counts the exchanges sent
 * before each event. (A trace without that count: the first sent later, its summary's aside.)
 */
function sentAfter(row: Row, event: TraceEvent): boolean {
  if (finite(event.exchanges)) return row.n > event.exchanges;
  return row.agent !== 'compaction' && row.times.sent >= event.at;
}

/** Tier 3 is a compaction you or the model asked for; tier 2, one that had to happen. */
function tierOf(event: TraceEvent): number {
  return event.why === 'you asked' || event.why === 'the model asked' ? 3 : 2;
}

function describeCompaction(event: TraceEvent): string {
  const [why, messages, before, after] = [event.why, event.messages, event.before, event.after]
    .map((value) => escapeHtml(value ?? '?'));
  return `compaction, tier ${tierOf(event)} (${why}): ${messages} messages replaced by a ` +
    `summary; context ${before} → ${after} tokens (estimated)`;
}

function renderChart(run: Replay): string {
  const steps = run.rows.filter((row) => row.isRequest);
  if (steps.length === 0) return '<section class="chart"><p>No requests.</p></section>';
  // Wide enough to point at a step; a long run scrolls sideways.
  const width = Math.min(64, Math.max(3, 1040 / steps.length));
  const totals = steps.map((row) => (row.usage ? inputOf(row.usage) + row.usage.output : 0));
  const highest = Math.max(1, ...totals);
  // A window far above every request (200,000 tokens, and a short run) would flatten the steps
  // to nothing: then the chart stops short of it, and says so under it.
  const limit = run.context && run.context.threshold <= highest * 2.5 ? run.context : undefined;
  const reach = Math.max(highest, limit?.window ?? 0) * 1.05;
  const tick = tickStep(reach);
  const top = Math.ceil(reach / tick) * tick;
  const y: Scale = (value) => round(PLOT.top + PLOT.height - (value / top) * PLOT.height);
  const right = PLOT.left + width * steps.length;
  const compactions = run.trace.events.filter((event) => event.event === 'compaction');
  const parts = [
    axis(top, tick, y, right),
    ...steps.map((row, i) => step(row, PLOT.left + i * width, width, y)),
    ...(limit ? limits(limit, y, right) : []),
    ...compactions.map((event) => {
      const after = steps.findIndex((row) => sentAfter(row, event));
      return compactionMarker(event, PLOT.left + (after === -1 ? steps.length : after) * width);
    }),
  ];
  const [svgWidth, svgHeight] = [right + PLOT.right, PLOT.top + PLOT.height + PLOT.bottom];
  const label = `Tokens of each of the ${steps.length} requests`;
  return `<section class="chart">
<div class="plot"><svg width="${svgWidth}" height="${svgHeight}" \
viewBox="0 0 ${svgWidth} ${svgHeight}" aria-label="${escapeHtml(label)}">
${parts.join('\n')}
</svg></div>
<p class="hover" id="chart-info">Point at a step to see its tokens; click it to open its \
request.</p>
${run.context && !limit ? offScale(run.context) : ''}${legend({ lines: Boolean(limit) })}
</section>`;
}

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
    const grid = `<line class="grid" x1="${PLOT.left}" x2="${right}" y1="${y(value)}" \
y2="${y(value)}"/>`;
    lines.push(`${grid}<text class="tick" x="${PLOT.left - 6}" y="${y(value) + 4}">\
${short(value)}</text>`);
  }
  return lines.join('\n');
}

const STEP_CLASS: Record<string, string> = { main: 'main', 'sub-agent': 'sub-agent' };

/**
 * One request, a link to its line in the list: its input (read from the cache, written to it,
 * uncached) and its output stacked, a red foot if it failed, a band under it if an agent other
 * than the main one sent it, a triangle over it if it sent placeholders for the first time.
 */
function step(row: Row, x: number, width: number, y: Scale): string {
  const left = round(x);
  const bar = round(Math.max(1, width * 0.8));
  const base = PLOT.top + PLOT.height;
  const rect = (kind: string, top: number, height: number) =>
    `<rect class="${kind}" x="${left}" y="${top}" width="${bar}" height="${height}"/>`;
  // A hit area of the step's full height: a short bar is as easy to point at as a tall one.
  const parts = [`<rect class="hit" x="${left}" y="${PLOT.top}" width="${round(width)}" \
height="${PLOT.height + 14}"/>`];
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
  if (hasFailed(row)) parts.push(rect('failure', base - 6, 6));
  if (row.agent !== 'main') parts.push(rect('band', base + 4, 6));
  if (row.placeholders > 0) {
    const middle = round(x + bar / 2);
    const what = `${row.placeholders} tool result(s) sent as placeholders for the first time`;
    parts.push(`<path class="placeholders" data-n="${row.n}" d="M${middle - 4} ${PLOT.top - 12}\
h8l-4 7z"><title>${what}</title></path>`);
  }
  const classes = ['step', STEP_CLASS[row.agent] ?? 'summariser'];
  if (hasFailed(row)) classes.push('failed');
  return `<a class="${classes.join(' ')}" data-n="${row.n}" href="#r${row.n}"><title>\
${escapeHtml(stepTitle(row))}</title>${parts.join('')}</a>`;
}

function stepTitle(row: Row): string {
  const who = `#${row.n} ${row.agent}${row.try > 1 ? `, try ${row.try}` : ''}`;
  if (!row.usage) return `${who}: ${failure(row) || 'no usage'}`;
  const u = row.usage;
  const input = `${number(inputOf(u))} in (${number(u.read)} read from the cache, ` +
    `${number(u.written)} written to it, ${number(u.uncached)} uncached)`;
  return `${who}: ${input}, ${number(u.output)} out`;
}

function offScale({ window, threshold }: NonNullable<Replay['context']>): string {
  return `<p class="note off-scale">Above the top of the chart: the context window, \
${number(window)} tokens, and the compaction threshold, ${number(threshold)}.</p>\n`;
}

function limits({ window, threshold }: NonNullable<Replay['context']>, y: Scale, right: number) {
  const lines: [string, number, string][] = [
    ['window', window, 'context window'],
    ['threshold', threshold, 'compaction threshold'],
  ];
  return lines.map(([kind, value, name]) => `<g class="${kind}"><line x1="${PLOT.left}" \
x2="${right}" y1="${y(value)}" y2="${y(value)}"/><text x="${PLOT.left + 4}" y="${y(value) - 4}">\
${name} ${number(value)}</text></g>`);
}

function compactionMarker(event: TraceEvent, x: number): string {
  const tier = tierOf(event);
  const [left, top] = [round(x), PLOT.top - 28];
  return `<g class="compaction tier-${tier}" data-tier="${tier}"><line x1="${left}" \
x2="${left}" y1="${top}" y2="${PLOT.top + PLOT.height}"/><text x="${left + 3}" y="${top + 8}">\
C${tier}</text><title>${describeCompaction(event)}</title></g>`;
}

function legend(options: { lines: boolean }): string {
  const items: [string, string][] = [
    ['read', 'input read from the cache'],
    ['written', 'input written to the cache'],
    ['uncached', 'input, uncached'],
    ['output', 'output'],
    ['sub-agent', 'sent by a sub-agent'],
    ['summariser', 'a compaction summary request'],
    ['failure', 'failed (error or no complete reply)'],
    ['compaction', 'compaction (C2 automatic, C3 asked for)'],
    ['placeholders', 'tool results replaced by placeholders'],
  ];
  if (options.lines) {
    items.push(['window', 'context window'], ['threshold', 'compaction threshold']);
  }
  const shown = items.map(([kind, name]) =>
    `<li><span class="swatch swatch-${kind}"></span>${name}</li>`);
  return `<ul class="legend">${shown.join('')}</ul>`;
}

// ── The list: one line per exchange; page.js fills a line in when it is opened ─────────────────

function renderList(run: Replay): string {
  const start = run.rows[0]?.times.sent ?? 0;
  const compactions = run.trace.events.filter((event) => event.event === 'compaction');
  const lines: string[] = [];
  let next = 0; // the next compaction to place
  for (const row of run.rows) {
    while (next < compactions.length && sentAfter(row, compactions[next])) {
      lines.push(compactionLine(compactions[next++]));
    }
    lines.push(requestLine(row, start));
  }
  lines.push(...compactions.slice(next).map(compactionLine));
  return `<main>
<h2>Requests</h2>
<p class="note">Each line opens to show the request as sent: what is new since the same \
agent's previous request, set apart from what was sent again.</p>
<div class="requests">
${lines.join('\n')}
</div>
</main>`;
}

function compactionLine(event: TraceEvent): string {
  const tier = tierOf(event);
  return `<div class="event compaction" data-tier="${tier}">${describeCompaction(event)}</div>`;
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
  if (hasFailed(row)) bits.push(['error', failure(row)]);
  if (row.retriedAs) bits.push(['retry', `retried as #${row.retriedAs}`]);
  const stop = (row.response as { stop_reason?: unknown } | null)?.stop_reason;
  if (row.isRequest && typeof stop === 'string') bits.push(['stop', stop]);
  if (row.marks !== undefined) bits.push(['messages', describeMarks(row.marks)]);
  if (row.summary) bits.push(['has-summary', 'summary']);
  if (row.placeholders) bits.push(['has-placeholders', `${row.placeholders} placeholder(s)`]);
  if (row.usage) {
    const u = row.usage;
    const cached = u.read ? ` (${number(u.read)} cached)` : '';
    bits.push(['tokens', `in ${number(inputOf(u))}${cached} · out ${number(u.output)}`]);
    bits.push(['cost', dollars(row.cost)]);
  }
  const { sent, done } = row.times;
  bits.push(['time', seconds(done === null ? null : done - sent)]);
  const summary = bits.map(([kind, text]) => `<span class="${kind}">${escapeHtml(text)}</span>`);
  return `<details class="request${row.isRequest ? '' : ' other'}" id="r${row.n}" \
data-n="${row.n}"><summary>${summary.join(' ')}</summary><div class="body"></div></details>`;
}

/** 'rrrnn' → `5 messages: 2 new` */
function describeMarks(marks: string): string {
  const fresh = marks.split('n').length - 1;
  const changed = marks.split('c').length - 1;
  const split = [fresh && `${fresh} new`, changed && `${changed} changed`].filter(Boolean);
  const sent = `${marks.length} message${marks.length === 1 ? '' : 's'}`;
  return split.length ? `${sent}: ${split.join(', ')}` : sent;
}
