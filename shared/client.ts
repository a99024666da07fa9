/**
 * The API client every chapter uses, and its errors as one readable line (s01–s06; shared runtime,
 * not a chapter's mechanism).
 *
 * The key comes from ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), the endpoint from
 * ANTHROPIC_BASE_URL. No key? The chapter talks to the offline demo model on 127.0.0.1 instead:
 * same SDK, same requests. The SDK retries a 429 or 5xx by itself; this says when it waits.
 */
import Anthropic, { type Middleware } from '@anthropic-ai/sdk';
import 'dotenv/config';
import { startOfflineModel } from './offline-model.ts';
import { DIM, paint } from './terminal.ts';
import { traceExchanges, withoutPasswords } from './trace.ts';

const API_KEY = process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN; // '' is no key
const BASE_URL = process.env.ANTHROPIC_BASE_URL || undefined;

// The SDK waits as long as retry-after asks, without a bound: past this, give up with an error.
const MAX_RETRY_WAIT = 60; // seconds
// How long one try waits for a response to begin: not the SDK's 10 minutes, which suit a batch
// job; an agent you are watching says that it is waiting, and gives up sooner.
const TIMEOUT_SECONDS = Number(process.env.API_TIMEOUT_SECONDS) || 120;

/** How long a response asks us to wait before retrying, in seconds (0 if it does not say). */
function retryAfter(headers: Headers): number {
  const ms = Number(headers.get('retry-after-ms'));
  if (ms > 0) return ms / 1000;
  const after = headers.get('retry-after') ?? ''; // seconds, or an HTTP date
  const seconds = Number(after) || (Date.parse(after) - Date.now()) / 1000;
  return seconds > 0 ? Math.ceil(seconds) : 0;
}

const announceRetries: Middleware = async (request, next) => {
  // A response slow to begin: say so every quarter of the timeout, so the wait is never silent.
  const started = Date.now();
  const waiting = setInterval(() => {
    const waited = Math.round((Date.now() - started) / 1000);
    const notice = `(waiting for the API: ${waited} s; it gives up at ${TIMEOUT_SECONDS} s)`;
    console.error(paint(DIM, notice));
  }, (TIMEOUT_SECONDS * 1000) / 4);
  let response: Response;
  try {
    response = await next(request);
  } finally {
    clearInterval(waiting);
  }
  const wait = retryAfter(response.headers);
  const tries = Number(new Headers(request.headers).get('x-stainless-retry-count'));
  const lastTry = tries >= client.maxRetries;
  const noRetry = response.headers.get('x-should-retry') === 'false';
  if (response.ok || wait === 0 || lastTry || noRetry) return response;
  if (wait <= MAX_RETRY_WAIT) {
    const notice = `(API ${response.status}: it asks to wait ${wait} s; the SDK will retry)`;
    console.error(paint(DIM, notice));
    return response;
  }
  // x-should-retry: false makes the SDK throw this error now instead of waiting.
  const headers = new Headers(response.headers);
  headers.set('x-should-retry', 'false');
  const { status, statusText } = response;
  return new Response(response.body, { status, statusText, headers });
};

/** The offline demo model, when there is no key (it prints a banner of what it understands). */
export const offline = API_KEY ? undefined : await startOfflineModel();

export const client = new Anthropic({
  apiKey: API_KEY || offline!.apiKey,
  baseURL: offline?.url ?? BASE_URL,
  // SDK 1.x sends the key as a Bearer header; some compatible vendors read only x-api-key.
  defaultHeaders: BASE_URL && API_KEY ? { 'x-api-key': API_KEY } : undefined,
  timeout: TIMEOUT_SECONDS * 1000,
  middleware: [announceRetries, traceExchanges], // traceExchanges: --trace (shared/trace.ts)
});

/** One readable line for a failed API call; no stack trace for failures we expect. */
export function describeError(err: unknown): string {
  // A base URL can hold a password (http://me:pw@host), and fetch's errors name the URL.
  return withoutPasswords(describeFailure(err), client.baseURL);
}

function describeFailure(err: unknown): string {
  if (err instanceof Anthropic.APIConnectionTimeoutError) {
    const tries = `${client.maxRetries + 1} tries`;
    return `API error: no response from ${client.baseURL} within ${TIMEOUT_SECONDS} s (${tries}).`;
  }
  if (err instanceof Anthropic.APIConnectionError) {
    // fetch reports "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND…) is the cause of that. A
    // URL fetch refuses outright (one with a password in it) is the cause itself.
    type Cause = { message?: string; cause?: { code?: string; message?: string } } | undefined;
    const cause = err.cause as Cause;
    const why = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? err.message;
    const check = 'Check ANTHROPIC_BASE_URL and your network.';
    return `API error: could not reach ${client.baseURL} (${why}). ${check}`;
  }
  if (err instanceof Anthropic.APIError) {
    const body = err.error as { error?: { message?: string } } | undefined;
    const wait = err.headers ? retryAfter(err.headers) : 0;
    let hint = '';
    if (err.status === 401) hint = ' (check ANTHROPIC_API_KEY in your .env)';
    if (wait > MAX_RETRY_WAIT) {
      hint = ` (the API asks to wait ${wait} s before trying again; try later)`;
    }
    const status = err.status ? ` ${err.status}` : '';
    return `API error${status}: ${body?.error?.message ?? err.message}${hint}`;
  }
  // A bug in the agent's own code: what it was, and the line that threw it, to find it by.
  const bug = err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
  const at = bug ? err.stack?.split('\n').find((line) => /^\s+at /.test(line)) : undefined;
  if (bug) return `${err.name}: ${err.message}${at ? `\n${at}` : ''}`;
  return `Error: ${err instanceof Error ? err.message : String(err)}`;
}
