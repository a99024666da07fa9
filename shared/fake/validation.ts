/**
 * What the fake refuses, as the real API does (section 3 of the API notes): the credential,
 * headers and fields, tools, every message and block (tool_use / tool_result pairing, prefill,
 * empty text, half a character), then validate(), which runs every check a request goes through:
 * these, thinking's (thinking.ts), cache_control's (caching.ts) and the context window.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { checkCacheControl, promptOf } from './caching.ts';
import { bad, blocksOf, isObject, Refusal } from './refusal.ts';
import type { FakeOptions } from './script.ts';
import { checkThinkingBlocks, thinkingMode, type Bound } from './thinking.ts';
import { estimateTokens } from './tokens.ts';

/** Top-level fields the Messages API accepts (SDK 1.11 MessageCreateParams, after it strips its own). */
const MESSAGE_FIELDS = new Set([
  'model', 'max_tokens', 'messages', 'system', 'tools', 'tool_choice', 'stop_sequences', 'stream', 'metadata',
  'thinking', 'cache_control', 'service_tier', 'container', 'diagnostics', 'inference_geo', 'output_config', 'speed',
]);
const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'cache_control', 'output_config']);

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
/** Content block types a request may carry; anything else is refused as an unknown union tag. */
const BLOCK_TYPES = [
  'document', 'image', 'redacted_thinking', 'search_result', 'server_tool_use', 'text', 'thinking', 'tool_result',
  'tool_use', 'web_fetch_tool_result', 'web_search_tool_result',
];
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * The real API's JSON parser refuses a string with half a character in it: a UTF-16 surrogate
 * without its partner, which JSON.stringify writes as an escape such as "\ud83d" (a string cut in
 * the middle of an emoji). The messages and their position (`line 1 column N (char N-1)`) are those
 * users of the real API have reported: "no low surrogate in string" for a high surrogate left
 * alone; for a low surrogate with no high one before it, "invalid high surrogate in string".
 */
export function surrogateError(json: string): string | undefined {
  const hex = (at: number) => (json[at] === '\\' && json[at + 1] === 'u' ? parseInt(json.slice(at + 2, at + 6), 16) : NaN);
  const where = (at: number) => `line 1 column ${at + 1} (char ${at})`;
  for (let i = 0; i < json.length; i++) {
    if (json[i] !== '\\') continue;
    const unit = hex(i);
    if (Number.isNaN(unit)) {
      i++; // an escape such as \\ or \n: the character after the backslash is not one to look at
      continue;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return `invalid high surrogate in string: ${where(i)}`;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = hex(i + 6);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return `no low surrogate in string: ${where(i + 6)}`;
      i += 6; // the pair is whole: past its low half too
    }
    i += 5;
  }
  return undefined;
}

/** The credential, checked first (before the body is even read): a 401 as the real API sends it. */
export function checkCredential(headers: Record<string, string>, opts: FakeOptions): void {
  const bearer = headers['authorization']?.match(/^Bearer\s+(.+)$/i)?.[1];
  const key = headers['x-api-key'] || bearer;
  if (!key) throw new Refusal(401, 'x-api-key header is required');
  if (opts.apiKey !== undefined && !sameKey(bearer, opts.apiKey) && !sameKey(headers['x-api-key'], opts.apiKey)) {
    throw new Refusal(401, 'invalid x-api-key');
  }
}

/** Compared in constant time: the offline model's port is open to every local user. */
function sameKey(given: string | undefined, key: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return given !== undefined && timingSafeEqual(digest(given), digest(key));
}

function checkHeaders(headers: Record<string, string>): void {
  if (!headers['anthropic-version']) throw bad('anthropic-version: header is required');
}

function checkTextBlock(block: any, where: string): void {
  if (typeof block.text !== 'string') throw bad(`${where}.text: Field required`);
  if (block.text === '') throw bad('messages: text content blocks must be non-empty');
  if (!block.text.trim()) throw bad('messages: text content blocks must contain non-whitespace text');
}

function checkSystem(system: unknown): void {
  if (system === undefined || typeof system === 'string') return;
  if (!Array.isArray(system)) throw bad('system: Input should be a valid string');
  system.forEach((b, j) => {
    if (!isObject(b) || b.type !== 'text') throw bad(`system.${j}.type: Input should be 'text'`);
    if (b.text === '') throw bad('system: text content blocks must be non-empty');
  });
}

function checkTools(tools: unknown): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) throw bad('tools: Input should be a valid list');
  tools.forEach((t, i) => {
    if (!isObject(t)) throw bad(`tools.${i}: Input should be a valid dictionary`);
    if (t.type !== undefined && t.type !== 'custom') return; // server tools (web_search …) have their own shapes
    if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) {
      throw bad(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    }
    if (!isObject(t.input_schema)) throw bad(`tools.${i}.custom.input_schema: Field required`);
    // Not quoted in the notes; this is the wording the API's validator uses for a literal mismatch.
    if (t.input_schema.type !== 'object') throw bad(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
  });
}

/**
 * Throws a Refusal (with the API's status and message) if the real API would refuse these messages.
 * Exported for property tests that check many conversations without a server round trip.
 */
export function checkMessages(messages: unknown, opts: FakeOptions = {}): void {
  if (messages === undefined) throw bad('messages: Field required');
  if (!Array.isArray(messages)) throw bad('messages: Input should be a valid list');
  if (messages.length === 0) throw bad('messages: at least one message is required');

  // Shape of each message and block.
  const toolUseIds = new Set<string>();
  messages.forEach((m, i) => {
    if (!isObject(m)) throw bad(`messages.${i}: Input should be a valid dictionary`);
    if (m.role !== 'user' && m.role !== 'assistant') throw bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      throw bad(`messages.${i}.content: Input should be a valid list`);
    }
    const isFinalAssistant = i === messages.length - 1 && m.role === 'assistant';
    if ((m.content.length === 0) && !isFinalAssistant) {
      throw bad(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    }
    blocksOf(m.content).forEach((b, j) => {
      const where = `messages.${i}.content.${j}`;
      if (!isObject(b) || typeof b.type !== 'string') throw bad(`${where}: Input should be a valid dictionary`);
      if (!BLOCK_TYPES.includes(b.type)) {
        const tags = BLOCK_TYPES.map((t) => `'${t}'`).join(', ');
        throw bad(`${where}: Input tag '${b.type}' found using 'type' does not match any of the expected tags: ${tags}`);
      }
      if (b.type === 'text') checkTextBlock(b, where);
      if (b.type === 'tool_use') {
        if (m.role !== 'assistant') throw bad(`${where}: tool_use blocks can only appear in assistant messages`);
        if (typeof b.id !== 'string' || typeof b.name !== 'string') throw bad(`${where}.tool_use: id and name are required`);
        if (!isObject(b.input)) throw bad(`${where}.tool_use.input: Input should be a valid dictionary`);
        // The API's message; whether it compares ids across messages or within one is unconfirmed: this
        // checks the whole conversation, the stricter reading (a resumed session must not repeat ids).
        if (toolUseIds.has(b.id)) throw bad(`${where}: \`tool_use\` ids must be unique`);
        toolUseIds.add(b.id);
      }
      if (b.type === 'tool_result') {
        if (m.role !== 'user') throw bad(`${where}: tool_result blocks can only appear in user messages`);
        if (typeof b.tool_use_id !== 'string') throw bad(`${where}.tool_result.tool_use_id: Field required`);
        if (Array.isArray(b.content)) {
          b.content.forEach((c: any, k: number) => c?.type === 'text' && checkTextBlock(c, `${where}.content.${k}`));
        }
      }
    });
  });

  // Consecutive messages of one role are merged into one turn before the pairing rules apply.
  type Turn = { role: string; blocks: { block: any; i: number; j: number }[] };
  const turns: Turn[] = [];
  messages.forEach((m, i) => {
    const blocks = blocksOf(m.content).map((block, j) => ({ block, i, j }));
    const last = turns.at(-1);
    if (last && last.role === m.role) last.blocks.push(...blocks);
    else turns.push({ role: m.role, blocks });
  });

  turns.forEach((turn, t) => {
    const prev = turns[t - 1];
    const next = turns[t + 1];
    if (turn.role === 'assistant') {
      // Every tool_use must be answered by a tool_result in the very next turn.
      const uses = turn.blocks.filter((x) => x.block.type === 'tool_use');
      if (uses.length === 0) return;
      const answered = new Set(
        (next?.role === 'user' ? next.blocks : []).filter((x) => x.block.type === 'tool_result').map((x) => x.block.tool_use_id),
      );
      const missing = uses.filter((x) => !answered.has(x.block.id));
      if (missing.length > 0) {
        throw bad(
          `messages.${missing[0].i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
            `${missing.map((x) => x.block.id).join(', ')}. Each \`tool_use\` block must have a corresponding ` +
            '`tool_result` block in the next message.',
        );
      }
      // …and the answers open that turn, before any other block.
      const leading = next.blocks.findIndex((x) => x.block.type !== 'tool_result');
      const leadingResults = leading === -1 ? next.blocks.length : leading;
      if (leadingResults < uses.length) {
        throw bad(
          `messages.${next.blocks[0].i}: Did not find ${uses.length} \`tool_result\` block(s) at the beginning of this ` +
            'message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
        );
      }
    } else {
      // Every tool_result must answer a tool_use of the turn just before.
      const offered = new Set(
        (prev?.role === 'assistant' ? prev.blocks : []).filter((x) => x.block.type === 'tool_use').map((x) => x.block.id),
      );
      for (const x of turn.blocks) {
        if (x.block.type === 'tool_result' && !offered.has(x.block.tool_use_id)) {
          throw bad(
            `messages.${x.i}.content.${x.j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ` +
              `${x.block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
      }
    }
  });

  const last = messages.at(-1);
  if (last.role === 'assistant') {
    if (!opts.allowPrefill) {
      throw bad('This model does not support assistant message prefill. The conversation must end with a user message.');
    }
    const tail = blocksOf(last.content).at(-1);
    if (tail?.type === 'text' && /\s$/.test(tail.text)) {
      throw bad('messages: final assistant content cannot end with trailing whitespace');
    }
  }
}

/** Throws a Refusal with the real API's status and message, or returns the token estimate and the prompt's layout. */
export function validate(path: string, headers: Record<string, string>, body: unknown, opts: FakeOptions, bound?: Bound) {
  checkHeaders(headers);
  if (!isObject(body)) throw bad('body: Input should be a valid dictionary');
  const allowed = path === '/v1/messages' ? MESSAGE_FIELDS : COUNT_FIELDS;
  for (const field of Object.keys(body)) {
    if (!allowed.has(field)) throw bad(`${field}: Extra inputs are not permitted`);
  }
  if (typeof body.model !== 'string' || !body.model) throw bad('model: Field required');
  if (path === '/v1/messages') {
    const limit = opts.maxOutputTokens ?? 64_000;
    if (body.max_tokens === undefined) throw bad('max_tokens: Field required');
    if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
      throw bad('max_tokens: Input should be greater than or equal to 1');
    }
    if (body.max_tokens > limit) {
      throw bad(`max_tokens: ${body.max_tokens} > ${limit}, which is the maximum allowed number of output tokens for ${body.model}`);
    }
  }
  checkSystem(body.system);
  checkTools(body.tools);
  checkMessages(body.messages, opts);
  const mode = thinkingMode(body);
  checkThinkingBlocks(body, bound);
  const prompt = promptOf(body);
  const breakpoints = checkCacheControl(prompt);
  const tokens = estimateTokens(body);
  const window = opts.contextWindow ?? 200_000;
  if (tokens > window) throw bad(`prompt is too long: ${tokens} tokens > ${window} maximum`);
  return { tokens, prompt, breakpoints, mode };
}
