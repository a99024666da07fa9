/**
 * Thinking, as the current models do it (section 7 of the API notes): which requests get a reply
 * that thinks, where its blocks go, their signatures, and what the API says of the blocks a
 * request sends back.
 */
import { createHash, createHmac } from 'node:crypto';
import { head } from '../text.ts';
import { canonical } from './caching.ts';
import { bad, blocksOf, isObject } from './refusal.ts';
import type { ReplyBlock } from './script.ts';
import { withoutMarker } from './tokens.ts';

// What a terminal acts on: C0 but tab and newline, DEL, and C1 (U+009B alone starts a sequence).
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text with its control characters shown as escapes: `ESC]0;title BEL` → `\x1b]0;title\x07`.
 * The model echoes file contents, file names, test output and your prompt, and a terminal would
 * act on the escapes in them: retitle the window, clear the screen, write the clipboard. A line
 * ending \r\n is a plain \n; a lone \r (which writes over the line) is shown.
 */
export const showControls = (text: string): string =>
  text.replace(/\r\n/g, '\n').replace(CONTROL, (c) => {
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });

// The 5.x models think when the request has no `thinking` field (adaptive thinking), and a reply
// carries `thinking` blocks: one first (its reasoning), one just before a tool call (a progress
// note). Their text is "" under the default `display: "omitted"`, a summary under "summarized";
// `between_tools` (Sonnet 5.5) has no reasoning block, and progress notes with text. Each block
// has a `signature`, and the API checks every block a request sends back:
//   - it is bound to what preceded it when it was made: `system`, `tools`, every earlier message and
//     the blocks before it in its own message (values, not formatting; cache markers and thinking
//     blocks themselves aside). Anything changed there: 400 "…bound to a different conversation…";
//   - the blocks kept must be an unbroken run of those made: dropping the oldest, the newest or all
//     is fine, a gap is not, and a block dropped and put back breaks the ones made while it was gone;
//   - in the latest assistant message they come back all, exactly as sent, or not at all;
//   - a signature changed, emptied or made up: 400 "Invalid `signature` in `thinking` block";
//   - a block made by another model is dropped without a word (here every other model's; the API
//     lets some models read some others' blocks, see §7.2).
// Here a signature is the block's record (its id, the one made before it, the prefix's digest, its
// text's digest, its message and place) with an HMAC: the same key for every fake server, as an
// account's blocks stay valid from one API call to the next.

const SIGNING_KEY = 'fake-anthropic: one account';

interface Signed {
  id: string;
  /** The block made just before it in this conversation, or null. */
  prev: string | null;
  model: string;
  /** Digest of what preceded it, and of its text. */
  prefix: string;
  text: string;
  /** Whether its text was sent (display "summarized"): text put into an empty one is ignored. */
  shown: boolean;
  /** The message it came in, its place among that message's thinking blocks, and their number. */
  msg: string;
  k: number;
  of: number;
}

export const isThinking = (b: any) => isObject(b) && (b.type === 'thinking' || b.type === 'redacted_thinking');
const digest = (v: unknown) => createHash('sha256').update(canonical(v)).digest('base64url').slice(0, 22);

function sign(record: Signed): string {
  const payload = Buffer.from(JSON.stringify(record)).toString('base64url');
  return `${payload}.${createHmac('sha256', SIGNING_KEY).update(payload).digest('base64url')}`;
}

/**
 * A recorded stream's thinking blocks come with signatures the fake did not make. Each server keeps them
 * here, signature (or data) → the record signThinking would have made for that request and place.
 */
export type Bound = Map<string, Signed>;

/** The record a signature carries, if the fake made it (or bound it); undefined for anything else. */
function readSignature(signature: unknown, bound?: Bound): Signed | undefined {
  if (typeof signature !== 'string') return undefined;
  const known = bound?.get(signature);
  if (known) return known;
  const [payload, mac, extra] = signature.split('.');
  if (!payload || !mac || extra !== undefined) return undefined;
  if (createHmac('sha256', SIGNING_KEY).update(payload).digest('base64url') !== mac) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * What each block of one request (or of the reply to it) is bound to, asked in the order they come
 * (`i`: how many of the request's messages come before the block). Each is the digest of
 * canonical({ system, tools, messages: [...those messages, { role, content: before.blocks }] }),
 * thinking blocks and cache markers left out; the messages are hashed once for every block after
 * them, not once for each (a turn of thirty tool rounds sends sixty blocks back: hashing each
 * one's prefix anew was most of the fake's time on it).
 */
function prefixDigests(body: any) {
  const plain = (blocks: any[]) => blocks.filter((b) => !isThinking(b)).map(withoutMarker);
  const system = Array.isArray(body.system) ? body.system.map(withoutMarker) : (body.system ?? null);
  const tools = Array.isArray(body.tools) ? body.tools.map(withoutMarker) : null;
  // canonical() of that object, in pieces: its keys sorted are messages, system, tools.
  const end = `],"system":${canonical(system)},"tools":${canonical(tools)}}`;
  const messages = body.messages as any[];
  const hash = createHash('sha256').update('{"messages":[');
  let hashed = 0; // how many messages `hash` holds
  return (i: number, before: { role: string; blocks: any[] }): string => {
    if (i < hashed) throw new Error('prefixDigests: blocks must be asked for in order');
    for (; hashed < i; hashed++) {
      hash.update(`${canonical({ role: messages[hashed].role, content: plain(blocksOf(messages[hashed].content)) })},`);
    }
    const last = canonical({ role: before.role, content: plain(before.blocks) });
    return hash.copy().update(`${last}${end}`).digest('base64url').slice(0, 22);
  };
}

const boundElsewhere = (where: string) =>
  `${where}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. ` +
  'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". That setting ' +
  'requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header.';

/** Whether (and how) the reply to this request thinks; refuses the settings the model refuses. */
export function thinkingMode(body: any): { display: 'omitted' | 'summarized'; upFront: boolean } | undefined {
  const model: string = body.model;
  const is = (name: string) => model === name || model.startsWith(`${name}-2`); // or a dated snapshot
  const fiveFive = is('claude-sonnet-5-5') || is('claude-opus-5-5') || is('claude-haiku-5-5');
  const forced = isObject(body.tool_choice) && (body.tool_choice.type === 'any' || body.tool_choice.type === 'tool');
  if (forced && (is('claude-sonnet-5-5') || is('claude-opus-5-5'))) {
    throw bad('tool_choice: type "tool" and "any" are not supported for this model.');
  }
  // Haiku 5.5 takes a forced tool call, and its reply then starts with it: no thinking (§7.6).
  if (forced && is('claude-haiku-5-5')) return undefined;
  const t = body.thinking;
  if (t === undefined || t === null) {
    return fiveFive || is('claude-sonnet-5') ? { display: 'omitted', upFront: true } : undefined;
  }
  if (!isObject(t)) throw bad('thinking: Input should be a valid dictionary');
  const display = t.display ?? 'omitted';
  if (display !== 'omitted' && display !== 'summarized') {
    throw bad(`thinking.${t.type}.display: Input should be 'summarized' or 'omitted'`);
  }
  const notSupported = (type: string) =>
    `"thinking.type.${type}" is not supported for this model. Use "thinking.type.adaptive" and ` +
    '"output_config.effort" to control thinking behavior.';
  switch (t.type) {
    case 'adaptive':
      return { display, upFront: true };
    case 'enabled':
      if (fiveFive) throw bad(notSupported('enabled'));
      return { display: t.display ?? 'summarized', upFront: true };
    case 'disabled':
      if (is('claude-sonnet-5-5')) {
        throw bad(
          'To turn thinking off on this model, send "thinking": {"type": "between_tools"} instead of {"type": ' +
            '"disabled"}. The model does not think before responding. The short updates it writes between tool ' +
            'calls come back as thinking blocks.',
        );
      }
      if (is('claude-opus-5-5')) throw bad(notSupported('disabled'));
      return undefined;
    case 'between_tools': {
      const extra = Object.keys(t).find((k) => k !== 'type');
      if (extra) throw bad(`thinking.between_tools.${extra}: Extra inputs are not permitted`);
      if (!is('claude-sonnet-5-5')) throw bad(notSupported('between_tools'));
      return { display: 'summarized', upFront: false };
    }
    default: {
      const tags = "'adaptive', 'between_tools', 'disabled', 'enabled'";
      throw bad(`thinking: Input tag '${t.type}' found using 'type' does not match any of the expected tags: ${tags}`);
    }
  }
}

/** Throws what the API says of the thinking blocks a request sends back (see above). */
export function checkThinkingBlocks(body: any, bound?: Bound): void {
  const messages = body.messages as any[];
  const latest = messages.findLastIndex((m) => m.role === 'assistant');
  const found: { i: number; j: number; record: Signed; edited: boolean }[] = [];
  messages.forEach((m, i) =>
    blocksOf(m.content).forEach((b, j) => {
      if (!isThinking(b)) return;
      const where = `messages.${i}.content.${j}`;
      const field = b.type === 'thinking' ? 'signature' : 'data';
      if (b.type === 'thinking' && typeof b.thinking !== 'string') throw bad(`${where}.thinking.thinking: Field required`);
      if (typeof b[field] !== 'string') throw bad(`${where}.${b.type}.${field}: Field required`);
      const record = readSignature(b[field], bound);
      if (!record) throw bad(`${where}: Invalid \`signature\` in \`thinking\` block`);
      if (record.model !== body.model) return; // another model's: dropped, not refused
      const edited = record.shown && digest(b.type === 'thinking' ? b.thinking : '') !== record.text;
      if (edited && i !== latest) throw bad(`${where}: Invalid \`signature\` in \`thinking\` block`);
      found.push({ i, j, record, edited });
    }),
  );
  // The latest assistant message: its thinking blocks all, in order, unchanged; or none of them.
  const inLatest = found.filter((f) => f.i === latest);
  const first = inLatest[0]?.record;
  const broken = inLatest.find((f, k) => f.edited || f.record.msg !== first.msg || f.record.k !== k);
  if (broken || (first && inLatest.length !== first.of)) {
    const at = broken ?? inLatest[0];
    throw bad(
      `messages.${at.i}.content.${at.j}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant ` +
        'message cannot be modified. These blocks must remain as they were in the original response.',
    );
  }
  // Each block: what preceded it is unchanged, and it follows the block made just before it.
  const prefixOf = prefixDigests(body);
  found.forEach(({ i, j, record }, n) => {
    const before = { role: messages[i].role, blocks: blocksOf(messages[i].content).slice(0, j) };
    const gap = n > 0 && record.prev !== found[n - 1].record.id;
    if (gap || prefixOf(i, before) !== record.prefix) {
      throw bad(boundElsewhere(`messages.${i}.content.${j}`));
    }
  });
}

/** The last block of this model's in the request: the one a new block follows. */
function lastBlockId(body: any, bound?: Bound): string | null {
  let id: string | null = null;
  for (const m of body.messages as any[]) {
    for (const b of blocksOf(m.content)) {
      const record = isThinking(b) ? readSignature(b.type === 'thinking' ? b.signature : b.data, bound) : undefined;
      if (record && record.model === body.model) id = record.id;
    }
  }
  return id;
}

/**
 * The script's reply with thinking blocks where the API puts them, unless it places its own; none
 * for a model that does not think.
 */
export function placeThinking(content: ReplyBlock[], body: any, mode: ReturnType<typeof thinkingMode>): ReplyBlock[] {
  const own = content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  if (!mode) return content.filter((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking');
  if (own) return content;
  const prompt = [...(body.messages as any[])].reverse().find((m) => m.role === 'user');
  const asked = blocksOf(prompt?.content ?? '').find((b) => b.type === 'text')?.text ?? '';
  // The chapters print it, and send it back: control characters as escapes (`\x1b`), as the offline
  // model shows them, and cut between characters (half an emoji is no valid JSON to the API).
  const short = showControls(asked.length > 60 ? `${head(asked, 60)}…` : asked);
  const blocks = [...content];
  const firstCall = content.findIndex((b) => b.type === 'tool_use');
  if (firstCall >= 0) {
    const call = content[firstCall] as { name: string };
    blocks.splice(firstCall, 0, { type: 'thinking', thinking: `Next: the ${call.name} tool.` });
  }
  if (mode.upFront) {
    const reasoning = short ? `Working out how to answer: "${short}"` : 'Looking at the results so far.';
    blocks.unshift({ type: 'thinking', thinking: reasoning });
  }
  return blocks;
}

/** The content with its signatures left out: what the output estimate counts. */
export const unsigned = (content: Record<string, any>[]) =>
  content.map((b) => (b.type === 'thinking' ? { ...b, signature: '' } : b.type === 'redacted_thinking' ? { ...b, data: '' } : b));

/** The record of each thinking block of a reply's final content, in order: what its signature binds. */
function thinkingRecords(content: Record<string, any>[], body: any, msg: string, bound?: Bound) {
  const count = content.filter(isThinking).length;
  let prev = lastBlockId(body, bound);
  const prefixOf = prefixDigests(body); // a reply's blocks come after all the request's messages
  let k = 0;
  return content.flatMap((block, j) => {
    if (!isThinking(block)) return [];
    const before = { role: 'assistant', blocks: content.slice(0, j) };
    const id = `${msg}_${k}`;
    const shown = block.type === 'thinking' && block.thinking !== '';
    const text = digest(shown ? block.thinking : '');
    const prefix = prefixOf(body.messages.length, before);
    const record: Signed = { id, prev, model: body.model, prefix, text, shown, msg, k, of: count };
    prev = id;
    k++;
    return [{ block, record }];
  });
}

/** Sign the thinking blocks of a reply's final content (ids in place), in order. */
export function signThinking(content: Record<string, any>[], body: any, msg: string, bound?: Bound): void {
  for (const { block, record } of thinkingRecords(content, body, msg, bound)) {
    block[block.type === 'thinking' ? 'signature' : 'data'] = sign(record);
  }
}

/**
 * Bind a recorded stream's thinking blocks to this request, as if the fake had signed them: each one's
 * signature (or data), as recorded, now stands for the record signThinking would make. Served again,
 * a stream's blocks are bound to the latest request.
 */
export function bindThinking(sse: string, body: any, msg: string, bound: Bound): void {
  for (const { block, record } of thinkingRecords(recordedContent(sse), body, msg, bound)) {
    const value = block[block.type === 'thinking' ? 'signature' : 'data'];
    if (typeof value === 'string') bound.set(value, record);
  }
}

/** The content blocks a recorded stream ends with: each content_block_start with its deltas applied. */
function recordedContent(sse: string): Record<string, any>[] {
  const blocks: Record<string, any>[] = [];
  const json = new Map<number, string>(); // a tool call's input, as its fragments arrive
  for (const event of sse.split(/\r?\n\r?\n/)) {
    const data = event.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5));
    let e: any;
    try {
      e = JSON.parse(data.join('\n'));
    } catch {
      continue; // no data, or not JSON
    }
    if (e?.type === 'content_block_start') blocks[e.index] = { ...e.content_block };
    const block = blocks[e?.index];
    const d = e?.type === 'content_block_delta' && block ? e.delta : undefined;
    if (d?.type === 'text_delta') block.text += d.text;
    if (d?.type === 'thinking_delta') block.thinking += d.thinking;
    if (d?.type === 'signature_delta') block.signature = d.signature;
    if (d?.type === 'citations_delta') block.citations = [...(block.citations ?? []), d.citation];
    if (d?.type === 'input_json_delta') json.set(e.index, (json.get(e.index) ?? '') + d.partial_json);
  }
  for (const [index, input] of json) {
    try {
      blocks[index].input = JSON.parse(input);
    } catch {
      // Cut off (max_tokens): the input stays as it started.
    }
  }
  return blocks.filter(Boolean);
}
