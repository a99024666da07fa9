/**
 * The fake's own tests, driven through the real SDK.
 *
 * The fake is only useful if it refuses exactly what the real API refuses (same status, error type
 * and message text, see anthropic-api-notes.md section 3) and serves everything the real API serves.
 * Every test here sends its request with `@anthropic-ai/sdk`, so what is checked is what a chapter's
 * code will see: the SDK's error class, `err.status`, and the parsed error envelope.
 */
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  estimateTokens,
  httpError,
  reply,
  startFakeAnthropic,
  text,
  toolUse,
  type FakeAnthropic,
  type FakeOptions,
  type RespondContext,
} from '../shared/fake-anthropic.ts';
import { startOfflineModel } from '../shared/offline-model.ts';

// ── Harness ─────────────────────────────────────────────────────────────────────────────────────

const MODEL = 'claude-fake-model';
const API_KEY = 'test-key';

let fake: FakeAnthropic | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** One fake per test (closed in afterEach) and an SDK client that never retries unless told to. */
async function start(opts: FakeOptions = {}, clientOpts: { apiKey?: string; maxRetries?: number } = {}) {
  fake = await startFakeAnthropic(opts);
  const client = new Anthropic({
    apiKey: clientOpts.apiKey ?? API_KEY,
    baseURL: fake.url,
    maxRetries: clientOpts.maxRetries ?? 0,
  });
  return { fake, client };
}

/** A fake that answers every valid request with a short text. */
const alwaysOk = (): FakeOptions => ({ respond: () => reply(text('ok')) });

type Msg = { role: 'user' | 'assistant'; content: unknown };
const user = (content: unknown): Msg => ({ role: 'user', content });
const assistant = (content: unknown): Msg => ({ role: 'assistant', content });
const tu = (id: string, input: unknown = { command: 'ls' }, name = 'bash') => ({ type: 'tool_use', id, name, input });
const tr = (id: string, content: unknown = 'file1\nfile2', extra: Record<string, unknown> = {}) => ({
  type: 'tool_result',
  tool_use_id: id,
  content,
  ...extra,
});
const tb = (t: string) => ({ type: 'text', text: t });
const BASH_TOOL = { name: 'bash', description: 'Run a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } };
/** A block (or tool) with a cache breakpoint on it: `cache_control: { type: 'ephemeral' }`, with a ttl if given. */
const marked = <T extends Record<string, unknown>>(block: T, ttl?: '5m' | '1h') => ({
  ...block,
  cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' },
});

/** A request body: model and max_tokens filled in, the rest from `extra`. */
const body = (extra: Record<string, unknown>): Record<string, unknown> => ({ model: MODEL, max_tokens: 1024, ...extra });

/** Await a promise that must reject, and return what it rejected with. */
async function rejection(p: PromiseLike<unknown>, intent: string): Promise<any> {
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
function expectRefusal(err: unknown, f: FakeAnthropic, want: Refused) {
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

const badRequest = (message: string): Refused => ({
  cls: Anthropic.BadRequestError,
  status: 400,
  type: 'invalid_request_error',
  message,
});

// ── 1. Validation: every rule the fake enforces ─────────────────────────────────────────────────

interface RuleCase {
  rule: string;
  params: Record<string, unknown>;
  message: string;
  opts?: FakeOptions;
  /** Send with client.post: messages.create() itself throws (TypeError, client-side) on this body. */
  raw?: boolean;
}

const TOOL_USE_MISSING = (i: number, ids: string) =>
  `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids}. ` +
  'Each `tool_use` block must have a corresponding `tool_result` block in the next message.';
const UNEXPECTED_RESULT = (i: number, j: number, id: string) =>
  `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
  'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.';
const RESULTS_NOT_FIRST = (i: number, n: number) =>
  `messages.${i}: Did not find ${n} \`tool_result\` block(s) at the beginning of this message. ` +
  'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.';
const EMPTY_CONTENT = (i: number) =>
  `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
const PREFILL = 'This model does not support assistant message prefill. The conversation must end with a user message.';
const TOOL_NAME = (i: number) => `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
const MAX_BREAKPOINTS = (n: number) => `A maximum of 4 blocks with cache_control may be provided. Found ${n}.`;
const TTL_ORDER =
  "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. " +
  'Note that blocks are processed in the following order: `tools`, `system`, `messages`.';

/** Invalid /v1/messages bodies the SDK sends as given (cast past its types), one per rule. */
const RULES: RuleCase[] = [
  // Pairing of tool_use and tool_result (after merging consecutive same-role messages).
  {
    rule: 'tool_use without a tool_result in the next turn',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')]), user('what did you find?')] }),
    message: TOOL_USE_MISSING(1, 'toolu_1'),
  },
  {
    rule: 'tool_use without a tool_result: every missing id is listed',
    params: body({
      messages: [user('list files'), assistant([tb('Two commands.'), tu('toolu_1'), tu('toolu_2')]), user('no results, sorry')],
    }),
    message: TOOL_USE_MISSING(1, 'toolu_1, toolu_2'),
  },
  {
    rule: 'tool_use without a tool_result: one of two answered',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1'), tu('toolu_2')]), user([tr('toolu_1')])] }),
    message: TOOL_USE_MISSING(1, 'toolu_2'),
  },
  {
    rule: 'tool_use as the last message (no next turn at all)',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')])] }),
    message: TOOL_USE_MISSING(1, 'toolu_1'),
  },
  {
    rule: 'the same tool_use id twice in a conversation',
    params: body({
      messages: [
        user('list files'),
        assistant([tu('toolu_1')]),
        user([tr('toolu_1')]),
        assistant([tu('toolu_1')]),
        user([tr('toolu_1')]),
      ],
    }),
    message: 'messages.3.content.0: `tool_use` ids must be unique',
  },
  {
    rule: 'tool_result with an unexpected tool_use_id in the first message',
    params: body({ messages: [user([tr('toolu_ghost')])] }),
    message: UNEXPECTED_RESULT(0, 0, 'toolu_ghost'),
  },
  {
    rule: 'tool_result with an unexpected tool_use_id after a real answer',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1'), tr('toolu_ghost')])] }),
    message: UNEXPECTED_RESULT(2, 1, 'toolu_ghost'),
  },
  {
    rule: 'tool_result answering a tool_use of an older turn (not the previous one)',
    params: body({
      messages: [user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1')]), assistant('Done.'), user([tr('toolu_1')])],
    }),
    message: UNEXPECTED_RESULT(4, 0, 'toolu_1'),
  },
  {
    rule: 'tool_results not first in the user turn (a text block before them)',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')]), user([tb('Here you go:'), tr('toolu_1')])] }),
    message: RESULTS_NOT_FIRST(2, 1),
  },
  {
    rule: 'tool_results not first: a text message then a tool_result message (merged into one turn)',
    params: body({
      messages: [user('list files'), assistant([tu('toolu_1')]), user('Here you go:'), user([tr('toolu_1')])],
    }),
    message: RESULTS_NOT_FIRST(2, 1),
  },
  {
    rule: 'tool_results not first: two tool_uses, text between the two results',
    params: body({
      messages: [user('go'), assistant([tu('toolu_1'), tu('toolu_2')]), user([tr('toolu_1'), tb('and'), tr('toolu_2')])],
    }),
    message: RESULTS_NOT_FIRST(2, 2),
  },
  // Text and content.
  {
    rule: 'empty text block',
    params: body({ messages: [user([tb('')])] }),
    message: 'messages: text content blocks must be non-empty',
  },
  {
    rule: 'empty text block inside tool_result content',
    params: body({ messages: [user('go'), assistant([tu('toolu_1')]), user([tr('toolu_1', [tb('')])])] }),
    message: 'messages: text content blocks must be non-empty',
  },
  {
    rule: 'whitespace-only text block',
    params: body({ messages: [user([tb(' \n\t ')])] }),
    message: 'messages: text content blocks must contain non-whitespace text',
  },
  {
    rule: 'whitespace-only string content',
    params: body({ messages: [user('   ')] }),
    message: 'messages: text content blocks must contain non-whitespace text',
  },
  {
    rule: 'a content block of a type the API does not know (sent back from a newer reply, say)',
    params: body({ messages: [user('hi'), assistant([{ type: 'mystery_block' } as any]), user('and?')] }),
    message:
      "messages.1.content.0: Input tag 'mystery_block' found using 'type' does not match any of the expected tags: " +
      "'document', 'image', 'redacted_thinking', 'search_result', 'server_tool_use', 'text', 'thinking', " +
      "'tool_result', 'tool_use', 'web_fetch_tool_result', 'web_search_tool_result'",
  },
  {
    rule: 'empty message content: string ""',
    params: body({ messages: [user('')] }),
    message: EMPTY_CONTENT(0),
  },
  {
    rule: 'empty message content: []',
    params: body({ messages: [user([])] }),
    message: EMPTY_CONTENT(0),
  },
  {
    rule: 'empty message content: an assistant message that is not the last one',
    params: body({ messages: [user('hi'), assistant([]), user('hello?')] }),
    message: EMPTY_CONTENT(1),
  },
  {
    rule: 'empty messages array',
    params: body({ messages: [] }),
    message: 'messages: at least one message is required',
  },
  {
    rule: 'messages missing',
    params: body({}),
    message: 'messages: Field required',
  },
  {
    rule: 'messages not a list',
    params: body({ messages: { role: 'user', content: 'hi' } }),
    message: 'messages: Input should be a valid list',
    raw: true,
  },
  {
    rule: 'a message that is not an object',
    params: body({ messages: ['hi'] }),
    message: 'messages.0: Input should be a valid dictionary',
  },
  {
    rule: 'a message with an unknown role (e.g. "system")',
    params: body({ messages: [{ role: 'system', content: 'be brief' }, user('hi')] }),
    message: "messages.0.role: Input should be 'user' or 'assistant'",
  },
  {
    rule: 'message content neither string nor list',
    params: body({ messages: [user({ type: 'text', text: 'hi' })] }),
    message: 'messages.0.content: Input should be a valid list',
  },
  {
    rule: 'a content block without a type',
    params: body({ messages: [user([{ text: 'hi' }])] }),
    message: 'messages.0.content.0: Input should be a valid dictionary',
  },
  {
    rule: 'a text block without text',
    params: body({ messages: [user([{ type: 'text' }])] }),
    message: 'messages.0.content.0.text: Field required',
  },
  // Block placement and shape.
  {
    rule: 'tool_use in a user message',
    params: body({ messages: [user([tu('toolu_1')])] }),
    message: 'messages.0.content.0: tool_use blocks can only appear in assistant messages',
  },
  {
    rule: 'tool_use without id',
    params: body({ messages: [user('go'), assistant([{ type: 'tool_use', name: 'bash', input: {} }]), user('x')] }),
    message: 'messages.1.content.0.tool_use: id and name are required',
  },
  {
    rule: 'tool_use.input is a string (JSON not parsed)',
    params: body({ messages: [user('go'), assistant([tu('toolu_1', '{"command":"ls"}')]), user([tr('toolu_1')])] }),
    message: 'messages.1.content.0.tool_use.input: Input should be a valid dictionary',
  },
  {
    rule: 'tool_use.input is an array',
    params: body({ messages: [user('go'), assistant([tb('Running.'), tu('toolu_1', ['ls'])]), user([tr('toolu_1')])] }),
    message: 'messages.1.content.1.tool_use.input: Input should be a valid dictionary',
  },
  {
    rule: 'tool_result in an assistant message',
    params: body({ messages: [user('go'), assistant([tr('toolu_1')]), user('x')] }),
    message: 'messages.1.content.0: tool_result blocks can only appear in user messages',
  },
  {
    rule: 'tool_result without tool_use_id',
    params: body({ messages: [user('go'), assistant([tu('toolu_1')]), user([{ type: 'tool_result', content: 'x' }])] }),
    message: 'messages.2.content.0.tool_result.tool_use_id: Field required',
  },
  // Prefill.
  {
    rule: 'conversation ending with an assistant message (prefill) on a model that refuses it',
    params: body({ messages: [user('Write a haiku.'), assistant('Here is')] }),
    message: PREFILL,
  },
  {
    rule: 'prefill allowed (allowPrefill) but the final assistant text ends with whitespace',
    params: body({ messages: [user('Write a haiku.'), assistant('Here is ')] }),
    message: 'messages: final assistant content cannot end with trailing whitespace',
    opts: { allowPrefill: true },
  },
  {
    rule: 'prefill allowed, final assistant block list ends with a newline',
    params: body({ messages: [user('Write a haiku.'), assistant([tb('Here is\n')])] }),
    message: 'messages: final assistant content cannot end with trailing whitespace',
    opts: { allowPrefill: true },
  },
  // Top-level fields.
  {
    rule: 'model missing',
    params: { max_tokens: 1024, messages: [user('hi')] },
    message: 'model: Field required',
  },
  {
    rule: 'max_tokens missing',
    params: { model: MODEL, messages: [user('hi')] },
    message: 'max_tokens: Field required',
  },
  {
    rule: 'max_tokens below 1',
    params: body({ max_tokens: 0, messages: [user('hi')] }),
    message: 'max_tokens: Input should be greater than or equal to 1',
  },
  {
    rule: 'max_tokens above the limit set by maxOutputTokens',
    params: body({ max_tokens: 8193, messages: [user('hi')] }),
    message: `max_tokens: 8193 > 8192, which is the maximum allowed number of output tokens for ${MODEL}`,
    opts: { maxOutputTokens: 8192 },
  },
  ...['temperature', 'top_p', 'top_k', 'foo'].map(
    (field): RuleCase => ({
      rule: `unknown field: ${field}`,
      params: body({ messages: [user('hi')], [field]: field === 'foo' ? 'bar' : field === 'top_k' ? 5 : 0.5 }),
      message: `${field}: Extra inputs are not permitted`,
    }),
  ),
  // System.
  {
    rule: 'system neither string nor list',
    params: body({ system: { text: 'be brief' }, messages: [user('hi')] }),
    message: 'system: Input should be a valid string',
  },
  {
    rule: 'system block that is not a text block',
    params: body({ system: [tb('be brief'), { type: 'image' }], messages: [user('hi')] }),
    message: "system.1.type: Input should be 'text'",
  },
  {
    rule: 'system block with empty text',
    params: body({ system: [tb('')], messages: [user('hi')] }),
    message: 'system: text content blocks must be non-empty',
  },
  // Tools.
  {
    rule: 'tool name with a space',
    params: body({ tools: [BASH_TOOL, { ...BASH_TOOL, name: 'read file' }], messages: [user('hi')] }),
    message: TOOL_NAME(1),
  },
  {
    rule: 'tool name longer than 128 characters',
    params: body({ tools: [{ ...BASH_TOOL, name: 'x'.repeat(129) }], messages: [user('hi')] }),
    message: TOOL_NAME(0),
  },
  {
    rule: 'tool name with a dot (MCP-style server.tool)',
    params: body({ tools: [{ ...BASH_TOOL, name: 'github.create_issue' }], messages: [user('hi')] }),
    message: TOOL_NAME(0),
  },
  {
    rule: 'tool input_schema.type not "object"',
    params: body({ tools: [{ name: 'bash', input_schema: { type: 'array', items: { type: 'string' } } }], messages: [user('hi')] }),
    message: "tools.0.custom.input_schema.type: Input should be 'object'",
  },
  {
    rule: 'tool input_schema missing',
    params: body({ tools: [{ name: 'bash', description: 'Run a command' }], messages: [user('hi')] }),
    message: 'tools.0.custom.input_schema: Field required',
  },
  {
    rule: 'tools not a list',
    params: body({ tools: BASH_TOOL, messages: [user('hi')] }),
    message: 'tools: Input should be a valid list',
    raw: true,
  },
  {
    rule: 'a tool that is not an object',
    params: body({ tools: ['bash'], messages: [user('hi')] }),
    message: 'tools.0: Input should be a valid dictionary',
  },
  // Prompt caching: where the breakpoints are, how many, and their TTLs.
  {
    rule: 'five cache breakpoints (two tools, two system blocks, one message block)',
    params: body({
      tools: [marked(BASH_TOOL), marked({ ...BASH_TOOL, name: 'read_file' })],
      system: [marked(tb('Rules.')), marked(tb('More rules.'))],
      messages: [user([marked(tb('hi'))])],
    }),
    message: MAX_BREAKPOINTS(5),
  },
  {
    rule: 'five cache breakpoints, one of them inside a tool_result’s content',
    params: body({
      system: [marked(tb('a')), marked(tb('b')), marked(tb('c'))],
      messages: [user('go'), assistant([tu('toolu_1')]), user([marked(tr('toolu_1', [marked(tb('out'))]))])],
    }),
    message: MAX_BREAKPOINTS(5),
  },
  {
    rule: 'four block breakpoints plus a top-level cache_control (automatic caching takes a fifth)',
    params: body({
      cache_control: { type: 'ephemeral' },
      system: [marked(tb('a')), marked(tb('b'))],
      messages: [user([marked(tb('c')), marked(tb('d')), tb('e')])],
    }),
    message: MAX_BREAKPOINTS(5),
  },
  {
    rule: 'a cache_control type other than ephemeral',
    params: body({ system: [{ ...tb('Rules.'), cache_control: { type: 'persistent' } }], messages: [user('hi')] }),
    message: "system.0.cache_control.type: Input should be 'ephemeral'",
  },
  {
    rule: 'a cache_control ttl other than 5m or 1h',
    params: body({ messages: [user([{ ...tb('hi'), cache_control: { type: 'ephemeral', ttl: '10m' } }])] }),
    message: "messages.0.content.0.cache_control.ttl: Input should be '5m' or '1h'",
  },
  {
    rule: 'a cache_control with an unknown field',
    params: body({ tools: [{ ...BASH_TOOL, cache_control: { type: 'ephemeral', scope: 'global' } }], messages: [user('hi')] }),
    message: 'tools.0.cache_control.scope: Extra inputs are not permitted',
  },
  {
    rule: "a ttl='1h' breakpoint in messages after a default (5-minute) one in system",
    params: body({ system: [marked(tb('Rules.'))], messages: [user([marked(tb('hi'), '1h')])] }),
    message: `messages.0.content.0.cache_control.ttl: ${TTL_ORDER}`,
  },
  {
    rule: "a ttl='1h' system breakpoint after a ttl='5m' one on a tool (tools come first)",
    params: body({ tools: [marked(BASH_TOOL, '5m')], system: [tb('a'), marked(tb('Rules.'), '1h')], messages: [user('hi')] }),
    message: `system.1.cache_control.ttl: ${TTL_ORDER}`,
  },
];

describe('validation: refused like the real API', () => {
  it.each(RULES)('refuses: $rule', async ({ params, message, opts, raw }) => {
    const { fake, client } = await start({ ...alwaysOk(), ...opts });
    const sent = raw ? client.post('/v1/messages', { body: params }) : client.messages.create(params as any);
    const err = await rejection(sent, 'the fake must refuse this body');
    expectRefusal(err, fake, badRequest(message));
    expect(fake.requests, 'exactly one request went out (no SDK retry of a refused 4xx)').toHaveLength(1);
  });

  it('refuses max_tokens above 64,000 by default (message names the model)', async () => {
    const { fake, client } = await start(alwaysOk());
    // A non-streaming create() with max_tokens this high is refused by the SDK itself unless a timeout is given.
    const err = await rejection(
      client.messages.create(body({ max_tokens: 128001, messages: [user('hi')] }) as any, { timeout: 5_000 }),
      'max_tokens over the output limit',
    );
    expectRefusal(
      err,
      fake,
      badRequest(`max_tokens: 128001 > 64000, which is the maximum allowed number of output tokens for ${MODEL}`),
    );
  });

  it('refuses max_tokens above the limit on a streamed request too', async () => {
    const { fake, client } = await start(alwaysOk());
    const stream = client.messages.stream(body({ max_tokens: 64001, messages: [user('hi')] }) as any);
    const err = await rejection(stream.finalMessage(), 'max_tokens over the output limit, streamed');
    expectRefusal(
      err,
      fake,
      badRequest(`max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for ${MODEL}`),
    );
  });

  it('refuses a prompt over the context window, counting with estimateTokens(body)', async () => {
    const { fake, client } = await start({ ...alwaysOk(), contextWindow: 50 });
    const params = body({ system: 'You are terse.', messages: [user('Please summarise this long paragraph. '.repeat(4))] });
    const n = estimateTokens(params);
    expect(n, 'the test prompt must actually exceed the 50-token window').toBeGreaterThan(50);
    const err = await rejection(client.messages.create(params as any), 'prompt over the context window');
    expectRefusal(err, fake, badRequest(`prompt is too long: ${n} tokens > 50 maximum`));
    expect(estimateTokens(fake.requests[0].body), 'the estimate of the body as received equals the one as sent').toBe(n);
  });

  it('accepts a prompt exactly at the context window', async () => {
    const params = body({ messages: [user('hi')] });
    const { fake, client } = await start({ ...alwaysOk(), contextWindow: estimateTokens(params) });
    await client.messages.create(params as any);
    expect(fake.requests[0].refused, 'tokens == window is within the window').toBeUndefined();
  });

  it('refuses half a character (a lone UTF-16 surrogate) in any string, as the real API does', async () => {
    const { fake, client } = await start(alwaysOk());
    const cut = 'a'.repeat(5) + '😀'.slice(0, 1); // an emoji cut after its first half
    const params = body({ messages: [user(cut)] });
    const at = JSON.stringify(params).indexOf('\\ud83d') + 6; // just after the lone escape
    const err = await rejection(client.messages.create(params as any), 'a lone high surrogate');
    const where = `line 1 column ${at + 1} (char ${at})`;
    expectRefusal(err, fake, badRequest(`The request body is not valid JSON: no low surrogate in string: ${where}`));
    const whole = await start(alwaysOk());
    await whole.client.messages.create(body({ messages: [user('a😀 and a literal \\ud83d')] }) as any);
    expect(whole.fake.requests[0].refused, 'a whole emoji, and the text "\\ud83d", are fine').toBeUndefined();
  });

  it('refuses a body that is not a JSON object', async () => {
    const { fake, client } = await start(alwaysOk());
    const err = await rejection(client.post('/v1/messages', { body: [body({ messages: [user('hi')] })] }), 'array body');
    expectRefusal(err, fake, badRequest('body: Input should be a valid dictionary'));
  });

  it('refuses a body that is not valid JSON', async () => {
    const { fake, client } = await start(alwaysOk());
    const err = await rejection(
      client.post('/v1/messages', { body: '{"model": "x", ', headers: { 'content-type': 'application/json' } }),
      'truncated JSON',
    );
    expectRefusal(err, fake, badRequest('There was an error parsing the body of your request: not valid JSON.'));
  });

  it('refuses a body over 32 MB with 413 request_too_large', async () => {
    const { fake, client } = await start(alwaysOk());
    const huge = 'a'.repeat(32 * 1024 * 1024);
    const err = await rejection(client.messages.create(body({ messages: [user(huge)] }) as any), 'oversized body');
    expectRefusal(err, fake, {
      cls: Anthropic.ContentTooLargeError,
      status: 413,
      type: 'request_too_large',
      message: 'Request exceeds the maximum allowed number of bytes.',
    });
  });

  describe('headers', () => {
    it('refuses a request without anthropic-version (400)', async () => {
      const { fake, client } = await start(alwaysOk());
      const err = await rejection(
        client.messages.create(body({ messages: [user('hi')] }) as any, { headers: { 'anthropic-version': null } }),
        'no anthropic-version header',
      );
      expect(fake.requests[0].headers['anthropic-version'], 'the SDK really omitted the header').toBeUndefined();
      expectRefusal(err, fake, badRequest('anthropic-version: header is required'));
    });

    it('refuses a request without any credential (401)', async () => {
      const { fake, client } = await start(alwaysOk());
      const err = await rejection(
        client.messages.create(body({ messages: [user('hi')] }) as any, { headers: { authorization: null } }),
        'no credential',
      );
      expect(fake.requests[0].headers['authorization'], 'the SDK really omitted the credential').toBeUndefined();
      expectRefusal(err, fake, {
        cls: Anthropic.AuthenticationError,
        status: 401,
        type: 'authentication_error',
        message: 'x-api-key header is required',
      });
    });

    it('refuses the same by raw fetch (no credential, no version): credential is checked first', async () => {
      const { fake } = await start(alwaysOk());
      const res = await fetch(`${fake.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body({ messages: [user('hi')] })),
      });
      expect(res.status, 'a request with no credential is a 401').toBe(401);
      expect(res.headers.get('x-should-retry'), 'a refused 4xx tells clients not to retry').toBe('false');
      expect(await res.json(), 'the error envelope').toMatchObject({
        type: 'error',
        error: { type: 'authentication_error', message: 'x-api-key header is required' },
      });
    });

    it('refuses a wrong key when the fake has apiKey set (401)', async () => {
      const { fake, client } = await start({ ...alwaysOk(), apiKey: 'the-right-key' });
      const err = await rejection(client.messages.create(body({ messages: [user('hi')] }) as any), 'wrong key');
      expectRefusal(err, fake, {
        cls: Anthropic.AuthenticationError,
        status: 401,
        type: 'authentication_error',
        message: 'invalid x-api-key',
      });
    });

    it('accepts the right key, as Bearer (SDK 1.x) or as x-api-key (SDK 0.x / vendors)', async () => {
      const { fake, client } = await start({ ...alwaysOk(), apiKey: 'the-right-key' }, { apiKey: 'the-right-key' });
      await client.messages.create(body({ messages: [user('hi')] }) as any);
      const res = await fetch(`${fake.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'the-right-key', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body({ messages: [user('hi')] })),
      });
      expect(res.status, 'x-api-key with the right key is served').toBe(200);
      expect(fake.requests.map((r) => r.refused), 'neither request was refused').toEqual([undefined, undefined]);
    });

    it('with apiKey set, a wrong key is refused before the body is read or respond() is called', async () => {
      let answered = 0;
      const respond = () => (answered++, reply(text('ok')));
      const { fake } = await start({ respond, apiKey: 'the-right-key' });
      const send = (init: { key: string; body: string; method?: string; path?: string }) =>
        fetch(`${fake.url}${init.path ?? '/v1/messages'}`, {
          method: init.method ?? 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': init.key, 'anthropic-version': '2023-06-01' },
          body: init.method === 'GET' ? undefined : init.body,
        });
      const valid = JSON.stringify(body({ messages: [user('hi')] }));
      for (const [what, res] of [
        ['a valid body', await send({ key: 'wrong', body: valid })],
        ['a body that is not JSON', await send({ key: 'wrong', body: '{not json' })],
        ['count_tokens', await send({ key: 'wrong', body: '{}', path: '/v1/messages/count_tokens' })],
        ['the Models API', await send({ key: 'wrong', body: '', method: 'GET', path: '/v1/models/m' })],
      ] as const) {
        expect(res.status, `${what} with a wrong key: 401`).toBe(401);
        expect(await res.json(), `${what}: the real envelope`).toMatchObject({
          type: 'error',
          error: { type: 'authentication_error', message: 'invalid x-api-key' },
        });
      }
      expect(answered, 'respond() never ran for a wrong key').toBe(0);
      expect((await send({ key: 'the-right-key', body: valid })).status, 'the right key is served').toBe(200);
      expect(answered, 'and only then respond() ran').toBe(1);
    });

    it('the offline model answers only the key its own process was given', async () => {
      const model = await startOfflineModel();
      const other = await startOfflineModel();
      try {
        expect(model.apiKey, 'a key long enough not to be guessed').toMatch(/^[\w-]{40,}$/);
        expect(other.apiKey, 'a new key in every process (here: every start)').not.toBe(model.apiKey);
        const ask = (key: string) =>
          new Anthropic({ apiKey: key, baseURL: model.url, maxRetries: 0 }).messages.create(
            body({ messages: [user('list')] }) as any,
          );
        for (const key of ['offline-demo', other.apiKey, `${model.apiKey}x`]) {
          const err = await rejection(ask(key), `the key ${key}`);
          expect(err, `${key}: the SDK's AuthenticationError`).toBeInstanceOf(Anthropic.AuthenticationError);
          expect((err as APIError).error, `${key}: the real envelope`).toMatchObject({
            type: 'error',
            error: { type: 'authentication_error', message: 'invalid x-api-key' },
          });
        }
        const served = await ask(model.apiKey);
        expect(served.content[0], 'its own key gets a reply').toMatchObject({ type: 'text' });
      } finally {
        await Promise.all([model.close(), other.close()]);
      }
    });
  });

  describe('count_tokens', () => {
    it('returns { input_tokens } equal to estimateTokens(body)', async () => {
      const { fake, client } = await start(alwaysOk());
      const params = {
        model: MODEL,
        system: 'You are terse.',
        tools: [BASH_TOOL],
        messages: [user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1')])],
      };
      const counted = await client.messages.countTokens(params as any);
      expect(counted, 'count_tokens answers with the same estimate the fake uses for usage').toEqual({
        input_tokens: estimateTokens(params),
      });
      expect(fake.requests[0].path, 'recorded under its own path').toBe('/v1/messages/count_tokens');
      expect(fake.requests[0].inputTokens).toBe(estimateTokens(params));
    });

    it('refuses an unknown field', async () => {
      const { fake, client } = await start(alwaysOk());
      const err = await rejection(
        client.messages.countTokens({ model: MODEL, messages: [user('hi')], foo: 1 } as any),
        'unknown field on count_tokens',
      );
      expectRefusal(err, fake, badRequest('foo: Extra inputs are not permitted'));
    });

    it('refuses max_tokens (a /v1/messages field, not a count_tokens one)', async () => {
      const { fake, client } = await start(alwaysOk());
      const err = await rejection(
        client.messages.countTokens({ model: MODEL, max_tokens: 1024, messages: [user('hi')] } as any),
        'max_tokens on count_tokens',
      );
      expectRefusal(err, fake, badRequest('max_tokens: Extra inputs are not permitted'));
    });

    it('applies the message rules too (tool_result without its tool_use)', async () => {
      const { fake, client } = await start(alwaysOk());
      const err = await rejection(
        client.messages.countTokens({ model: MODEL, messages: [user([tr('toolu_ghost')])] } as any),
        'orphan tool_result on count_tokens',
      );
      expectRefusal(err, fake, badRequest(UNEXPECTED_RESULT(0, 0, 'toolu_ghost')));
    });
  });

  it('answers an unknown route with 404 not_found_error and does not record it', async () => {
    const { fake, client } = await start(alwaysOk());
    const err = await rejection(client.get('/v1/models'), 'unknown route');
    expect(err, '404 maps to NotFoundError').toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as any).error?.error?.type).toBe('not_found_error');
    expect(fake.requests, 'only the Messages endpoints are recorded').toHaveLength(0);
  });
});

// ── 2. Valid conversations are served ───────────────────────────────────────────────────────────

describe('valid conversations are served', () => {
  /** Send one body and require a 200 with nothing refused. */
  async function served(client: Anthropic, f: FakeAnthropic, params: Record<string, unknown>, intent: string) {
    const { data, response } = await client.messages.create(params as any).withResponse();
    expect(response.status, `${intent}: served with 200`).toBe(200);
    const rec = f.requests.at(-1)!;
    expect(rec.refused, `${intent}: not refused (${rec.refused?.message})`).toBeUndefined();
    return data;
  }

  it('a tool round trip: user → tool_use → tool_result → reply, echoing the SDK response back', async () => {
    const { fake, client } = await start({ replies: [reply(toolUse('bash', { command: 'ls' })), reply(text('Two files.'))] });
    const messages: any[] = [user('list files')];
    const first = await served(client, fake, body({ tools: [BASH_TOOL], messages }), 'first turn');
    expect(first.stop_reason, 'a tool_use reply stops with tool_use').toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use')!;
    messages.push({ role: 'assistant', content: first.content });
    messages.push(user([tr(use.id, 'a.ts\nb.ts')]));
    const second = await served(client, fake, body({ tools: [BASH_TOOL], messages }), 'second turn');
    expect(second.content, 'the scripted final answer').toEqual([{ type: 'text', text: 'Two files.' }]);
    expect(second.stop_reason).toBe('end_turn');
    expect(fake.requests.map((r) => r.refused ?? null), 'no request refused').toEqual([null, null]);
  });

  it('two tool_uses answered by two tool_results, then text, in one user message', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(
      client,
      fake,
      body({
        tools: [BASH_TOOL],
        messages: [
          user('compare a and b'),
          assistant([tb('Reading both.'), tu('toolu_a', { command: 'cat a' }), tu('toolu_b', { command: 'cat b' })]),
          user([tr('toolu_b', 'B'), tr('toolu_a', 'A'), tb('Also, be brief.')]),
        ],
      }),
      'results in any order, text after them',
    );
  });

  it('two consecutive user messages (merged into one turn)', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(client, fake, body({ messages: [user('hello'), user('are you there?')] }), 'consecutive user messages');
  });

  it('tool_result message followed by a separate text message (merged; results still first)', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(
      client,
      fake,
      body({ messages: [user('go'), assistant([tu('toolu_1')]), user([tr('toolu_1')]), user('and now summarise')] }),
      'tool_result then text message',
    );
  });

  it('system as an array of text blocks with cache_control', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(
      client,
      fake,
      body({
        system: [
          { type: 'text', text: 'You are a coding agent.' },
          { type: 'text', text: 'Project rules: …', cache_control: { type: 'ephemeral' } },
        ],
        messages: [user('hi')],
      }),
      'system blocks with cache_control',
    );
  });

  it('a tool_result with is_error: true', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(
      client,
      fake,
      body({ messages: [user('go'), assistant([tu('toolu_1')]), user([tr('toolu_1', 'command not found', { is_error: true })])] }),
      'error tool_result',
    );
  });

  it('tool_result content as an array of text blocks', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(
      client,
      fake,
      body({ messages: [user('go'), assistant([tu('toolu_1')]), user([tr('toolu_1', [tb('line 1'), tb('line 2')])])] }),
      'tool_result with block content',
    );
  });

  it('a tool_result with empty string content (a command with no output)', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(
      client,
      fake,
      body({ messages: [user('go'), assistant([tu('toolu_1')]), user([tr('toolu_1', '')])] }),
      'empty tool output',
    );
  });

  it('pushing back the streamed finalMessage().content as the assistant message', async () => {
    const { fake, client } = await start({
      replies: [reply(text('Let me check.'), toolUse('bash', { command: 'ls -la' })), reply(text('Done.'))],
    });
    const messages: any[] = [user('what is here?')];
    const first = await client.messages.stream(body({ tools: [BASH_TOOL], messages }) as any).finalMessage();
    messages.push({ role: 'assistant', content: first.content });
    const ids = first.content.filter((b) => b.type === 'tool_use').map((b) => (b as Anthropic.ToolUseBlock).id);
    messages.push(user(ids.map((id) => tr(id, 'total 0'))));
    const second = await client.messages.stream(body({ tools: [BASH_TOOL], messages }) as any).finalMessage();
    expect(second.content, 'the second turn is served').toEqual([{ type: 'text', text: 'Done.' }]);
    expect(fake.requests[1].refused, 'the SDK-built assistant message is accepted as is').toBeUndefined();
    expect(fake.requests[1].body.messages[1].content[1], 'the echoed tool_use carries its parsed input').toMatchObject({
      type: 'tool_use',
      input: { command: 'ls -la' },
    });
  });

  it('a final assistant message (prefill) when allowPrefill is set and it has no trailing whitespace', async () => {
    const { fake, client } = await start({ ...alwaysOk(), allowPrefill: true });
    await served(client, fake, body({ messages: [user('Write a haiku.'), assistant('Here is')] }), 'prefill allowed');
  });

  it('a server tool (typed, e.g. web_search) is not held to the custom-tool rules', async () => {
    const { fake, client } = await start(alwaysOk());
    await served(
      client,
      fake,
      body({ tools: [BASH_TOOL, { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }], messages: [user('hi')] }),
      'server tool',
    );
  });
});

// ── 3. Streaming ────────────────────────────────────────────────────────────────────────────────

/** A tool input whose JSON has nested objects, arrays, escaped quotes and a backslash. */
const TRICKY_INPUT = {
  command: 'grep -rn "TODO: \\"fix\\"" src/ | head -n 5',
  options: { cwd: '/tmp/project', flags: ['-n', '-r'], depth: 2, note: 'a "quoted" word and a \\ backslash' },
};
const LONG_TEXT = 'I will search the source tree for TODO markers that mention a fix, then show you the first few.';

type SseEvent = { event: string; data: any };
function parseSse(raw: string): SseEvent[] {
  return raw
    .split('\n\n')
    .filter((chunk) => chunk.trim())
    .map((chunk) => {
      const event = chunk.match(/^event: (.*)$/m)?.[1] ?? '';
      const data = chunk.match(/^data: (.*)$/m)?.[1] ?? '';
      return { event, data: JSON.parse(data) };
    });
}

const isJson = (s: string) => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

describe('streaming', () => {
  it('finalMessage() equals the scripted message (text, tool_use with tricky input, stop_reason, usage)', async () => {
    const scripted = () => reply(text(LONG_TEXT), toolUse('bash', TRICKY_INPUT, 'toolu_tricky'));
    const { fake, client } = await start({ replies: [scripted(), scripted()] });
    const params = body({ tools: [BASH_TOOL], messages: [user('find the TODOs')] });

    const streamed = await client.messages.stream(params as any).finalMessage();
    const plain = await client.messages.create(params as any);

    expect(streamed.content, 'the streamed blocks reassemble to the scripted ones').toEqual([
      { type: 'text', text: LONG_TEXT },
      { type: 'tool_use', id: 'toolu_tricky', name: 'bash', input: TRICKY_INPUT },
    ]);
    expect(streamed.stop_reason, 'tool_use is the default stop_reason when a tool_use is present').toBe('tool_use');
    expect(streamed.role).toBe('assistant');
    expect(streamed.model, 'the model echoes the request').toBe(MODEL);
    expect(streamed.usage.input_tokens, 'input_tokens is the estimate of the request').toBe(estimateTokens(params));
    expect(streamed.usage.output_tokens, 'output_tokens arrives in message_delta').toBeGreaterThan(1);
    expect(
      { content: streamed.content, stop_reason: streamed.stop_reason, usage: streamed.usage },
      'the streamed message is the same message the non-streamed request returns',
    ).toEqual({ content: plain.content, stop_reason: plain.stop_reason, usage: plain.usage });
    expect(fake.requests[0].body.stream, 'the SDK asked for a stream').toBe(true);
  });

  it('raw SSE: message_start, content_block_start, ping, fragmented input_json_delta', async () => {
    const { fake } = await start({ replies: [reply(text(LONG_TEXT), toolUse('bash', TRICKY_INPUT, 'toolu_tricky'))] });
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}`, 'anthropic-version': '2026-10-21' },
      body: JSON.stringify(body({ stream: true, messages: [user('find the TODOs')] })),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type'), 'SSE content type').toMatch(/^text\/event-stream/);
    const raw = await res.text();
    for (const name of ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']) {
      expect(raw, `the stream has an \`event: ${name}\` line`).toContain(`event: ${name}\n`);
    }
    const events = parseSse(raw);
    expect(events[0].event, 'message_start comes first').toBe('message_start');
    expect(events[0].data.message, 'message_start carries an empty message').toMatchObject({ content: [], stop_reason: null });
    expect(events.at(-1)!.event, 'message_stop comes last').toBe('message_stop');
    expect(events.every((e) => e.event === e.data.type), 'every event line matches its data.type').toBe(true);

    const fragments = events
      .filter((e) => e.data.delta?.type === 'input_json_delta')
      .map((e) => e.data.delta.partial_json as string);
    expect(fragments.length, 'the tool input arrives in several input_json_delta events').toBeGreaterThanOrEqual(2);
    for (const f of fragments) {
      expect(isJson(f), `fragment ${JSON.stringify(f)} alone must not parse: clients have to concatenate`).toBe(false);
    }
    expect(fragments.join(''), 'the fragments concatenate to the input JSON').toBe(JSON.stringify(TRICKY_INPUT));
    expect(JSON.parse(fragments.join(''))).toEqual(TRICKY_INPUT);

    const textDeltas = events.filter((e) => e.data.delta?.type === 'text_delta').map((e) => e.data.delta.text as string);
    expect(textDeltas.length, 'the text arrives in several text_delta events').toBeGreaterThan(1);
    expect(textDeltas.join('')).toBe(LONG_TEXT);
  });

  it('text arrives in several `text` events on the SDK stream', async () => {
    const { client } = await start({ replies: [reply(text(LONG_TEXT))] });
    const deltas: string[] = [];
    const stream = client.messages.stream(body({ messages: [user('hi')] }) as any);
    stream.on('text', (delta) => deltas.push(delta));
    const msg = await stream.finalMessage();
    expect(deltas.length, 'more than one text delta: the reply is really streamed').toBeGreaterThan(1);
    expect(deltas.join(''), 'the deltas concatenate to the text').toBe(LONG_TEXT);
    expect(msg.stop_reason).toBe('end_turn');
  });

  it('eventDelayMs paces the events and the stream still completes correctly', async () => {
    const { client } = await start({ replies: [{ ...reply(text('Slow but steady.')), eventDelayMs: 30 }] });
    const t0 = Date.now();
    const msg = await client.messages.stream(body({ messages: [user('hi')] }) as any).finalMessage();
    const elapsed = Date.now() - t0;
    expect(msg.content, 'the delayed stream reassembles normally').toEqual([{ type: 'text', text: 'Slow but steady.' }]);
    // 7 events (start, block start, ping, 1 delta, block stop, message_delta, message_stop): loose lower bound only.
    expect(elapsed, 'the delay is really applied between events').toBeGreaterThanOrEqual(100);
  });
});

// ── 4. Usage numbers ────────────────────────────────────────────────────────────────────────────

describe('usage', () => {
  it('input_tokens equals estimateTokens(body), streamed and not', async () => {
    const { fake, client } = await start(alwaysOk());
    const params = body({ system: 'You are terse.', tools: [BASH_TOOL], messages: [user('hello there')] });
    const plain = await client.messages.create(params as any);
    const streamed = await client.messages.stream(params as any).finalMessage();
    const n = estimateTokens(params);
    expect(plain.usage.input_tokens, 'non-streamed usage.input_tokens').toBe(n);
    expect(streamed.usage.input_tokens, 'streamed usage.input_tokens').toBe(n);
    expect(fake.requests.map((r) => r.inputTokens), 'the recorded estimate is the same number').toEqual([n, n]);
  });

  it('usage overrides in the reply are honoured, streamed and not', async () => {
    const scripted = () => ({ ...reply(text('ok')), usage: { input_tokens: 123_456, output_tokens: 789 } });
    const { client } = await start({ replies: [scripted(), scripted()] });
    const plain = await client.messages.create(body({ messages: [user('hi')] }) as any);
    const streamed = await client.messages.stream(body({ messages: [user('hi')] }) as any).finalMessage();
    for (const [name, m] of [['non-streamed', plain], ['streamed', streamed]] as const) {
      expect(m.usage.input_tokens, `${name}: input_tokens override`).toBe(123_456);
      expect(m.usage.output_tokens, `${name}: output_tokens override`).toBe(789);
    }
  });

  describe('a scripted reply longer than max_tokens is cut, as the real API cuts it', () => {
    const events = async (res: Response) =>
      (await res.text()).split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));

    it('text: cut mid-text, stop_reason max_tokens, output_tokens = max_tokens', async () => {
      const long = 'All work and no play. '.repeat(400); // 8,800 characters: about 2,200 tokens
      const { client } = await start({ respond: () => reply(text(long)) });
      const params = body({ max_tokens: 100, messages: [user('hi')] });
      const plain = await client.messages.create(params as any);
      const streamed = await client.messages.stream(params as any).finalMessage();
      for (const [name, m] of [['non-streamed', plain], ['streamed', streamed]] as const) {
        expect(m.stop_reason, `${name}: stopped by the limit`).toBe('max_tokens');
        expect(m.usage.output_tokens, `${name}: all of max_tokens used`).toBe(100);
        const got = (m.content[0] as { text: string }).text;
        expect(long.startsWith(got) && got.length > 0, `${name}: the text's start`).toBe(true);
        const size = JSON.stringify(m.content).length;
        expect(size, `${name}: what was sent fits the fake's estimate of 100 tokens`).toBeLessThanOrEqual(400);
        expect(size, `${name}: and uses most of it`).toBeGreaterThan(360);
      }
    });

    it('a tool call: cut mid-input (the stream sends the JSON as far as it got), never run whole', async () => {
      const input = { path: 'notes.txt', content: 'x'.repeat(2_000) };
      const { fake, client } = await start({ respond: () => reply(text('Writing it.'), toolUse('write_file', input)) });
      const params = body({ max_tokens: 60, messages: [user('write it')] });
      const plain = await client.messages.create(params as any);
      expect(plain.stop_reason, 'non-streamed: stopped by the limit').toBe('max_tokens');
      expect(plain.usage.output_tokens, 'non-streamed: all of max_tokens used').toBe(60);
      expect(plain.content.map((b) => b.type), 'the text, then the call that was cut').toEqual(['text', 'tool_use']);
      expect((plain.content[1] as any).input, 'non-streamed: the cut call has no input').toEqual({});

      const res = await fetch(`${fake.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ ...params, stream: true }),
      });
      const sse = await events(res);
      const json = sse
        .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')
        .map((e) => e.delta.partial_json)
        .join('');
      const whole = JSON.stringify(input);
      expect(json.length > 0 && json.length < whole.length && whole.startsWith(json), 'the JSON, cut').toBe(true);
      const delta = sse.find((e) => e.type === 'message_delta');
      expect(delta.delta.stop_reason, 'streamed: stopped by the limit').toBe('max_tokens');
      expect(delta.usage.output_tokens, 'streamed: all of max_tokens used').toBe(60);
    });

    it('a reply within max_tokens is served whole', async () => {
      const { client } = await start({ respond: () => reply(text('y'.repeat(300))) });
      const m = await client.messages.create(body({ max_tokens: 100, messages: [user('hi')] }) as any);
      expect(m.stop_reason, 'not cut').toBe('end_turn');
      expect((m.content[0] as { text: string }).text, 'all of it').toHaveLength(300);
    });
  });

  it('stop_reason overrides in the reply are honoured (e.g. max_tokens)', async () => {
    const { client } = await start({ replies: [{ ...reply(text('cut off mid')), stop_reason: 'max_tokens' }] });
    const msg = await client.messages.stream(body({ messages: [user('hi')] }) as any).finalMessage();
    expect(msg.stop_reason).toBe('max_tokens');
  });
});

// ── 5. Fault injection ──────────────────────────────────────────────────────────────────────────

describe('fault injection', () => {
  it('429 with retry-after-ms then success: the SDK retries and succeeds', async () => {
    const { fake, client } = await start(
      { replies: [httpError(429, undefined, { 'retry-after-ms': '10' }), reply(text('after the retry'))] },
      { maxRetries: 2 },
    );
    const msg = await client.messages.create(body({ messages: [user('hi')] }) as any);
    expect(msg.content, 'the retried request got the next scripted reply').toEqual([{ type: 'text', text: 'after the retry' }]);
    expect(fake.requests, 'two attempts reached the fake').toHaveLength(2);
    expect(fake.requests[0].injected, 'the first attempt got the injected 429').toEqual({
      status: 429,
      type: 'rate_limit_error',
      message: 'Number of request tokens has exceeded your per-minute rate limit',
    });
    expect(fake.requests[1].injected, 'the second attempt was served').toBeUndefined();
  });

  it('429 without x-should-retry and maxRetries 0 → RateLimitError', async () => {
    const { fake, client } = await start({ replies: [httpError(429, 'slow down')] });
    const err = await rejection(client.messages.create(body({ messages: [user('hi')] }) as any), 'injected 429');
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.error.error, 'an injected message replaces the default').toEqual({ type: 'rate_limit_error', message: 'slow down' });
    expect(err.headers.get('x-should-retry'), 'a 429 is left retryable (no x-should-retry: false)').toBeNull();
    expect(fake.requests[0].refused, 'an injected fault is not a refusal').toBeUndefined();
  });

  it('529 → OverloadedError', async () => {
    const { fake, client } = await start({ replies: [httpError(529)] });
    const err = await rejection(client.messages.create(body({ messages: [user('hi')] }) as any), 'injected 529');
    expect(err, '529 maps to OverloadedError').toBeInstanceOf(Anthropic.OverloadedError);
    expect(err.status).toBe(529);
    expect(err.error.error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
    expect(fake.requests[0].injected?.status).toBe(529);
  });

  it('500 → InternalServerError', async () => {
    const { client } = await start({ replies: [httpError(500)] });
    const err = await rejection(client.messages.create(body({ messages: [user('hi')] }) as any), 'injected 500');
    expect(err, '500 maps to InternalServerError').toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.status).toBe(500);
    expect(err.error.error).toEqual({ type: 'api_error', message: 'Internal server error' });
  });

  it('401 → AuthenticationError, marked not retryable', async () => {
    const { client } = await start({ replies: [httpError(401)] });
    const err = await rejection(client.messages.create(body({ messages: [user('hi')] }) as any), 'injected 401');
    expect(err, '401 maps to AuthenticationError').toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.status).toBe(401);
    expect(err.error.error).toEqual({ type: 'authentication_error', message: 'invalid x-api-key' });
    expect(err.headers.get('x-should-retry')).toBe('false');
  });

  it('errorAfterBlocks: 1 → finalMessage rejects with an APIError without status, mentioning Overloaded', async () => {
    const { client } = await start({
      replies: [{ ...reply(text('First block.'), toolUse('bash', { command: 'ls' })), errorAfterBlocks: 1 }],
    });
    const stream = client.messages.stream(body({ messages: [user('hi')] }) as any);
    const blocks: unknown[] = [];
    stream.on('contentBlock', (b) => blocks.push(b));
    const err = await rejection(stream.finalMessage(), 'mid-stream error event');
    expect(err, 'a mid-stream error is an APIError').toBeInstanceOf(Anthropic.APIError);
    expect(err.status, 'it has no HTTP status: the response was a 200').toBeUndefined();
    expect(String(err.message), 'the message carries the error event').toContain('Overloaded');
    expect(err.error?.error?.type, 'the parsed event body').toBe('overloaded_error');
    expect(blocks, 'the block before the error was delivered').toEqual([{ type: 'text', text: 'First block.' }]);
  });

  it('errorAfterBlocks equal to the block count → error after the last block', async () => {
    const { client } = await start({ replies: [{ ...reply(text('Only block.')), errorAfterBlocks: 1 }] });
    const err = await rejection(
      client.messages.stream(body({ messages: [user('hi')] }) as any).finalMessage(),
      'error event before message_delta',
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBeUndefined();
  });

  it('dropAfterBlocks: 1 → finalMessage rejects', async () => {
    const { client } = await start({
      replies: [{ ...reply(text('First block.'), text('Never sent.')), dropAfterBlocks: 1 }],
    });
    const stream = client.messages.stream(body({ messages: [user('hi')] }) as any);
    await expect(stream.finalMessage(), 'a dropped connection fails the stream').rejects.toBeInstanceOf(Error);
  });

  /** Stream a two-block reply that drops after block 1, with one retry allowed and a spare reply queued. */
  async function dropAfterFirstBlock(extra: { eventDelayMs?: number }) {
    const { fake, client } = await start(
      { replies: [{ ...reply(text('First block.'), text('Never sent.')), dropAfterBlocks: 1, ...extra }, reply(text('spare'))] },
      { maxRetries: 1 },
    );
    const stream = client.messages.stream(body({ messages: [user('hi')] }) as any);
    const blocks: unknown[] = [];
    stream.on('contentBlock', (b) => blocks.push(b));
    const outcome = await stream.finalMessage().then(
      (m) => ({ resolved: m.content }),
      (e: Error) => ({ rejected: e }),
    );
    return { fake, blocks, outcome };
  }

  it('dropAfterBlocks with paced events: block 1 arrives, then the stream dies and is not retried', async () => {
    const { fake, blocks, outcome } = await dropAfterFirstBlock({ eventDelayMs: 2 });
    expect(blocks, 'the block before the drop was delivered').toEqual([{ type: 'text', text: 'First block.' }]);
    expect('rejected' in outcome, 'finalMessage rejects').toBe(true);
    expect(fake.requests, 'a stream that has started is not retried by the SDK').toHaveLength(1);
  });

  // Without a delay every SSE write is still queued when the socket is cut; the fake must flush first,
  // or the client sees a connection error before any response and the SDK retries it.
  it('dropAfterBlocks without eventDelayMs: block 1 arrives and the drop is not retried', async () => {
    const { fake, blocks, outcome } = await dropAfterFirstBlock({});
    expect(blocks, 'the block before the drop was delivered').toEqual([{ type: 'text', text: 'First block.' }]);
    expect('rejected' in outcome, 'finalMessage rejects').toBe(true);
    expect(fake.requests, 'a stream that has started is not retried by the SDK').toHaveLength(1);
  });

  it('an exhausted reply queue → 500 mentioning "no scripted reply left", not retried', async () => {
    const { fake, client } = await start({ replies: [reply(text('only one'))] }, { maxRetries: 2 });
    await client.messages.create(body({ messages: [user('hi')] }) as any);
    const err = await rejection(client.messages.create(body({ messages: [user('again')] }) as any), 'queue exhausted');
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.status).toBe(500);
    expect(err.error.error.message, 'the test author sees why').toContain('no scripted reply left');
    expect(fake.requests, 'x-should-retry: false stops the SDK retrying a script error').toHaveLength(2);
  });

  it('a respond function gets the body and ctx.index (refused requests counted)', async () => {
    const seen: { body: any; ctx: RespondContext }[] = [];
    const { fake, client } = await start({
      respond: async (b, ctx) => {
        seen.push({ body: b, ctx: { ...ctx, requests: [...ctx.requests] } });
        return reply(text(`reply #${ctx.index}`));
      },
    });
    const m0 = await client.messages.create(body({ messages: [user('first')] }) as any);
    await rejection(client.messages.create(body({ messages: [] }) as any), 'refused in between');
    const m2 = await client.messages.create(body({ messages: [user('third')] }) as any);

    expect(seen.map((s) => s.ctx.index), 'respond is not called for a refused request, but it counts').toEqual([0, 2]);
    expect(seen[1].body.messages, 'respond receives the parsed body').toEqual([user('third')]);
    expect(seen[1].ctx.requests.at(-1), 'ctx.requests ends with this request').toBe(fake.requests[2]);
    expect(seen[1].ctx.inputTokens, 'ctx.inputTokens is the estimate').toBe(estimateTokens(seen[1].body));
    expect([m0.content, m2.content]).toEqual([[{ type: 'text', text: 'reply #0' }], [{ type: 'text', text: 'reply #2' }]]);
  });

  it('a respond function that throws → 500 naming the cause', async () => {
    const { client } = await start({
      respond: () => {
        throw new Error('boom');
      },
    });
    const err = await rejection(client.messages.create(body({ messages: [user('hi')] }) as any), 'respond threw');
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.error.error.message).toBe('fake-anthropic: respond() threw: boom');
  });
});

// ── 6. Recording ────────────────────────────────────────────────────────────────────────────────

describe('recording', () => {
  it('records every request with headers, body and inputTokens', async () => {
    const { fake, client } = await start({ replies: [reply(text('one')), reply(text('two'))] });
    const p1 = body({ messages: [user('first')] });
    const p2 = body({ system: 'Be brief.', messages: [user('second')] });
    await client.messages.create(p1 as any);
    await client.messages.stream(p2 as any).finalMessage();

    expect(fake.requests, 'one record per request').toHaveLength(2);
    for (const [i, p] of [p1, p2].entries()) {
      const rec = fake.requests[i];
      expect(rec.method).toBe('POST');
      expect(rec.path).toBe('/v1/messages');
      expect(rec.headers['authorization'], 'SDK 1.x sends the key as a Bearer token').toBe(`Bearer ${API_KEY}`);
      expect(rec.headers['anthropic-version'], 'the SDK sends its API version').toBeTruthy();
      expect(rec.body, 'the parsed body as sent').toEqual(i === 1 ? { ...p, stream: true } : p);
      expect(rec.inputTokens, 'the token estimate of the body').toBe(estimateTokens(p));
      expect(rec.refused).toBeUndefined();
      expect(rec.injected).toBeUndefined();
    }
  });
});

// ── 7. Prompt caching ───────────────────────────────────────────────────────────────────────────

/** About 1,600 tokens of system prompt: over the default minimum cacheable length (1,024). */
const LONG_RULES = 'Keep functions small, name things plainly, and test what you change. '.repeat(90);
const MINUTE = 60_000;

type Usage = Anthropic.Usage;
/** The three input counters of a usage block, to compare at a glance. */
const split = (u: Usage | undefined) => ({
  input: u?.input_tokens,
  read: u?.cache_read_input_tokens,
  written: u?.cache_creation_input_tokens,
});
const total = (u: Usage) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);

/** Send bodies one after another to a fake of their own (closed after), streamed or not; their usage blocks. */
async function usages(bodies: Record<string, unknown>[], opts: FakeOptions = {}, stream = false): Promise<Usage[]> {
  const own = await startFakeAnthropic({ ...alwaysOk(), ...opts });
  try {
    const client = new Anthropic({ apiKey: API_KEY, baseURL: own.url, maxRetries: 0 });
    const out: Usage[] = [];
    for (const b of bodies) {
      const msg = stream ? await client.messages.stream(b as any).finalMessage() : await client.messages.create(b as any);
      expect(msg.usage, 'the recorded usage is the one the client got').toEqual(own.requests.at(-1)!.usage);
      out.push(msg.usage);
    }
    return out;
  } finally {
    await own.close();
  }
}

/** The conversation with a breakpoint on the last block of the last message, and none elsewhere in it. */
function markLast(messages: Msg[]): Msg[] {
  return messages.map((m, i) => {
    const blocks = (typeof m.content === 'string' ? [tb(m.content)] : (m.content as Record<string, unknown>[])).map((b) => {
      const { cache_control: _, ...rest } = b as Record<string, unknown>;
      return rest;
    });
    if (i === messages.length - 1) blocks[blocks.length - 1] = marked(blocks[blocks.length - 1]);
    return { ...m, content: blocks };
  });
}

describe('prompt caching', () => {
  it('without a breakpoint nothing is cached: both counters 0, input_tokens the whole estimate', async () => {
    const params = body({ system: LONG_RULES, tools: [BASH_TOOL], messages: [user('hello there')] });
    const [first, second] = await usages([params, params]);
    const n = estimateTokens(params);
    for (const u of [first, second]) {
      expect(split(u), 'no cache_control: nothing read, nothing written').toEqual({ input: n, read: 0, written: 0 });
      expect(u.cache_creation, 'the per-TTL breakdown is there, at 0').toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
    }
  });

  it('the first request writes the prefix up to the breakpoint; the same request again reads it', async () => {
    const params = body({ tools: [BASH_TOOL], system: [marked(tb(LONG_RULES))], messages: [user('What does this project do?')] });
    const [first, second] = await usages([params, params]);
    expect(first.cache_read_input_tokens, 'a cold cache has nothing to read').toBe(0);
    expect(first.cache_creation_input_tokens, 'tools + system are written (over the 1,024 minimum)').toBeGreaterThan(1024);
    expect(first.cache_creation?.ephemeral_5m_input_tokens, 'the default TTL is 5 minutes').toBe(first.cache_creation_input_tokens);
    expect(first.input_tokens, 'the user message after the breakpoint is ordinary input').toBeGreaterThan(0);
    expect(total(first), 'input + read + written is the whole prompt').toBe(estimateTokens(params));
    expect(split(second), 'the same request again reads what the first wrote').toEqual({
      input: first.input_tokens,
      read: first.cache_creation_input_tokens,
      written: 0,
    });
  });

  it('input_tokens counts only what comes after the last breakpoint', async () => {
    const system = [marked(tb(LONG_RULES))];
    const short = body({ system, messages: [user('Why?')] });
    const long = body({ system, messages: [user('Why does the build take so long on a clean checkout? '.repeat(20))] });
    const lastMarked = body({ system, messages: markLast([user('Why?')]) });
    const [a, b, c] = await usages([short, long, lastMarked]);
    expect(b.cache_read_input_tokens, 'the same system prefix is read').toBe(a.cache_creation_input_tokens);
    expect(b.input_tokens - a.input_tokens, 'a longer tail after the breakpoint adds to input_tokens, and only there').toBe(
      estimateTokens(long) - estimateTokens(short),
    );
    expect(c.input_tokens, 'with the breakpoint on the last block nothing comes after it').toBe(0);
    expect(total(c)).toBe(estimateTokens(lastMarked));
  });

  it('caching changes no totals: the markers count no tokens, and input + read + written is the unmarked estimate', async () => {
    const messages: Msg[] = [user([tb('list files')]), assistant([tu('toolu_1')]), user([tr('toolu_1')])];
    const plain = body({ tools: [BASH_TOOL], system: [tb(LONG_RULES)], messages });
    const withMarkers = body({ tools: [marked(BASH_TOOL)], system: [marked(tb(LONG_RULES))], messages: markLast(messages) });
    expect(estimateTokens(withMarkers), 'cache_control is not part of the prompt: same estimate').toBe(estimateTokens(plain));
    const [unmarked, written, read] = await usages([plain, withMarkers, withMarkers]);
    expect(unmarked.input_tokens, 'without markers: all ordinary input').toBe(estimateTokens(plain));
    expect(total(written), 'a cache write: the same total').toBe(unmarked.input_tokens);
    expect(total(read), 'a cache read: the same total').toBe(unmarked.input_tokens);
    expect(split(read), 'everything up to the last block was read').toEqual({ input: 0, read: unmarked.input_tokens, written: 0 });
  });

  it('the agent pattern: system breakpoint + last-message breakpoint; each turn reads the last one and writes only the new part', async () => {
    const history: Msg[] = [user([tb('list the files')])];
    const turns: Msg[][] = [
      [assistant([tb('Listing.'), tu('toolu_1')]), user([tr('toolu_1', 'a.ts\nb.ts')])],
      [assistant([tu('toolu_2', { command: 'wc -l a.ts b.ts' })]), user([tr('toolu_2', '3 a.ts\n5 b.ts')])],
      [assistant([tb('Two files, eight lines.')]), user([tb('thanks')])],
    ];
    const bodies = [body({ tools: [BASH_TOOL], system: [marked(tb(LONG_RULES))], messages: markLast(history) })];
    for (const turn of turns) {
      history.push(...turn);
      bodies.push(body({ tools: [BASH_TOOL], system: [marked(tb(LONG_RULES))], messages: markLast(history) }));
    }
    const got = await usages(bodies);
    expect(split(got[0]), 'turn 1 writes it all').toEqual({ input: 0, read: 0, written: estimateTokens(bodies[0]) });
    for (let t = 1; t < bodies.length; t++) {
      expect(split(got[t]), `turn ${t + 1}: reads turn ${t}'s prompt, writes only what is new`).toEqual({
        input: 0,
        read: estimateTokens(bodies[t - 1]),
        written: estimateTokens(bodies[t]) - estimateTokens(bodies[t - 1]),
      });
    }
  });

  it('what invalidates what: a changed system prompt invalidates the messages; a changed tool_choice only the messages', async () => {
    const messages = markLast([user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1')])]);
    const base = body({ tools: [marked(BASH_TOOL)], system: [marked(tb(LONG_RULES))], messages });
    const toolsOnly = body({ tools: [marked(BASH_TOOL)], messages: [user('hi')] });
    const newSystem = { ...base, system: [marked(tb(`${LONG_RULES} Also: be brief.`))] };
    const newChoice: Record<string, unknown> = { ...base, tool_choice: { type: 'any' } };
    // Probes: what the tools prefix and the tools + system prefix measure, read from base's entries.
    const systemOnly = body({ tools: [marked(BASH_TOOL)], system: [marked(tb(LONG_RULES))], messages: [user('hi')] });
    const [, tools, changedSystem, system, changedChoice] = await usages([base, toolsOnly, newSystem, systemOnly, newChoice], {
      minCacheableTokens: 1, // the tools prefix alone is small
    });
    expect(tools.cache_read_input_tokens, 'probe: the tools prefix').toBeGreaterThan(0);
    expect(system.cache_read_input_tokens, 'probe: the tools + system prefix').toBeGreaterThan(1024);
    expect(changedSystem.cache_read_input_tokens, 'a new system prompt: only the tools prefix is read').toBe(tools.cache_read_input_tokens);
    expect(split(changedChoice), 'a new tool_choice: tools and system are read, the messages written again').toEqual({
      input: 0,
      read: system.cache_read_input_tokens,
      written: estimateTokens(newChoice) - system.cache_read_input_tokens!,
    });
  });

  it.each([
    [20, 'reads the entry 20 blocks back'],
    [21, 'does not look 21 blocks back: writes it all again'],
  ])('lookback: a breakpoint %i blocks after the cached one %s', async (extra) => {
    const first = body({ messages: [user([marked(tb('start'))])] });
    const lines = Array.from({ length: extra }, (_, i) => tb(`line ${i + 1}`));
    const second = body({ messages: markLast([user([tb('start'), ...lines])]) });
    const [a, b] = await usages([first, second], { minCacheableTokens: 1 });
    expect(a.cache_creation_input_tokens, 'the first request writes its one block').toBe(estimateTokens(first));
    const read = extra <= 20 ? estimateTokens(first) : 0;
    expect(split(b), `${extra} blocks later`).toEqual({ input: 0, read, written: estimateTokens(second) - read });
  });

  it('TTL: a 5-minute entry expires 5 minutes after its last use, and every hit starts the 5 minutes again', async () => {
    let clock = 1_000_000;
    const { client } = await start({ ...alwaysOk(), minCacheableTokens: 1, now: () => clock });
    const params = body({ system: [marked(tb(LONG_RULES))], messages: [user('hi')] });
    const send = async () => (await client.messages.create(params as any)).usage;
    const written = (await send()).cache_creation_input_tokens;
    clock += 5 * MINUTE - 1;
    expect((await send()).cache_read_input_tokens, 'read just before 5 minutes').toBe(written);
    clock += 5 * MINUTE - 1; // ten minutes after the write, five after the hit
    expect((await send()).cache_read_input_tokens, 'the hit started the 5 minutes again').toBe(written);
    clock += 5 * MINUTE;
    expect(split(await send()), 'five minutes unused: expired, written again').toMatchObject({ read: 0, written });
  });

  it('TTL: an entry found by lookback (not at the breakpoint itself) is refreshed by that hit too', async () => {
    let clock = 0;
    const { client } = await start({ ...alwaysOk(), minCacheableTokens: 1, now: () => clock });
    const send = async (messages: Msg[]) => (await client.messages.create(body({ messages }) as any)).usage;
    const opening = [tb(LONG_RULES)];
    const written = (await send(markLast([user(opening)]))).cache_creation_input_tokens;
    clock += 4 * MINUTE;
    const branchA = await send(markLast([user([...opening, tb('then A')])]));
    expect(branchA.cache_read_input_tokens, 'the breakpoint one block later finds the entry by lookback').toBe(written);
    clock += 4 * MINUTE; // eight minutes after the write, four after the hit
    const branchB = await send(markLast([user([...opening, tb('then B')])]));
    expect(branchB.cache_read_input_tokens, 'the lookback hit started its 5 minutes again').toBe(written);
  });

  it('TTL: a 1-hour entry outlives a 5-minute one, and expires after an hour', async () => {
    let clock = 0;
    const { client } = await start({ ...alwaysOk(), minCacheableTokens: 1, now: () => clock });
    // 1 hour on the system prompt, 5 minutes on the conversation (1h must come first).
    const params = body({ system: [marked(tb(LONG_RULES), '1h')], messages: markLast([user('hi')]) });
    const send = async () => (await client.messages.create(params as any)).usage;
    const first = await send();
    const { ephemeral_1h_input_tokens: hour, ephemeral_5m_input_tokens: five } = first.cache_creation!;
    expect(hour, 'the system prefix goes into a 1-hour entry').toBeGreaterThan(1024);
    expect(five, 'the message after it into a 5-minute one').toBeGreaterThan(0);
    expect(hour + five).toBe(first.cache_creation_input_tokens);
    clock += 6 * MINUTE;
    const later = await send();
    expect(split(later), 'after 6 minutes: the 1-hour entry is read, the 5-minute part written again').toMatchObject({ read: hour, written: five });
    expect(later.cache_creation, 'and that write is a 5-minute one').toEqual({ ephemeral_5m_input_tokens: five, ephemeral_1h_input_tokens: 0 });
    clock += 60 * MINUTE;
    expect(split(await send()), 'an hour unused: everything written again').toMatchObject({ read: 0, written: hour + five });
  });

  it('a prefix under the minimum cacheable length is not cached, with no error; at the minimum it is', async () => {
    const params = body({ system: [marked(tb('You are terse.'))], messages: [user('hi')] });
    const n = estimateTokens(params);
    const [a, b] = await usages([params, params]); // default minimum 1,024
    for (const u of [a, b]) expect(split(u), 'served, nothing cached: all ordinary input').toEqual({ input: n, read: 0, written: 0 });
    const [measured] = await usages([params], { minCacheableTokens: 1 });
    const prefix = measured.cache_creation_input_tokens!;
    const [atMinimum] = await usages([params], { minCacheableTokens: prefix });
    const [underMinimum] = await usages([params], { minCacheableTokens: prefix + 1 });
    expect(atMinimum.cache_creation_input_tokens, `a ${prefix}-token prefix with a ${prefix}-token minimum is cached`).toBe(prefix);
    expect(underMinimum.cache_creation_input_tokens, `…with a ${prefix + 1}-token minimum it is not`).toBe(0);
  });

  it('a top-level cache_control (automatic caching) puts the breakpoint on the last block', async () => {
    const turn1 = body({ cache_control: { type: 'ephemeral' }, system: LONG_RULES, messages: [user('list files')] });
    const turn2 = { ...turn1, messages: [user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1')])] };
    const [a, b] = await usages([turn1, turn2]);
    expect(split(a), 'everything is written').toEqual({ input: 0, read: 0, written: estimateTokens(turn1) });
    expect(split(b), 'the next turn reads it and writes the new part').toEqual({
      input: 0,
      read: estimateTokens(turn1),
      written: estimateTokens(turn2) - estimateTokens(turn1),
    });
  });

  it('four breakpoints, 1-hour ones first, are served', async () => {
    const params = body({
      tools: [marked(BASH_TOOL, '1h')],
      system: [marked(tb(LONG_RULES), '1h')],
      messages: [user([marked(tb('first'), '5m')]), assistant('ok'), user([tb('second'), marked(tb('third'))])],
    });
    const [u] = await usages([params], { minCacheableTokens: 1 });
    expect(u.cache_creation!.ephemeral_1h_input_tokens, 'tools and system go into 1-hour entries').toBeGreaterThan(1024);
    expect(u.cache_creation!.ephemeral_5m_input_tokens, 'the messages into 5-minute ones').toBeGreaterThan(0);
    expect(split(u), 'all of it written').toEqual({ input: 0, read: 0, written: estimateTokens(params) });
  });

  it('streamed and non-streamed replies report the same usage, turn after turn', async () => {
    const history: Msg[] = [user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1')])];
    const bodies = [
      body({ system: [marked(tb(LONG_RULES))], messages: markLast(history.slice(0, 1)) }),
      body({ system: [marked(tb(LONG_RULES))], messages: markLast(history) }),
    ];
    const plain = await usages(bodies);
    const streamed = await usages(bodies, {}, true);
    expect(streamed, 'finalMessage().usage equals the non-streamed usage, cache counters included').toEqual(plain);
    expect(plain[1].cache_read_input_tokens, 'and the second turn did read').toBeGreaterThan(0);
  });

  it('raw SSE: message_start carries the input usage with the cache counters; message_delta repeats them with the output', async () => {
    const { fake } = await start(alwaysOk());
    const params = body({ stream: true, system: [marked(tb(LONG_RULES))], messages: [user('hi')] });
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}`, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(params),
    });
    const events = parseSse(await res.text());
    const usage = fake.requests[0].usage!;
    const atStart = events.find((e) => e.event === 'message_start')!.data.message.usage;
    const delta = events.find((e) => e.event === 'message_delta')!.data.usage;
    expect(atStart, 'message_start: the input side, output_tokens 1').toEqual({ ...usage, output_tokens: 1 });
    expect(atStart.cache_creation_input_tokens, 'it did write').toBeGreaterThan(0);
    expect(delta, 'message_delta: the cumulative counters').toEqual({
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
    });
  });

  it('only a served message touches the cache: count_tokens, a refusal and an injected error neither read nor write', async () => {
    const params = body({ system: [marked(tb(LONG_RULES))], messages: [user('hi')] });
    const { fake, client } = await start({ replies: [httpError(529), reply(text('ok')), reply(text('ok'))] });
    const { max_tokens: _, ...countable } = params;
    await client.messages.countTokens(countable as any);
    await rejection(client.messages.create({ ...params, max_tokens: 0 } as any), 'refused');
    await rejection(client.messages.create(params as any), 'injected 529');
    const first = await client.messages.create(params as any);
    const second = await client.messages.create(params as any);
    expect(first.usage.cache_read_input_tokens, 'nothing was cached before the first served message').toBe(0);
    expect(second.usage.cache_read_input_tokens, 'the served one did write').toBe(first.usage.cache_creation_input_tokens);
    expect(fake.requests.map((r) => r.usage === undefined), 'usage is recorded for served messages only').toEqual([true, true, true, false, false]);
  });

  it('each fake has its own cache: a new server starts cold', async () => {
    const params = body({ system: [marked(tb(LONG_RULES))], messages: [user('hi')] });
    const [a] = await usages([params]);
    const [b] = await usages([params]);
    expect(split(b), 'the same request to another fake writes again').toEqual(split(a));
    expect(b.cache_read_input_tokens).toBe(0);
  });
});
