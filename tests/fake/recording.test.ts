/**
 * What the fake records of each request (fake.requests).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { estimateTokens, reply, text } from '../../shared/fake-anthropic.ts';
import { API_KEY, body, closeFake, start, user } from './harness.ts';

afterEach(closeFake);

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
