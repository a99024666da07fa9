/**
 * Prompt caching in the fake (shared/fake/caching.ts): what a request reads from the cache and
 * writes to it, its TTLs, and the usage that reports it.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  estimateTokens,
  httpError,
  reply,
  startFakeAnthropic,
  text,
  type FakeOptions,
} from '../../shared/fake-anthropic.ts';
import {
  alwaysOk,
  API_KEY,
  assistant,
  BASH_TOOL,
  body,
  closeFake,
  marked,
  parseSse,
  rejection,
  start,
  tb,
  tr,
  tu,
  user,
  type Msg,
} from './harness.ts';

afterEach(closeFake);

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
