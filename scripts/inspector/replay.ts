/**
 * The replay: each exchange of the trace as a row, what the chart, the list and page.js show of
 * it (tokens, cost, the messages compared with the last request's, retries), and how it ended.
 */
import { compareWithPrevious, Distinct } from './distinct.ts';
import { count, isPlaceholder, isSummary } from './requests.ts';
import {
  isMessagesRequest,
  type Exchange,
  type NumberedExchange,
  type Sent,
  type Trace,
  type TraceHeader,
} from './trace.ts';
import { finite, isObject, textOf } from './untrusted.ts';

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
export type Context = { window: number; threshold: number };

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

/**
 * Stopped by the reader (Ctrl+C), not by the API: what shared/trace.ts writes for a request
 * aborted before the response began (the SDK's words, or fetch's), in the middle of a stream,
 * or still open when the program exited. (A stream the chapter gave up on as silent is aborted
 * the same way: the trace cannot tell the two apart.)
 */
const INTERRUPTED = new RegExp('^(Request was aborted\\.|This operation was aborted|' +
  'aborted before the reply was complete|the program exited before the end)');
export const wasInterrupted = (row: Row) =>
  (row.status ?? 200) < 400 && row.error !== undefined && INTERRUPTED.test(row.error);
export const hasFailed = (row: Row) =>
  !wasInterrupted(row) && (Boolean(row.error) || (row.status ?? 200) >= 400);

/** What went wrong, in a few words: `529 overloaded_error`, `Request was aborted.` */
export function failure(row: Row): string {
  if (!hasFailed(row)) return '';
  const body = row.response as { error?: { type?: unknown } } | null;
  const type = textOf(body?.error?.type ?? 'error'); // as the endpoint sent it: maybe not a text
  const status = (row.status ?? 200) >= 400 ? `${row.status} ${type}` : '';
  return [status, row.error].filter(Boolean).join(' ');
}
