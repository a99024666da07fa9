/**
 * The usage and stop_reason of the fake's replies: the token estimate, a script's overrides,
 * and a reply longer than max_tokens cut where the real API cuts it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { estimateTokens, reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { alwaysOk, API_KEY, BASH_TOOL, body, closeFake, start, user } from './harness.ts';

afterEach(closeFake);

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
