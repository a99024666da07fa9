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
 *   {"type":"trace","version":1,"run":"3f9c0a1b2c4d","chapter":"s05_context_compact",…,
 *    "offline":false}
 *   {"type":"exchange","run":"3f9c0a1b2c4d","n":1,"agent":"main","method":"POST",
 *    "path":"/v1/messages","try":1,"request":{…},"status":200,"response":{…},
 *    "times":{"sent":…,"firstByte":…,"done":…}}
 *   {"type":"event","run":"3f9c0a1b2c4d","event":"compaction","at":…,"why":"auto",…}
 *
 * Every line names its run: --trace=<file> appends, and two runs can write one file at once.
 * Headers are never written, so neither is the API key, and a URL's user and password never are;
 * the file is 0600 and its folder 0700. A trace that cannot be written, or a file that is not a
 * plain file of yours, costs one warning, never a turn.
 */
import type { Middleware } from '@anthropic-ai/sdk';
// From its own module, not the SDK's index, which loads the whole client: npm run inspect imports
// this file for traceFolder, and starts in half the time without it.
import { APIError } from '@anthropic-ai/sdk/error';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Stream } from '@anthropic-ai/sdk/core/streaming';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync,
  realpathSync, writeSync, type Stats } from 'node:fs';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { DIM, paint, YELLOW } from './terminal.ts';

const VERSION = 1;

/** Where a workspace's traces go by default (and where `npm run inspect` looks). */
export function traceFolder(workspace: string, home = os.homedir()): string {
  const root = realpathSync(workspace);
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 8);
  return join(home, '.learn-agent-harness', 'traces', `${basename(root)}-${hash}`);
}

// The file and its descriptor, this run's id, exchanges so far, and whether tracing has stopped.
const trace = { file: '', fd: -1, run: '', sent: 0, broken: false };
const agents = new AsyncLocalStorage<string>(); // which agent the code running now works for

/** One line, appended now (synchronously: the program may exit right after). */
function write(line: object): void {
  if (trace.fd === -1 || trace.broken) return;
  try {
    // The whole line in one write() (a regular file takes it whole) to a file opened for
    // appending: runs sharing the file never tear each other's lines.
    const bytes = Buffer.from(`${JSON.stringify(line)}\n`);
    for (let done = 0; done < bytes.length;) done += writeSync(trace.fd, bytes, done);
  } catch (err) {
    stopTracing(`the trace could not be written: ${(err as Error).message}; no more tracing`);
  }
}

/** One warning, then the run goes on without a trace. */
function stopTracing(why: string): void {
  trace.broken = true;
  console.error(paint(YELLOW, `(${why})`));
}

/**
 * A text with no URL's user name and password in it (an error from fetch names the URL it was
 * given): `http://me:pw@host/v1` → `http://***@host/v1`. The userinfo ends at the last @ before
 * the end of the host (a slash, ?, # or a backslash), as URL parsers read it. `url`, a URL as it
 * was written (ANTHROPIC_BASE_URL), is found as written: its password may hold a space.
 */
export function withoutPasswords(text: string, url?: string): string {
  const masked = url ? text.replaceAll(url, url.replace(/^([^:]*:\/\/).*@/s, '$1***@')) : text;
  return masked.replace(/\b([a-z][a-z\d+.-]*:\/\/)[^\s/?#\\]*@/gi, '$1***@');
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
  trace.run = randomBytes(6).toString('hex');
  try {
    mkdirSync(dirname(trace.file), { recursive: true, mode: 0o700 }); // only folders it makes
    if (!file) chmodSync(folder, 0o700); // ours, perhaps made earlier under another umask
  } catch {} // opening the file says what is wrong
  try {
    trace.fd = openTraceFile(trace.file);
  } catch (err) {
    const refused = err instanceof RefusedError;
    const why = (err as Error).message;
    return stopTracing(refused ? `no trace: ${why}` : `the trace could not be written: ${why}`);
  }
  const { run } = trace;
  // No key: the chapter talks to the offline demo model, as shared/client.ts decides (it has read
  // .env by now: a chapter loads it before its flags). The page then says that no model ran.
  const offline = !(process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN);
  const workspace = process.cwd();
  write({ type: 'trace', version: VERSION, run, chapter, workspace, started, offline });
  if (!trace.broken) console.error(paint(DIM, `[trace: ${trace.file}]`));
}

class RefusedError extends Error {}

/**
 * The trace file, opened to append to. It will hold the prompts and whatever the agent read and
 * ran, so it must be a plain file of yours, as s06 asks of an instruction file: not a link (it
 * can point anywhere), not a FIFO (a write would wait for a reader), not another user's (one left
 * 0666 in /tmp for you to fill). A file of yours that others may read is made 0600.
 */
function openTraceFile(path: string): number {
  const before = lstatSync(path, { throwIfNoEntry: false });
  if (before?.isSymbolicLink()) throw new RefusedError(`${path} is a symbolic link`);
  if (before && !before.isFile()) {
    throw new RefusedError(`${path} is a ${kindOf(before)}, not a regular file`);
  }
  // O_NOFOLLOW: no link put there since; O_NONBLOCK: nor a FIFO to wait on. Then the checks are
  // made on the very file opened (fstat).
  const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;
  const fd = openSync(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new RefusedError(`${path} is a ${kindOf(info)}, not a regular file`);
    const you = process.getuid?.() ?? info.uid; // process.getuid is missing on Windows
    if (info.uid !== you) {
      throw new RefusedError(`${path} belongs to another user (uid ${info.uid})`);
    }
    if (info.mode & 0o077) fchmodSync(fd, 0o600); // yours: only you may read what the run sent
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'directory';
  if (info.isFIFO()) return 'FIFO (named pipe)';
  if (info.isSocket()) return 'socket';
  return info.isCharacterDevice() || info.isBlockDevice() ? 'device' : 'special file';
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
  const { run, sent } = trace;
  write({ type: 'event', run, event, at: Date.now(), agent, exchanges: sent, ...fields });
}

interface Exchange {
  type: 'exchange';
  run: string;
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
  if (error) exchange.error = withoutPasswords(error); // fetch names the URL it could not use
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
  if (trace.fd === -1 || trace.broken) return next(request);
  const retries = Number(new Headers(request.headers).get('x-stainless-retry-count')) || 0;
  const exchange: Exchange = {
    type: 'exchange',
    run: trace.run,
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
