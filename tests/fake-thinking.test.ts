/**
 * The fake's thinking rules (anthropic-api-notes.md section 7), driven through the real SDK.
 *
 * A 5.5 model thinks unless told otherwise: its replies carry signed `thinking` blocks, and a request
 * that sends them back is checked the way the API checks it. Each refusal is asserted by its exact
 * message, and most have an accepted twin, so a test fails if the rule behind it goes missing.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  redactedThinking,
  reply,
  startFakeAnthropic,
  text,
  thinking,
  toolUse,
  type FakeAnthropic,
  type FakeOptions,
} from '../shared/fake-anthropic.ts';

// ── Harness ─────────────────────────────────────────────────────────────────────────────────────

const SONNET = 'claude-sonnet-5-5';
const OPUS = 'claude-opus-5-5';
const HAIKU = 'claude-haiku-5-5';

let fake: FakeAnthropic | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** One fake per test (closed in afterEach) and an SDK client that never retries. */
async function start(opts: FakeOptions) {
  fake = await startFakeAnthropic(opts);
  const client = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 0 });
  return { fake, client };
}

/** A fake that answers every request with a short remark and a bash call. */
const toolLoop = (): FakeOptions => ({
  respond: (_body, ctx) => reply(text(`Step ${ctx.index + 1}.`), toolUse('bash', { command: `ls ${ctx.index + 1}` })),
});

type Msg = { role: 'user' | 'assistant'; content: any };
type Block = Record<string, any>;
const user = (content: unknown): Msg => ({ role: 'user', content });
const assistant = (content: unknown): Msg => ({ role: 'assistant', content });
const tr = (id: string, content: unknown) => ({ type: 'tool_result', tool_use_id: id, content });
const SYSTEM = 'You are a coding agent.';
const BASH_TOOL = {
  name: 'bash',
  description: 'Run a shell command',
  input_schema: { type: 'object', properties: { command: { type: 'string' } } },
};

/** A request body: Sonnet 5.5, the system prompt and the bash tool, the rest from `extra`. */
const params = (extra: Record<string, unknown>): any => ({
  model: SONNET,
  max_tokens: 1024,
  system: SYSTEM,
  tools: [BASH_TOOL],
  ...extra,
});

const isThinking = (b: Block) => b.type === 'thinking' || b.type === 'redacted_thinking';
const types = (content: Block[]) => content.map((b) => b.type);
/** The message without its thinking blocks. */
const stripped = (m: Msg): Msg => ({ ...m, content: (m.content as Block[]).filter((b) => !isThinking(b)) });
const callId = (content: Block[]) => content.find((b) => b.type === 'tool_use')!.id as string;
/** The string with its character at `at` replaced by another one. */
const oneCharOff = (s: string, at: number) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);

/**
 * A conversation of `n` tool rounds from one prompt, each reply pushed back as received and its
 * call answered; returns the messages, ending with the last tool_result.
 */
async function rounds(client: Anthropic, n: number, extra: Record<string, unknown> = {}): Promise<Msg[]> {
  const messages: Msg[] = [user('list files')];
  for (let r = 1; r <= n; r++) {
    const msg = await client.messages.create(params({ messages, ...extra }));
    messages.push(assistant(msg.content), user([tr(callId(msg.content), `output ${r}`)]));
  }
  return messages;
}

/** Send a body and require it served: a 200, nothing refused. */
async function accepted(client: Anthropic, f: FakeAnthropic, body: any, intent: string) {
  const msg = await client.messages.create(body).catch((err) => {
    throw new Error(`${intent}: should be served, was refused: ${err?.error?.error?.message ?? err}`);
  });
  expect(f.requests.at(-1)!.refused, `${intent}: not refused`).toBeUndefined();
  return msg;
}

/** Await a request that must be refused with a 400 and exactly this message. */
async function refused(f: FakeAnthropic, sent: PromiseLike<unknown>, message: string, intent: string) {
  let err: any;
  try {
    await sent;
  } catch (e) {
    err = e;
  }
  expect(err, `${intent}: should be refused, was served`).toBeDefined();
  expect(err, `${intent}: a 400 is a BadRequestError`).toBeInstanceOf(Anthropic.BadRequestError);
  expect(err.status, intent).toBe(400);
  expect(err.error?.error?.type, intent).toBe('invalid_request_error');
  expect(err.error?.error?.message, `${intent}: the API's words`).toBe(message);
  expect(f.requests.at(-1)!.refused?.message, `${intent}: recorded as refused`).toBe(message);
}

// The fake's messages, word for word.
const BOUND = (where: string) =>
  `${where}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. ` +
  'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". That setting ' +
  'requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header.';
const INVALID = (where: string) => `${where}: Invalid \`signature\` in \`thinking\` block`;
const MODIFIED = (where: string) =>
  `${where}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. ` +
  'These blocks must remain as they were in the original response.';
const NOT_SUPPORTED = (type: string) =>
  `"thinking.type.${type}" is not supported for this model. Use "thinking.type.adaptive" and ` +
  '"output_config.effort" to control thinking behavior.';
const SONNET_DISABLED =
  'To turn thinking off on this model, send "thinking": {"type": "between_tools"} instead of {"type": ' +
  '"disabled"}. The model does not think before responding. The short updates it writes between tool ' +
  'calls come back as thinking blocks.';
const FORCED = 'tool_choice: type "tool" and "any" are not supported for this model.';

const SUMMARIZED = { type: 'adaptive', display: 'summarized' };

// ── 1. Generation ───────────────────────────────────────────────────────────────────────────────

describe('generation: where thinking blocks appear', () => {
  const script = () => ({ replies: [reply(text('Let me look.'), toolUse('bash', { command: 'ls' }))] });

  it('Sonnet 5.5, no thinking field: reasoning block first, progress block before the call, both empty', async () => {
    const { fake, client } = await start(script());
    const msg = await accepted(client, fake, params({ messages: [user('list files')] }), 'default thinking');
    const content = msg.content as Block[];
    expect(types(content)).toEqual(['thinking', 'text', 'thinking', 'tool_use']);
    for (const k of [0, 2]) {
      expect(content[k].thinking, `block ${k}: display "omitted" by default`).toBe('');
      expect(content[k].signature, `block ${k}: signed`).toMatch(/.{20}/);
    }
    expect(content[0].signature, 'each block its own signature').not.toBe(content[2].signature);
    expect(content[1]).toEqual({ type: 'text', text: 'Let me look.' });
    expect(content[3]).toMatchObject({ type: 'tool_use', name: 'bash', input: { command: 'ls' } });
  });

  it('display "summarized": the same blocks carry text', async () => {
    const { fake, client } = await start(script());
    const body = params({ messages: [user('list files')], thinking: SUMMARIZED });
    const content = (await accepted(client, fake, body, 'summarized')).content as Block[];
    expect(types(content)).toEqual(['thinking', 'text', 'thinking', 'tool_use']);
    for (const k of [0, 2]) {
      expect(content[k].thinking, `block ${k}: a summary`).not.toBe('');
      expect(content[k].signature, `block ${k}: signed`).toMatch(/.{20}/);
    }
  });

  it('streamed, summarized: `thinking` events carry the text, a `signature` event per block', async () => {
    const { fake, client } = await start({
      replies: [reply(text('Let me look.'), toolUse('bash', { command: 'ls' })), reply(text('Two files.'))],
    });
    const messages: Msg[] = [user('list files')];
    const stream = client.messages.stream(params({ messages, thinking: SUMMARIZED }));
    const deltas: string[] = [];
    const snapshots: string[] = [];
    const signatures: string[] = [];
    stream.on('thinking', (delta, snapshot) => (deltas.push(delta), snapshots.push(snapshot)));
    stream.on('signature', (s) => signatures.push(s));
    const final = await stream.finalMessage();
    const blocks = (final.content as Block[]).filter((b) => b.type === 'thinking');
    expect(types(final.content), 'finalMessage() holds the thinking blocks in place').toEqual([
      'thinking',
      'text',
      'thinking',
      'tool_use',
    ]);
    expect(blocks.every((b) => b.thinking !== ''), 'summarized: both have text').toBe(true);
    expect(deltas.join(''), 'the deltas add up to the text of the blocks').toBe(blocks.map((b) => b.thinking).join(''));
    expect(snapshots, 'the snapshot reaches the text of block 1').toContain(blocks[0].thinking);
    expect(snapshots.at(-1)).toBe(blocks[1].thinking);
    expect(signatures, 'one signature event per block, as finalMessage() has them').toEqual(
      blocks.map((b) => b.signature),
    );
    expect(signatures.every((s) => s.length > 20)).toBe(true);
    // The streamed reply goes back as it is.
    messages.push(assistant(final.content), user([tr(callId(final.content), 'a.ts\nb.ts')]));
    const second = await client.messages.stream(params({ messages, thinking: SUMMARIZED })).finalMessage();
    expect(fake.requests[1].refused, 'finalMessage().content sent back is accepted').toBeUndefined();
    expect(types(second.content)).toEqual(['thinking', 'text']);
  });

  it('streamed under the default display: no `thinking` event, still a `signature` per block', async () => {
    const { client } = await start(script());
    const stream = client.messages.stream(params({ messages: [user('list files')] }));
    const deltas: string[] = [];
    const signatures: string[] = [];
    stream.on('thinking', (delta) => deltas.push(delta));
    stream.on('signature', (s) => signatures.push(s));
    const final = await stream.finalMessage();
    expect(deltas, 'omitted: no text streams').toEqual([]);
    const blocks = (final.content as Block[]).filter((b) => b.type === 'thinking');
    expect(blocks.map((b) => b.thinking)).toEqual(['', '']);
    expect(signatures).toEqual(blocks.map((b) => b.signature));
  });

  it('between_tools: no reasoning block, a progress block with text before the call', async () => {
    const { fake, client } = await start({
      replies: [reply(text('Let me look.'), toolUse('bash', { command: 'ls' })), reply(text('Hello.'))],
    });
    const between = { type: 'between_tools' };
    const body = params({ messages: [user('list files')], thinking: between });
    const content = (await accepted(client, fake, body, 'between_tools')).content as Block[];
    expect(types(content)).toEqual(['text', 'thinking', 'tool_use']);
    expect(content[1].thinking, 'the progress note has its text without any display').not.toBe('');
    expect(content[1].signature).toMatch(/.{20}/);
    const noCall = await accepted(client, fake, params({ messages: [user('hi')], thinking: between }), 'no tool call');
    expect(noCall.content, 'no tool call: text only').toEqual([{ type: 'text', text: 'Hello.' }]);
  });

  it.each(['claude-sonnet-4-6', 'claude-fake-model'])('%s, no thinking field: no thinking blocks', async (model) => {
    const { fake, client } = await start(script());
    const msg = await accepted(client, fake, params({ model, messages: [user('list files')] }), model);
    expect(types(msg.content)).toEqual(['text', 'tool_use']);
  });

  it('scripted thinking() and redactedThinking() go where the script puts them, and nothing is added', async () => {
    const call = toolUse('bash', { command: 'ls' });
    const scripted = () => reply(thinking('Plan: list, then read.'), text('Looking.'), redactedThinking(), call);
    const { fake, client } = await start({ respond: scripted });
    const messages = [user('list files')];

    const shown = (await accepted(client, fake, params({ messages, thinking: SUMMARIZED }), 'summarized'))
      .content as Block[];
    expect(types(shown)).toEqual(['thinking', 'text', 'redacted_thinking', 'tool_use']);
    expect(shown[0].thinking, 'summarized: the scripted text').toBe('Plan: list, then read.');
    expect(shown[0].signature).toMatch(/.{20}/);
    expect(shown[2].data, 'the redacted block carries its data (its signature)').toMatch(/.{20}/);
    expect(Object.keys(shown[2]).sort()).toEqual(['data', 'type']);

    const omitted = (await accepted(client, fake, params({ messages }), 'omitted')).content as Block[];
    expect(types(omitted)).toEqual(['thinking', 'text', 'redacted_thinking', 'tool_use']);
    expect(omitted[0].thinking, 'omitted: the text is not shown').toBe('');

    const plain = await accepted(client, fake, params({ model: 'claude-fake-model', messages }), 'no thinking');
    expect(types(plain.content), 'a model that does not think: scripted thinking left out').toEqual([
      'text',
      'tool_use',
    ]);
  });
});

// ── 2. Settings the 5.5 models refuse ───────────────────────────────────────────────────────────

describe('refused settings', () => {
  const cases: { rule: string; extra: Record<string, unknown>; message: string }[] = [
    { rule: 'disabled on Sonnet 5.5', extra: { thinking: { type: 'disabled' } }, message: SONNET_DISABLED },
    {
      rule: 'disabled on Opus 5.5',
      extra: { model: OPUS, thinking: { type: 'disabled' } },
      message: NOT_SUPPORTED('disabled'),
    },
    {
      rule: 'enabled with budget_tokens on Opus 5.5',
      extra: { model: OPUS, thinking: { type: 'enabled', budget_tokens: 1024 } },
      message: NOT_SUPPORTED('enabled'),
    },
    { rule: 'tool_choice any on Sonnet 5.5', extra: { tool_choice: { type: 'any' } }, message: FORCED },
    {
      rule: 'tool_choice tool on Sonnet 5.5',
      extra: { tool_choice: { type: 'tool', name: 'bash' } },
      message: FORCED,
    },
    {
      rule: 'an unknown display value',
      extra: { thinking: { type: 'adaptive', display: 'verbose' } },
      message: "thinking.adaptive.display: Input should be 'summarized' or 'omitted'",
    },
  ];

  it.each(cases)('refuses $rule', async ({ rule, extra, message }) => {
    const { fake, client } = await start(toolLoop());
    await refused(fake, client.messages.create(params({ messages: [user('hi')], ...extra })), message, rule);
    expect(fake.requests, 'one request, not retried').toHaveLength(1);
  });

  it('forced tool_choice is accepted on Haiku 5.5; the accepted forms on Sonnet 5.5 too', async () => {
    const { fake, client } = await start(toolLoop());
    for (const choice of [{ type: 'any' }, { type: 'tool', name: 'bash' }]) {
      const body = params({ model: HAIKU, messages: [user('hi')], tool_choice: choice });
      const msg = await accepted(client, fake, body, `Haiku 5.5, ${choice.type}`);
      expect(types(msg.content), 'a forced call: the reply starts with it, no thinking').not.toContain('thinking');
    }
    for (const choice of [{ type: 'auto' }, { type: 'none' }]) {
      const body = params({ messages: [user('hi')], tool_choice: choice });
      await accepted(client, fake, body, `Sonnet 5.5, ${choice.type}`);
    }
  });
});

// ── 3. Sending blocks back ──────────────────────────────────────────────────────────────────────

describe('sending thinking blocks back: accepted', () => {
  it('each reply sent back exactly as received, round after round', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    expect(messages[3].content.filter(isThinking), 'round 2 has its own blocks').toHaveLength(2);
    await accepted(client, fake, params({ messages }), 'round 3');
    expect(fake.requests.map((r) => r.refused ?? null)).toEqual([null, null, null]);
  });

  it('all thinking blocks dropped', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = (await rounds(client, 2)).map((m) => (m.role === 'assistant' ? stripped(m) : m));
    await accepted(client, fake, params({ messages }), 'no thinking at all');
  });

  it('the oldest dropped: round 1 blocks gone, round 2 blocks kept', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    messages[1] = stripped(messages[1]);
    await accepted(client, fake, params({ messages }), 'oldest dropped');
  });

  it('the newest dropped: round 1 blocks kept, all blocks of the latest assistant message gone', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    messages[3] = stripped(messages[3]);
    await accepted(client, fake, params({ messages }), 'newest dropped');
  });

  it('a cache_control marker added to an earlier block (markers are not part of the binding)', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    messages[2].content[0] = { ...messages[2].content[0], cache_control: { type: 'ephemeral' } };
    messages[0] = user([{ type: 'text', text: 'list files', cache_control: { type: 'ephemeral' } }]);
    await accepted(client, fake, params({ messages }), 'markers before the blocks of both rounds');
  });

  it('a redacted_thinking block goes back like a thinking block; the latest message cannot lose it', async () => {
    const { fake, client } = await start({
      respond: () => reply(thinking('Reading.'), text('Checking.'), redactedThinking(), toolUse('bash', {})),
    });
    const messages = await rounds(client, 1);
    await accepted(client, fake, params({ messages }), 'redacted block sent back');
    const filtered = structuredClone(messages);
    filtered[1].content = filtered[1].content.filter((b: Block) => b.type !== 'redacted_thinking');
    // What `filter(b => b.type === 'thinking')` does: the thinking block kept, the redacted one lost.
    expect(types(filtered[1].content)).toEqual(['thinking', 'text', 'tool_use']);
    const sent = client.messages.create(params({ messages: filtered }));
    await refused(fake, sent, MODIFIED('messages.1.content.0'), 'redacted block filtered out');
  });

  it('blocks made by another model are dropped without a word, however they were cut', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 1, { model: OPUS });
    await accepted(client, fake, params({ messages }), 'Opus 5.5 blocks sent to Sonnet 5.5');
    // Only one of the latest message's two blocks: refused on Opus 5.5, ignored on Sonnet 5.5.
    const cut = structuredClone(messages);
    cut[1].content.splice(2, 1);
    await accepted(client, fake, params({ messages: cut }), 'a cut Opus block on Sonnet 5.5');
    const onOpus = client.messages.create(params({ model: OPUS, messages: cut }));
    await refused(fake, onOpus, MODIFIED('messages.1.content.0'), 'the same cut block on Opus 5.5');
  });
});

describe('sending thinking blocks back: refused', () => {
  const changes: { what: string; change: (body: any) => void }[] = [
    { what: 'the first user message changed', change: (b) => (b.messages[0] = user('list all files')) },
    { what: 'the system prompt changed', change: (b) => (b.system = `${SYSTEM} Today is Monday.`) },
    { what: 'the tools changed', change: (b) => (b.tools = [{ ...BASH_TOOL, description: 'Run a command' }]) },
  ];

  it.each(changes)('$what: bound to a different conversation', async ({ change }) => {
    const { fake, client } = await start(toolLoop());
    const body = params({ messages: await rounds(client, 1) });
    await accepted(client, fake, body, 'unchanged');
    change(body);
    await refused(fake, client.messages.create(body), BOUND('messages.1.content.0'), 'changed');
  });

  it('the message names the first kept block (round 1 blocks dropped, round 2 blocks kept)', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    messages[1] = stripped(messages[1]);
    messages[0] = user('list all files');
    await refused(fake, client.messages.create(params({ messages })), BOUND('messages.3.content.0'), 'first prompt');
  });

  it('an earlier tool_result cleared (micro-compaction) breaks the blocks made after it', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    messages[2] = user([tr(messages[2].content[0].tool_use_id, '[Old tool result content cleared]')]);
    await refused(fake, client.messages.create(params({ messages })), BOUND('messages.3.content.0'), 'compacted');
    const none = messages.map((m) => (m.role === 'assistant' ? stripped(m) : m));
    await accepted(client, fake, params({ messages: none }), 'the same compaction with all thinking dropped');
  });

  it('a gap: rounds 1 and 3 kept, round 2 dropped', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 3);
    const gap = messages.map((m, i) => (i === 3 ? stripped(m) : m));
    await refused(fake, client.messages.create(params({ messages: gap })), BOUND('messages.5.content.0'), 'gap');
    const oldestTwo = messages.map((m, i) => (i === 1 || i === 3 ? stripped(m) : m));
    await accepted(client, fake, params({ messages: oldestTwo }), 'rounds 1 and 2 dropped: no gap');
  });

  it('a block dropped and put back breaks the ones made while it was gone', async () => {
    const { fake, client } = await start(toolLoop());
    const [prompt, round1, result1] = await rounds(client, 1);
    const without = [prompt, stripped(round1), result1];
    const r2 = await accepted(client, fake, params({ messages: without }), 'round 2 made without the round 1 blocks');
    const tail = [assistant(r2.content), user([tr(callId(r2.content), 'output 2')])];
    await accepted(client, fake, params({ messages: [...without, ...tail] }), 'still without them');
    const back = [prompt, round1, result1, ...tail];
    await refused(fake, client.messages.create(params({ messages: back })), BOUND('messages.3.content.0'), 'put back');
  });

  it.each([
    { how: 'changed by one character', sign: (s: string) => oneCharOff(s, s.indexOf('.') + 3) },
    { how: 'emptied', sign: () => '' },
    { how: 'made up', sign: () => 'EosnCkYIBRgCKkD' },
  ])('a signature $how: Invalid `signature`, nothing after it', async ({ sign }) => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    await accepted(client, fake, params({ messages }), 'untouched');
    // A block of an earlier message, then one of the latest.
    for (const [i, j] of [[1, 2], [3, 0]]) {
      const bad = structuredClone(messages);
      bad[i].content[j].signature = sign(bad[i].content[j].signature);
      const where = `messages.${i}.content.${j}`;
      await refused(fake, client.messages.create(params({ messages: bad })), INVALID(where), where);
    }
  });

  it('the latest assistant message with only one of its two thinking blocks', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 1);
    const first = structuredClone(messages);
    first[1].content.splice(2, 1); // the progress note gone, the reasoning kept
    await refused(fake, client.messages.create(params({ messages: first })), MODIFIED('messages.1.content.0'), '1st');
    const second = structuredClone(messages);
    second[1].content.splice(0, 1); // the reasoning gone, the progress note kept
    await refused(fake, client.messages.create(params({ messages: second })), MODIFIED('messages.1.content.1'), '2nd');
  });

  it('a block text edited: "cannot be modified" in the latest message, a bad signature before it', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2, { thinking: SUMMARIZED });
    await accepted(client, fake, params({ messages, thinking: SUMMARIZED }), 'untouched');
    const edit = (i: number, j: number) => {
      const edited = structuredClone(messages);
      expect(edited[i].content[j].thinking, 'summarized: there is text to edit').not.toBe('');
      edited[i].content[j].thinking += ' (edited)';
      return client.messages.create(params({ messages: edited, thinking: SUMMARIZED }));
    };
    await refused(fake, edit(3, 2), MODIFIED('messages.3.content.2'), 'latest message');
    await refused(fake, edit(1, 0), INVALID('messages.1.content.0'), 'earlier message');
  });

  it('text put into an empty (omitted) block on the way back is ignored, not refused', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 2);
    for (const [i, j] of [[1, 0], [3, 0]]) {
      expect(messages[i].content[j].thinking, 'omitted: empty').toBe('');
      messages[i].content[j].thinking = 'my own words';
    }
    await accepted(client, fake, params({ messages }), 'text in omitted blocks, earlier and latest');
  });

  it('count_tokens refuses the same way as /v1/messages', async () => {
    const { fake, client } = await start(toolLoop());
    const messages = await rounds(client, 1);
    const count = (system: string) =>
      client.messages.countTokens({ model: SONNET, system, tools: [BASH_TOOL], messages } as any);
    expect((await count(SYSTEM)).input_tokens, 'unchanged: counted').toBeGreaterThan(0);
    await refused(fake, count('Another prompt.'), BOUND('messages.1.content.0'), 'count_tokens');
    expect(fake.requests.at(-1)!.path).toBe('/v1/messages/count_tokens');
  });
});

// ── 4. Stream faults ────────────────────────────────────────────────────────────────────────────

describe('stream faults with thinking', () => {
  it('errorAfterBlocks counts the blocks of the script, not the added thinking block', async () => {
    const { client } = await start({ replies: [{ ...reply(text('first'), text('second')), errorAfterBlocks: 1 }] });
    const stream = client.messages.stream(params({ messages: [user('hi')] }));
    const blocks: Block[] = [];
    stream.on('contentBlock', (b) => blocks.push(b));
    let err: any;
    await stream.finalMessage().catch((e) => (err = e));
    expect(err, 'the error event ends the stream').toBeInstanceOf(Anthropic.APIError);
    expect(String(err.message)).toContain('Overloaded');
    expect(types(blocks), 'the added thinking block, then the first scripted block').toEqual(['thinking', 'text']);
    expect(blocks[1]).toEqual({ type: 'text', text: 'first' });
    expect(blocks[0].signature, 'the thinking block arrived whole').toMatch(/.{20}/);
  });
});
