/**
 * The harness of the fake's own tests (tests/fake/*.test.ts, a file for each part of the fake).
 *
 * The fake is only useful if it refuses exactly what the real API refuses (same status, error type
 * and message text, see anthropic-api-notes.md section 3) and serves everything the real API serves.
 * Every test here sends its request with `@anthropic-ai/sdk`, so what is checked is what a chapter's
 * code will see: the SDK's error class, `err.status`, and the parsed error envelope.
 */
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { expect } from 'vitest';
import {
  reply,
  startFakeAnthropic,
  text,
  type FakeAnthropic,
  type FakeOptions,
} from '../../shared/fake-anthropic.ts';

export const MODEL = 'claude-fake-model';
export const API_KEY = 'test-key';

// The fake the running test started, closed after it. Each test file calls afterEach(closeFake)
// itself: with isolate: false (vitest.config.ts) a worker may load this module once for several
// files, and a hook registered here would belong to the first of them only.
const current: { fake?: FakeAnthropic } = {};
export async function closeFake() {
  await current.fake?.close();
  current.fake = undefined;
}

/** One fake per test (closed in afterEach) and an SDK client that never retries unless told to. */
export async function start(opts: FakeOptions = {}, clientOpts: { apiKey?: string; maxRetries?: number } = {}) {
  const fake = await startFakeAnthropic(opts);
  current.fake = fake;
  const client = new Anthropic({
    apiKey: clientOpts.apiKey ?? API_KEY,
    baseURL: fake.url,
    maxRetries: clientOpts.maxRetries ?? 0,
  });
  return { fake, client };
}

/** A fake that answers every valid request with a short text. */
export const alwaysOk = (): FakeOptions => ({ respond: () => reply(text('ok')) });

export type Msg = { role: 'user' | 'assistant'; content: unknown };
export const user = (content: unknown): Msg => ({ role: 'user', content });
export const assistant = (content: unknown): Msg => ({ role: 'assistant', content });
export const tu = (id: string, input: unknown = { command: 'ls' }, name = 'bash') => ({ type: 'tool_use', id, name, input });
export const tr = (id: string, content: unknown = 'file1\nfile2', extra: Record<string, unknown> = {}) => ({
  type: 'tool_result',
  tool_use_id: id,
  content,
  ...extra,
});
export const tb = (t: string) => ({ type: 'text', text: t });
export const BASH_TOOL = { name: 'bash', description: 'Run a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } };
/** A block (or tool) with a cache breakpoint on it: `cache_control: { type: 'ephemeral' }`, with a ttl if given. */
export const marked = <T extends Record<string, unknown>>(block: T, ttl?: '5m' | '1h') => ({
  ...block,
  cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' },
});

/** A request body: model and max_tokens filled in, the rest from `extra`. */
export const body = (extra: Record<string, unknown>): Record<string, unknown> => ({ model: MODEL, max_tokens: 1024, ...extra });

/** Await a promise that must reject, and return what it rejected with. */
export async function rejection(p: PromiseLike<unknown>, intent: string): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error(`expected a rejection (${intent}), but the request succeeded`);
}

type ErrorClass = abstract new (...args: any[]) => APIError;

interface Refused {
  cls: ErrorClass;
  status: number;
  type: string;
  message: string;
}

/**
 * The full contract of a refusal: the SDK error class and status, the error envelope's type and
 * exact message, `x-should-retry: false` on a 4xx, and the fake's record of why it refused.
 */
export function expectRefusal(err: unknown, f: FakeAnthropic, want: Refused) {
  expect(err, `the SDK should raise ${want.cls.name} for a ${want.status}`).toBeInstanceOf(want.cls);
  const e = err as APIError;
  expect(e.status, 'err.status is the HTTP status the real API uses for this rule').toBe(want.status);
  const envelope = e.error as { type?: string; error?: { type?: string; message?: string }; request_id?: string };
  expect(envelope?.type, 'the body is the API error envelope {"type":"error",…}').toBe('error');
  expect(envelope?.error?.type, 'err.error.error.type names the error kind for this status').toBe(want.type);
  expect(envelope?.error?.message, 'err.error.error.message is the real API wording, word for word').toBe(want.message);
  expect(envelope?.request_id, 'the envelope carries a request_id, as the real API does').toMatch(/^req_/);
  if (want.status >= 400 && want.status < 500) {
    expect(e.headers?.get('x-should-retry'), 'a refused 4xx tells the SDK not to retry it').toBe('false');
  }
  const rec = f.requests.at(-1);
  expect(rec, 'the refused request is still recorded').toBeDefined();
  expect(rec!.refused, 'the record says why the request was refused').toEqual({
    status: want.status,
    type: want.type,
    message: want.message,
  });
  expect(rec!.injected, 'a refusal is not an injected fault').toBeUndefined();
}

export const badRequest = (message: string): Refused => ({
  cls: Anthropic.BadRequestError,
  status: 400,
  type: 'invalid_request_error',
  message,
});

type SseEvent = { event: string; data: any };
export function parseSse(raw: string): SseEvent[] {
  return raw
    .split('\n\n')
    .filter((chunk) => chunk.trim())
    .map((chunk) => {
      const event = chunk.match(/^event: (.*)$/m)?.[1] ?? '';
      const data = chunk.match(/^data: (.*)$/m)?.[1] ?? '';
      return { event, data: JSON.parse(data) };
    });
}
