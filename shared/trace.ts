/**
 * --trace: every exchange with the API, written down for `npm run inspect` (s01–s06; inspection
 * machinery, not a chapter's mechanism and not needed to run one).
 *
 * With --trace, each HTTP exchange is appended to a JSON Lines file the moment it completes: the
 * request body exactly as sent, the response (the whole message, or the error's status and body),
 * the times, and which agent sent it. Every try counts: a 529 that the SDK retried is a line of its
 * own. The default file is in ~/.learn-agent-harness/traces/<workspace>-<hash>/, the folder where
 * `npm run inspect` looks for the newest one:
 *
 *   {"type":"trace","version":1,"chapter":"s05_context_compact","workspace":"/home/me/app",…}
 *   {"type":"exchange","n":1,"agent":"main","method":"POST","path":"/v1/messages","try":1,
 *    "request":{…},"status":200,"response":{…},"times":{"sent":…,"firstByte":…,"done":…}}
 *   {"type":"event","event":"compaction","at":…,"agent":"main","tier":2,"why":"auto",…}
 *
 * Headers are never written, so neither is the API key; the file is 0600 and its folder 0700. A
 * trace that cannot be written costs one warning, never a turn.
 */
import { APIError, type Middleware } from '@anthropic-ai/sdk';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Stream } from '@anthropic-ai/sdk/core/streaming';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, mkdirSync, realpathSync } from 'node:fs';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { DIM, paint, YELLOW } from './terminal.ts';

const VERSION = 1;

/** Where a workspace's traces go by default (and where `npm run inspect` looks). */
export function traceFolder(workspace: string): string {
  const root = realpathSync(workspace);
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 8);
  return join(os.homedir(), '.learn-agent-harness', 'traces', `${basename(root)}-${hash}`);
}

const trace = { file: '', sent: 0, broken: false }; // the file, exchanges so far, a failed write
const agents = new AsyncLocalStorage<string>(); // which agent the code running now works for

/** One line, appended now (synchronously: the program may exit right after). */
function write(line: object): void {
  if (!trace.file || trace.broken) return;
  try {
    appendFileSync(trace.file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  } catch (err) {
    trace.broken = true; // one warning, then the run goes on without a trace
    const why = (err as Error).message;
    console.error(paint(YELLOW, `(the trace could not be written: ${why}; no more tracing)`));
  }
}

/**
 * Start tracing: `file` is --trace=<file>, or '' for --trace (a new file in the default folder).
 * `chapter` names the program in the trace's first line.
 */
export function startTrace(file: string, chapter: string): void {
  const started = new Date().toISOString();
  const stamp = started.replace(/[:.]/g, '-');
  const folder = traceFolder(process.cwd());
  trace.file = file ? resolve(file) : join(folder, `${stamp}-${chapter}-${process.pid}.jsonl`);
  try {
    mkdirSync(dirname(trace.file), { recursive: true, mode: 0o700 }); // only folders it makes
    if (!file) chmodSync(folder, 0o700); // ours, perhaps made earlier under another umask
  } catch {} // write() below says what is wrong
  write({ type: 'trace', version: VERSION, chapter, workspace: process.cwd(), started });
  if (trace.broken) return;
  try {
    chmodSync(trace.file, 0o600); // --trace=<file> may name a file that was there before
  } catch {} // someone else's file, writable by us: it stays as its owner set it
  console.error(paint(DIM, `[trace: ${trace.file}]`));
}

/** Run `work` as `agent` ('sub-agent', 'compaction'): the requests it sends are marked so. */
export function traceAs<T>(agent: string, work: () => Promise<T>): Promise<T> {
  return agents.run(agent, work);
}

/**
 * Something that is not an exchange: a compaction, the context window found at start-up. It comes
 * after the first `exchanges` exchanges were sent (their lines may be written after it).
 */
export function traceEvent(event: string, fields: object): void {
  const agent = agents.getStore() ?? 'main';
  write({ type: 'event', event, at: Date.now(), agent, exchanges: trace.sent, ...fields });
}

interface Exchange {
  type: 'exchange';
  n: number;
  agent: string;
  method: string;
  path: string;
  try: number;
  request: unknown;
  status: number | null;
  response: unknown;
  error?: string;
  retryAfter?: number;
  times: { sent: number; firstByte: number | null; done: number | null };
}

const unfinished = new Set<Exchange>(); // sent, and not yet written
process.on('exit', () => {
  for (const exchange of unfinished) finish(exchange, 'the program exited before the end');
});

function finish(exchange: Exchange, error?: string): void {
  if (!unfinished.delete(exchange)) return;
  exchange.times.done = Date.now();
  if (error) exchange.error = error;
  write(exchange);
}

/** The body as sent, as JSON if it is JSON. */
function bodyOf(body: unknown): unknown {
  if (typeof body !== 'string') return null;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * The middleware (shared/client.ts) that records each try. It reads its own copy of the response,
 * and the SDK reads the other: a streamed reply is put together by the SDK's MessageStream, as the
 * chapter's is, while the chapter prints it.
 */
export const traceExchanges: Middleware = async (request, next, context) => {
  if (!trace.file || trace.broken) return next(request);
  const retries = Number(new Headers(request.headers).get('x-stainless-retry-count')) || 0;
  const exchange: Exchange = {
    type: 'exchange',
    n: ++trace.sent,
    agent: agents.getStore() ?? 'main',
    method: request.method ?? 'GET',
    path: new URL(request.url).pathname, // not the host: a base URL can hold a password
    try: retries + 1,
    request: bodyOf(request.body),
    status: null,
    response: null,
    times: { sent: Date.now(), firstByte: null, done: null },
  };
  unfinished.add(exchange);
  let response: Response;
  try {
    response = await next(request);
  } catch (err) {
    finish(exchange, (err as Error).message || String(err)); // refused, timed out, aborted
    throw err;
  }
  exchange.status = response.status;
  const after = Number(response.headers.get('retry-after'));
  if (after > 0) exchange.retryAfter = after;
  if (response.ok && context.options?.stream) {
    const events = await context.parse<Events>(response);
    void recordStream(exchange, events, request.signal ?? undefined);
    return response;
  }
  // An error, or a plain JSON answer: read it whole (the SDK does not read a body it retries).
  try {
    exchange.times.firstByte = Date.now();
    exchange.response = await context.parse(response);
    finish(exchange);
  } catch (err) {
    finish(exchange, `the response could not be read: ${(err as Error).message}`);
  }
  return response;
};

/** Read a streamed reply to its end, and write it with what it came to. */
type Events = Stream<RawMessageStreamEvent>;
async function recordStream(exchange: Exchange, events: Events, signal?: AbortSignal) {
  const stream = MessageStream.fromReadableStream(events.toReadableStream());
  stream.on('streamEvent', (_event, soFar) => {
    exchange.times.firstByte ??= Date.now();
    exchange.response = soFar; // as far as it got, should it go no further
  });
  try {
    exchange.response = await stream.finalMessage();
    finish(exchange);
  } catch (err) {
    // An error event; or the SDK's request was aborted (Ctrl+C, a stall) and this copy ended early.
    const aborted = signal?.aborted && !(err instanceof APIError);
    const why = aborted ? 'aborted before the reply was complete' : (err as Error).message;
    finish(exchange, why);
  }
}
