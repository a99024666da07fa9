/**
 * The faults a test scripts (HTTP errors, an error or a dropped connection mid-stream) and what
 * the SDK does with them; respond() and its context.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  estimateTokens,
  httpError,
  reply,
  text,
  toolUse,
  type RespondContext,
} from '../../shared/fake-anthropic.ts';
import { body, closeFake, rejection, start, user } from './harness.ts';

afterEach(closeFake);

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
