/**
 * The fake's streams (shared/fake/server.ts), as the SDK reads them: events, pieces of a tool
 * call's JSON cut mid-string, the final message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { estimateTokens, reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { API_KEY, BASH_TOOL, body, closeFake, MODEL, parseSse, start, user } from './harness.ts';

afterEach(closeFake);

/** A tool input whose JSON has nested objects, arrays, escaped quotes and a backslash. */
const TRICKY_INPUT = {
  command: 'grep -rn "TODO: \\"fix\\"" src/ | head -n 5',
  options: { cwd: '/tmp/project', flags: ['-n', '-r'], depth: 2, note: 'a "quoted" word and a \\ backslash' },
};
const LONG_TEXT = 'I will search the source tree for TODO markers that mention a fix, then show you the first few.';

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
