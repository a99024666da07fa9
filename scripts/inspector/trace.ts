/**
 * Reading a trace (the format is shared/trace.ts's): its runs, exchanges and events, each
 * request's body read into indexes of distinct values and let go. readTrace is the way in.
 */
import { Distinct, takeBreakpoints } from './distinct.ts';
import { finite, isObject, textOf } from './untrusted.ts';

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
export type NumberedExchange = Exchange & Numbered & { sent?: Sent };
export type NumberedEvent = TraceEvent & Numbered;

/**
 * What a POST /v1/messages sent, its parts as indexes into `values`. The body itself is not
 * kept: a long run's bodies are its conversation sent again and again, most of the trace.
 */
export interface Sent {
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
export const isMessagesRequest = ({ method, path }: { method: string; path: string }) =>
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
