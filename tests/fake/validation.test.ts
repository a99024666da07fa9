/**
 * The fake's validation (shared/fake/validation.ts, and caching.ts's cache_control checks): each
 * rule of rules.ts refused like the real API, through the real SDK; then the limits (max_tokens,
 * the context window, the body's size), bodies that are no JSON object, headers and the key,
 * count_tokens and unknown routes.
 * Thinking blocks sent back: tests/fake-thinking.test.ts.
 */
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateTokens, reply, text } from '../../shared/fake-anthropic.ts';
import { startOfflineModel } from '../../shared/offline-model.ts';
import {
  alwaysOk,
  assistant,
  badRequest,
  BASH_TOOL,
  body,
  closeFake,
  expectRefusal,
  MODEL,
  rejection,
  start,
  tr,
  tu,
  user,
} from './harness.ts';
import { RULES, UNEXPECTED_RESULT } from './rules.ts';

afterEach(closeFake);

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
