/**
 * The fake serves valid conversations, as the real API does: nothing it serves is refused.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { reply, text, toolUse, type FakeAnthropic } from '../../shared/fake-anthropic.ts';
import {
  alwaysOk,
  assistant,
  BASH_TOOL,
  body,
  closeFake,
  start,
  tb,
  tr,
  tu,
  user,
} from './harness.ts';

afterEach(closeFake);

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
