/**
 * A local, strict stand-in for the Anthropic Messages API.
 *
 * The real API cannot be reached from tests or CI, and public mock servers accept anything that is
 * valid JSON. This one refuses what the real API refuses, with the same HTTP status, error envelope
 * and message text (see ../shared/anthropic-api-notes.md in the steering repo, section 3), so code
 * that would get a 400 in production gets a 400 here too.
 *
 *   const fake = await startFakeAnthropic({ replies: [reply(toolUse('bash', { command: 'ls' })), reply(text('done'))] });
 *   const client = new Anthropic({ apiKey: 'test', baseURL: fake.url });
 *   ...
 *   fake.requests   // every request: headers, body, token estimate, the usage it was served with
 *                   // (prompt caching included), and why it was refused (if it was)
 *   await fake.close();
 *
 * Plumbing only: no chapter's mechanism lives here. The offline demo model (offline-model.ts) is this
 * server with a rule-based `respond` function.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { showControls } from './offline/reply.ts';
import { head } from './text.ts';

// ── What a test scripts ─────────────────────────────────────────────────────────────────────────

export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id?: string; name: string; input: unknown }
  /** Any other block, streamed as it is (a type newer than the client, say): `other({ type: 'x' })`. */
  | { type: 'other'; block: { type: string; [k: string]: unknown } }
  /**
   * A thinking block where the script puts it (its text shows only under `display: "summarized"`).
   * Without any, a reply to a model that thinks gets them where the API puts them (see Thinking).
   */
  | { type: 'thinking'; thinking: string }
  | { type: 'redacted_thinking' };

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

/** A message the fake answers with, plus optional faults for the streamed form. */
export interface MessageReply {
  content: ReplyBlock[];
  /** Defaults to 'tool_use' when the content has a tool_use block, else 'end_turn'. */
  stop_reason?: StopReason;
  /** Overrides for the usage numbers (otherwise estimated). */
  usage?: { input_tokens?: number; output_tokens?: number };
  /**
   * Stream faults: an `event: error` after N complete blocks of the script, or the connection dropped
   * after N (thinking blocks are not counted, the script's or the ones the fake adds).
   */
  errorAfterBlocks?: number;
  dropAfterBlocks?: number;
  /** Milliseconds to wait between SSE events (to watch streaming, or to test Ctrl+C). */
  eventDelayMs?: number;
}

/** An HTTP error instead of a message (429/529/500/401 …). */
export interface ErrorReply {
  error: { status: number; type?: string; message?: string; headers?: Record<string, string> };
}

/**
 * A recorded stream of the real API (tests/real-streams/), served as it is after the request is validated:
 * its bytes as UTF-8, in writes that each end inside a multi-byte character, so that every such
 * character reaches the client in two reads. Only to a request with `stream: true`. Its thinking
 * blocks' signatures are bound to this request (see Thinking).
 */
export interface RecordedReply {
  sse: string;
}

export type Reply = MessageReply | ErrorReply | RecordedReply;

export interface RespondContext {
  /** 0-based index of this request among all /v1/messages requests (refused ones included). */
  index: number;
  /** Every request so far, this one last. */
  requests: RecordedRequest[];
  /**
   * The request's token estimate, all of it. `usage.input_tokens` reports only the part after the last
   * cache breakpoint; this is that plus `cache_read_input_tokens` plus `cache_creation_input_tokens`.
   */
  inputTokens: number;
}

export type Respond = (body: any, ctx: RespondContext) => Reply | Promise<Reply>;

export interface ApiErrorInfo {
  status: number;
  type: string;
  message: string;
}

/** The usage block of a reply, as the real API reports it (the fields this fake models). */
export interface FakeUsage {
  /** Input tokens after the last cache breakpoint (or all of them, without caching). */
  input_tokens: number;
  /** Input tokens written to the cache by this request. */
  cache_creation_input_tokens: number;
  /** Input tokens read from the cache by this request. */
  cache_read_input_tokens: number;
  /** The tokens written, by the TTL of the entry they went into. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: any;
  /** Token estimate of the whole request (tools + system + messages), cached or not. */
  inputTokens: number;
  /** The usage the reply reported (set when a message was served, streamed or not; not for a recorded stream). */
  usage?: FakeUsage;
  /** Set when validation refused the request: what the real API would have said. */
  refused?: ApiErrorInfo;
  /** Set when the scripted reply was an injected HTTP error. */
  injected?: ApiErrorInfo;
}

export interface FakeOptions {
  /** Called for every valid /v1/messages request. */
  respond?: Respond;
  /** Or: a queue of replies, one per valid request. */
  replies?: Reply[];
  /** Input limit in tokens (default 200,000). */
  contextWindow?: number;
  /** Output limit for max_tokens (default 64,000). */
  maxOutputTokens?: number;
  /** If set, only this key is accepted (x-api-key or Bearer). */
  apiKey?: string;
  /** Older models accepted a final assistant message ("prefill"); newer ones refuse it. Default false. */
  allowPrefill?: boolean;
  /** Listen port (default 0: any free port). */
  port?: number;
  /** Let the process exit while the server is idle (the offline model in a CLI wants this). */
  unref?: boolean;
  /**
   * The model's minimum cacheable prompt length: a cache breakpoint whose prefix has fewer tokens is
   * silently not cached. Default 1,024, the documented minimum for Sonnet 4.x and Opus 4/4.1 (others:
   * 512 to 4,096, see anthropic-api-notes.md section 6). Tests with small prompts set it lower.
   */
  minCacheableTokens?: number;
  /** The clock the prompt cache's TTLs run on, in milliseconds (default Date.now): tests move it by hand. */
  now?: () => number;
}

export interface FakeAnthropic {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

// Small builders so tests read like the conversation they script.
export const text = (t: string): ReplyBlock => ({ type: 'text', text: t });
export const toolUse = (name: string, input: unknown, id?: string): ReplyBlock => ({ type: 'tool_use', name, input, id });
export const other = (block: { type: string; [k: string]: unknown }): ReplyBlock => ({ type: 'other', block });
export const thinking = (t: string): ReplyBlock => ({ type: 'thinking', thinking: t });
export const redactedThinking = (): ReplyBlock => ({ type: 'redacted_thinking' });
export const reply = (...content: ReplyBlock[]): MessageReply => ({ content });
export const httpError = (status: number, message?: string, headers?: Record<string, string>): ErrorReply => ({
  error: { status, message, headers },
});
export const recorded = (sse: string): RecordedReply => ({ sse });

// ── Token estimate ──────────────────────────────────────────────────────────────────────────────

/**
 * One deterministic estimate, used for usage numbers, count_tokens and the context window. A
 * `cache_control` marker is not part of the prompt, so it is left out: moving a breakpoint does not
 * change the count (and a request without one counts exactly as before).
 */
export function estimateTokens(body: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  return Math.ceil(promptChars(body) / 4);
}

/** The characters the estimate counts: [system, messages, tools] as JSON, cache markers left out. */
function promptChars(body: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  const p = unmarked(body);
  return JSON.stringify([p.system ?? '', p.messages ?? [], p.tools ?? []]).length;
}

/** A block without its own `cache_control` (and, for a tool_result, without its content blocks' ones). */
function withoutMarker(block: unknown): unknown {
  if (!isObject(block)) return block;
  let out = block;
  if ('cache_control' in out) {
    const { cache_control: _, ...rest } = out;
    out = rest;
  }
  if (out.type === 'tool_result' && Array.isArray(out.content) && out.content.some((c: unknown) => isObject(c) && 'cache_control' in c)) {
    out = { ...out, content: out.content.map(withoutMarker) };
  }
  return out;
}

/** The prompt's three parts with every cache marker removed (the same objects where there was none). */
function unmarked(body: { system?: unknown; messages?: unknown; tools?: unknown }) {
  const list = (v: unknown) => (Array.isArray(v) ? v.map(withoutMarker) : v);
  const messages = Array.isArray(body.messages)
    ? body.messages.map((m) => (isObject(m) && Array.isArray(m.content) ? { ...m, content: m.content.map(withoutMarker) } : m))
    : body.messages;
  return { system: list(body.system), messages, tools: list(body.tools) };
}

// ── Validation: section 3 of the API notes ──────────────────────────────────────────────────────

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

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
const MAX_BODY_BYTES = 32 * 1024 * 1024;

class Refusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}
const bad = (message: string) => new Refusal(400, message);

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

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The credential, checked first (before the body is even read): a 401 as the real API sends it. */
function checkCredential(headers: Record<string, string>, opts: FakeOptions): void {
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

/** The content of one message as blocks (a string is one text block). */
function blocksOf(content: unknown): any[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content as any[]);
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
function validate(path: string, headers: Record<string, string>, body: unknown, opts: FakeOptions, bound?: Bound) {
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

// ── Prompt caching ──────────────────────────────────────────────────────────────────────────────
//
// The rules, from https://platform.claude.com/docs/en/build-with-claude/prompt-caching (summarised in
// anthropic-api-notes.md section 6):
//   - `cache_control: { type: 'ephemeral', ttl?: '5m' | '1h' }` marks a breakpoint. It may sit on a tool
//     definition, a system text block, or a message content block (a tool_result's own content blocks
//     included); a top-level `cache_control` puts one on the last block ("automatic caching").
//   - The cached prefix is everything in the order tools → system → messages up to and including the
//     marked block. Here that is a flat list of blocks: each tool, each system block, each message
//     content block (a string system prompt or string message content is one block). A prefix is
//     identified by the model and its blocks, markers left out; tool_choice and thinking are part of
//     every message block's identity ("changing them invalidates the messages cache").
//   - At most 4 breakpoints per request. A 1-hour one must not come after a 5-minute one.
//   - On each request, for each breakpoint, the API looks for a cache entry at that block boundary and
//     at the earlier ones, up to 20 blocks before it. The longest one found is read; from there to the
//     breakpoint is written, and becomes an entry.
//   - An entry lives 5 minutes (or 1 hour with ttl '1h'), and each hit starts its time again.
//   - A prefix shorter than the model's minimum cacheable length is not cached, and no error is raised.
//   - usage: `input_tokens` is what comes after the last breakpoint, `cache_creation_input_tokens` what
//     was written, `cache_read_input_tokens` what was read; the three add up to the whole prompt.
// The refusals' wording is the API's own, as its 400s are quoted in bug reports:
//   "A maximum of 4 blocks with cache_control may be provided. Found 5."
//     (https://github.com/tghamm/Anthropic.SDK/issues/50, with the full error envelope)
//   "messages.0.content.4.cache_control.ttl: a ttl='1h' cache_control block must not come after a
//     ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`,
//     `system`, `messages`." (https://github.com/cnighswonger/claude-code-cache-fix/issues/44,
//     https://github.com/kristianvast/hermes-claude-auth/issues/31 for a `system.1…` path)
// The messages for a bad type or ttl are not quoted anywhere found: they follow the validator's
// wording for a literal that does not match (as for `tools.0.custom.input_schema.type` above).

type Ttl = '5m' | '1h';
const TTL_MS: Record<Ttl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };
const MAX_BREAKPOINTS = 4;
const LOOKBACK_BLOCKS = 20;
const TTL_ORDER =
  "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. " +
  'Note that blocks are processed in the following order: `tools`, `system`, `messages`.';

/** A `cache_control` as found in the request, before it is checked. */
interface Marker {
  value: unknown;
  /** Where it sits, as the API names it in errors: 'system.1', 'messages.3.content.0', '' for top-level. */
  path: string;
}

/** One block of the prompt, in the order tools → system → messages. */
interface PromptBlock {
  /** Its share of the characters the token estimate counts. */
  chars: number;
  /** What identifies it in a cache key: its content without markers, and where it sits. */
  id: unknown;
  markers: Marker[];
}

interface Prompt {
  /** Characters counted before the first block: brackets, commas, placeholders for absent parts. */
  front: number;
  blocks: PromptBlock[];
  /** A top-level `cache_control`: a breakpoint on the last block. */
  automatic?: Marker;
}

interface Breakpoint {
  /** The number of blocks in its prefix: 1 is the first block. */
  blocks: number;
  ttl: Ttl;
}

/**
 * The prompt as a flat list of blocks, with the estimate's characters shared among them so that the
 * blocks and `front` add up to exactly what estimateTokens counts. Call on a validated body.
 */
function promptOf(body: any): Prompt {
  const p = unmarked(body);
  const blocks: PromptBlock[] = [];
  const len = (v: unknown) => JSON.stringify(v).length;
  // In a JSON list each item brings its own characters and the comma (or the closing bracket) after
  // it; the first one also brings the opening bracket.
  const share = (item: unknown, i: number) => len(item) + 1 + (i === 0 ? 1 : 0);
  const markersOf = (block: any, path: string): Marker[] => {
    const own = isObject(block) && block.cache_control != null ? [{ value: block.cache_control, path }] : [];
    const inner = isObject(block) && block.type === 'tool_result' && Array.isArray(block.content) ? block.content : [];
    const nested = inner.flatMap((c: any, k: number) =>
      isObject(c) && c.cache_control != null ? [{ value: c.cache_control, path: `${path}.content.${k}` }] : [],
    );
    return [...own, ...nested];
  };

  (Array.isArray(p.tools) ? p.tools : []).forEach((tool, i) => {
    blocks.push({ chars: share(tool, i), id: { tool }, markers: markersOf(body.tools[i], `tools.${i}`) });
  });
  if (typeof p.system === 'string') blocks.push({ chars: len(p.system), id: { system: p.system }, markers: [] });
  if (Array.isArray(p.system)) {
    p.system.forEach((block, j) => {
      blocks.push({ chars: share(block, j), id: { system: block }, markers: markersOf(body.system[j], `system.${j}`) });
    });
  }
  // Changing tool_choice or thinking invalidates the cached messages (not the tools or system).
  const settings = { tool_choice: body.tool_choice ?? null, thinking: body.thinking ?? null };
  (p.messages as any[]).forEach((m, i) => {
    const chars = share(m, i); // the whole message, wrapper included
    if (typeof m.content === 'string') {
      blocks.push({ chars, id: { settings, message: i, role: m.role, content: m.content }, markers: [] });
      return;
    }
    const own = (m.content as unknown[]).map((b) => len(b) + 1);
    const wrapper = chars - own.reduce((a, b) => a + b, 0); // {"role":…,"content":[ … ]}, on the first block
    (m.content as unknown[]).forEach((block, j) => {
      blocks.push({
        chars: own[j] + (j === 0 ? wrapper : 0),
        id: { settings, message: i, role: m.role, block },
        markers: markersOf(body.messages[i].content[j], `messages.${i}.content.${j}`),
      });
    });
  });
  const front = promptChars(body) - blocks.reduce((a, b) => a + b.chars, 0);
  const automatic = body.cache_control != null ? { value: body.cache_control, path: '' } : undefined;
  return { front, blocks, automatic };
}

/** Checks every `cache_control` of the request the way the API does; returns the breakpoints. */
function checkCacheControl(prompt: Prompt): Breakpoint[] {
  const found: (Breakpoint & { path: string })[] = [];
  const take = ({ value, path }: Marker, blocks: number) => {
    const at = path ? `${path}.cache_control` : 'cache_control';
    if (!isObject(value)) throw bad(`${at}: Input should be a valid dictionary`);
    if (value.type === undefined) throw bad(`${at}.type: Field required`);
    if (value.type !== 'ephemeral') throw bad(`${at}.type: Input should be 'ephemeral'`);
    if (value.ttl !== undefined && value.ttl !== '5m' && value.ttl !== '1h') throw bad(`${at}.ttl: Input should be '5m' or '1h'`);
    const extra = Object.keys(value).find((k) => k !== 'type' && k !== 'ttl');
    if (extra) throw bad(`${at}.${extra}: Extra inputs are not permitted`);
    found.push({ blocks, ttl: value.ttl ?? '5m', path: at });
  };
  prompt.blocks.forEach((block, k) => block.markers.forEach((marker) => take(marker, k + 1)));
  // Automatic caching takes a slot of its own, unless the last block is marked already (unconfirmed).
  const last = prompt.blocks.at(-1);
  if (prompt.automatic && last) take(prompt.automatic, prompt.blocks.length);
  const slots = found.length - (prompt.automatic && last && last.markers.length > 0 ? 1 : 0);
  if (slots > MAX_BREAKPOINTS) {
    throw bad(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${slots}.`);
  }
  let fiveMinutes = false;
  for (const b of found) {
    if (b.ttl === '1h' && fiveMinutes) throw bad(`${b.path}.ttl: ${TTL_ORDER}`);
    if (b.ttl === '5m') fiveMinutes = true;
  }
  return found.map(({ blocks, ttl }) => ({ blocks, ttl }));
}

interface CacheEntry {
  expiresAt: number;
  ttlMs: number;
}

/** A JSON text with every object's keys sorted: the same content always gives the same key. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * What the cache does with one request: reads the longest live prefix it finds, writes from there to
 * the last cacheable breakpoint, stores (or refreshes) an entry per cacheable breakpoint. Returns the
 * usage numbers; `input_tokens` is the rest of the estimate.
 */
function applyCache(
  cache: Map<string, CacheEntry>,
  model: string,
  prompt: Prompt,
  marks: Breakpoint[],
  now: number,
  minTokens: number,
) {
  const none = { read: 0, written: { '5m': 0, '1h': 0 } as Record<Ttl, number> };
  if (marks.length === 0) return none;
  for (const [key, entry] of cache) if (entry.expiresAt <= now) cache.delete(key);

  // tokens[k]: the estimate of the prefix made of the first k blocks; keys[k]: its cache key.
  const tokens = [0];
  const keys = [createHash('sha256').update(`model ${model}`).digest('hex')];
  let chars = prompt.front;
  for (const block of prompt.blocks) {
    chars += block.chars;
    tokens.push(Math.ceil(chars / 4));
    keys.push(createHash('sha256').update(keys.at(-1)! + canonical(block.id)).digest('hex'));
  }

  // One breakpoint per position (a block and a tool_result's inner block share one); 1h wins.
  const byPosition = new Map<number, Ttl>();
  for (const m of marks) if (byPosition.get(m.blocks) !== '1h') byPosition.set(m.blocks, m.ttl);
  const cacheable = [...byPosition]
    .map(([blocks, ttl]) => ({ blocks, ttl }))
    .filter((b) => tokens[b.blocks] >= minTokens)
    .sort((a, b) => a.blocks - b.blocks);

  // Reads: for each breakpoint, the longest live entry at it or at most LOOKBACK_BLOCKS boundaries before.
  let readUpTo = 0;
  const hits: CacheEntry[] = [];
  for (const b of cacheable) {
    for (let k = b.blocks; k >= Math.max(1, b.blocks - LOOKBACK_BLOCKS); k--) {
      const entry = cache.get(keys[k]);
      if (entry && entry.expiresAt > now) {
        hits.push(entry);
        readUpTo = Math.max(readUpTo, k);
        break;
      }
    }
  }
  // Writes: each breakpoint past what was read, the span since the previous one, at its own TTL.
  const written: Record<Ttl, number> = { '5m': 0, '1h': 0 };
  let from = readUpTo;
  for (const b of cacheable) {
    if (b.blocks <= from) continue;
    written[b.ttl] += tokens[b.blocks] - tokens[from];
    from = b.blocks;
  }
  // A hit starts the entry's time again; every cacheable breakpoint leaves a live entry behind.
  for (const entry of hits) entry.expiresAt = now + entry.ttlMs;
  for (const b of cacheable) {
    const entry = cache.get(keys[b.blocks]);
    const ttlMs = Math.max(TTL_MS[b.ttl], entry && entry.expiresAt > now ? entry.ttlMs : 0);
    cache.set(keys[b.blocks], { ttlMs, expiresAt: now + ttlMs });
  }
  return { read: tokens[readUpTo], written };
}

// ── Thinking: section 7 of the API notes ────────────────────────────────────────────────────────
//
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

const isThinking = (b: any) => isObject(b) && (b.type === 'thinking' || b.type === 'redacted_thinking');
const digest = (v: unknown) => createHash('sha256').update(canonical(v)).digest('base64url').slice(0, 22);

function sign(record: Signed): string {
  const payload = Buffer.from(JSON.stringify(record)).toString('base64url');
  return `${payload}.${createHmac('sha256', SIGNING_KEY).update(payload).digest('base64url')}`;
}

/**
 * A recorded stream's thinking blocks come with signatures the fake did not make. Each server keeps them
 * here, signature (or data) → the record signThinking would have made for that request and place.
 */
type Bound = Map<string, Signed>;

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
function thinkingMode(body: any): { display: 'omitted' | 'summarized'; upFront: boolean } | undefined {
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
function checkThinkingBlocks(body: any, bound?: Bound): void {
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
function placeThinking(content: ReplyBlock[], body: any, mode: ReturnType<typeof thinkingMode>): ReplyBlock[] {
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
const unsigned = (content: Record<string, any>[]) =>
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
function signThinking(content: Record<string, any>[], body: any, msg: string, bound?: Bound): void {
  for (const { block, record } of thinkingRecords(content, body, msg, bound)) {
    block[block.type === 'thinking' ? 'signature' : 'data'] = sign(record);
  }
}

/**
 * Bind a recorded stream's thinking blocks to this request, as if the fake had signed them: each one's
 * signature (or data), as recorded, now stands for the record signThinking would make. Served again,
 * a stream's blocks are bound to the latest request.
 */
function bindThinking(sse: string, body: any, msg: string, bound: Bound): void {
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

// ── The server ──────────────────────────────────────────────────────────────────────────────────

export async function startFakeAnthropic(options: FakeOptions = {}): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = [];
  const queue = [...(options.replies ?? [])];
  const respond: Respond =
    options.respond ??
    (() =>
      queue.shift() ?? {
        error: { status: 500, message: 'fake-anthropic: no scripted reply left for this request', headers: { 'x-should-retry': 'false' } },
      });
  let messageCount = 0;
  let requestCount = 0;
  // Real ids are unique everywhere. A session resumed in a new run talks to a new fake (or offline
  // model), so its generated ids carry a per-server tag: toolu_fake_3fa9c1_001_0.
  const tag = randomBytes(3).toString('hex');
  // The prompt cache: one per server, as one per organisation on the real API. Key → entry.
  const cache = new Map<string, CacheEntry>();
  const now = options.now ?? Date.now;
  // The signatures of the thinking blocks in the recorded streams it served (see bindThinking).
  const bound: Bound = new Map();

  const server = createServer(async (req, res) => {
    const requestId = `req_fake_${String(++requestCount).padStart(4, '0')}`;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const path = (req.url ?? '').split('?')[0];
    // Whoever lacks the key gets a 401 and nothing else: no body is read (a stranger's 32 MB is
    // not buffered), no respond() runs. Node discards the unread body.
    try {
      checkCredential(headers, options);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const refused = { status: err.status, type: ERROR_TYPES[err.status], message: err.message };
      const rec = { method: req.method ?? '', path, headers, body: undefined, inputTokens: 0, refused };
      if (path.startsWith('/v1/messages')) requests.push(rec); // as below: Messages API calls only
      return sendError(res, requestId, refused);
    }
    const raw = await readBody(req);
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
    } catch {
      body = undefined;
    }
    const rec: RecordedRequest = { method: req.method ?? '', path, headers, body, inputTokens: 0 };

    // The Models API, for a chapter that asks how big the model's context window is. Not recorded in
    // `requests`: tests count the Messages API calls a chapter makes.
    const model = req.method === 'GET' ? path.match(/^\/v1\/models\/([^/]+)$/)?.[1] : undefined;
    if (model) {
      const info = {
        type: 'model',
        id: decodeURIComponent(model),
        display_name: decodeURIComponent(model),
        created_at: '2026-01-01T00:00:00Z',
        max_input_tokens: options.contextWindow ?? 200_000,
        max_tokens: options.maxOutputTokens ?? 64_000,
      };
      return sendJson(res, 200, info, requestId);
    }
    if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
      return sendError(res, requestId, { status: 404, type: 'not_found_error', message: 'Not Found' });
    }
    requests.push(rec);
    let checked: ReturnType<typeof validate>;
    try {
      if (raw.length > MAX_BODY_BYTES) throw new Refusal(413, 'Request exceeds the maximum allowed number of bytes.');
      if (body === undefined) throw bad('There was an error parsing the body of your request: not valid JSON.');
      const halfCharacter = surrogateError(raw.toString('utf8'));
      if (halfCharacter) throw bad(`The request body is not valid JSON: ${halfCharacter}`);
      checked = validate(path, headers, body, options, bound);
      rec.inputTokens = checked.tokens;
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      rec.refused = { status: err.status, type: ERROR_TYPES[err.status], message: err.message };
      return sendError(res, requestId, rec.refused);
    }

    if (path === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: rec.inputTokens }, requestId);

    const index = requests.filter((r) => r.path === '/v1/messages').length - 1;
    let answer: Reply;
    try {
      answer = await respond(body, { index, requests, inputTokens: rec.inputTokens });
    } catch (err) {
      answer = { error: { status: 500, message: `fake-anthropic: respond() threw: ${(err as Error).message}`, headers: { 'x-should-retry': 'false' } } };
    }
    if ('error' in answer) {
      const { status, type = ERROR_TYPES[status] ?? 'api_error', message = defaultMessage(status), headers: extra } = answer.error;
      rec.injected = { status, type, message };
      return sendError(res, requestId, rec.injected, extra);
    }
    if ('sse' in answer) {
      if (!body.stream) {
        const message = 'fake-anthropic: a recorded stream is served only to a request with stream: true';
        rec.injected = { status: 500, type: 'api_error', message };
        return sendError(res, requestId, rec.injected, { 'x-should-retry': 'false' });
      }
      bindThinking(answer.sse, body, `${tag}_${++messageCount}`, bound);
      return replayStream(res, requestId, answer);
    }
    // The cache is read and written when a message is served (streamed or not), never for a refusal.
    const { read, written } = applyCache(cache, body.model, checked.prompt, checked.breakpoints, now(), options.minCacheableTokens ?? 1024);
    const usage = {
      input_tokens: rec.inputTokens - read - written['5m'] - written['1h'],
      cache_creation_input_tokens: written['5m'] + written['1h'],
      cache_read_input_tokens: read,
      cache_creation: { ephemeral_5m_input_tokens: written['5m'], ephemeral_1h_input_tokens: written['1h'] },
    };
    const built = buildMessage(answer, body, usage, ++messageCount, tag, checked.mode, bound);
    const { message } = built;
    rec.usage = message.usage;
    if (body.stream) return streamMessage(res, requestId, built, answer);
    sendJson(res, 200, message, requestId);
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  if (options.unref) {
    server.unref();
    server.on('connection', (socket) => socket.unref()); // idle keep-alive sockets too
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function defaultMessage(status: number): string {
  if (status === 529) return 'Overloaded';
  if (status === 429) return 'Number of request tokens has exceeded your per-minute rate limit';
  if (status === 401) return 'invalid x-api-key';
  return 'Internal server error';
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, payload: unknown, requestId: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...extra });
  res.end(JSON.stringify(payload));
}

function sendError(res: ServerResponse, requestId: string, e: ApiErrorInfo, extra: Record<string, string> = {}) {
  // The real API tells clients not to retry a 4xx it refused (429 and friends are the caller's to set).
  const retry: Record<string, string> = e.status >= 400 && e.status < 500 && ![408, 409, 429].includes(e.status) ? { 'x-should-retry': 'false' } : {};
  sendJson(res, e.status, { type: 'error', error: { type: e.type, message: e.message }, request_id: requestId }, requestId, { ...retry, ...extra });
}

function buildMessage(
  answer: MessageReply,
  body: any,
  input: Omit<FakeUsage, 'output_tokens'>,
  n: number,
  tag: string,
  mode: ReturnType<typeof thinkingMode>,
  bound: Bound,
) {
  const model: string = body.model;
  const blocks = placeThinking(answer.content, body, mode);
  const content = blocks.map((b, k): Record<string, any> => {
    if (b.type === 'text') return { type: 'text', text: b.text };
    if (b.type === 'other') return b.block;
    if (b.type === 'thinking') return { type: 'thinking', thinking: mode?.display === 'summarized' ? b.thinking : '', signature: '' };
    if (b.type === 'redacted_thinking') return { type: 'redacted_thinking', data: '' };
    return { type: 'tool_use', id: b.id ?? `toolu_fake_${tag}_${String(n).padStart(3, '0')}_${k}`, name: b.name, input: b.input };
  });
  // The model stops at max_tokens, whatever the script says (cut before signing: a block that
  // was not sent is not part of any thinking block's record).
  const cut = cutAtMaxTokens(content, body.max_tokens);
  if (cut) content.splice(0, content.length, ...cut.content);
  signThinking(content, body, `${tag}_${n}`, bound);
  const stop_reason = cut
    ? 'max_tokens'
    : answer.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const message = {
    id: `msg_fake_${String(n).padStart(4, '0')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason,
    stop_sequence: null,
    usage: {
      ...input,
      input_tokens: answer.usage?.input_tokens ?? input.input_tokens,
      // A cut reply used all of max_tokens, as the real API reports it.
      output_tokens: cut ? body.max_tokens : answer.usage?.output_tokens ?? outputTokens(content),
    } satisfies FakeUsage,
  };
  return { message, partialInput: cut?.partialInput };
}

/** What was written: a signature is not (it stands for the thinking, whose summary is counted). */
const outputTokens = (content: Record<string, any>[]) =>
  Math.max(1, Math.ceil(JSON.stringify(unsigned(content)).length / 4));

/**
 * A reply longer than `maxTokens` (by the estimate usage reports), cut where the limit falls, or
 * undefined if it fits. Blocks before that place are kept whole; a text block is cut mid-text; a
 * tool call mid-input: the stream sends its JSON as far as it got (`partialInput`, as in
 * tests/real-streams/ts-incomplete-partial-json.sse), the message without streaming an empty
 * input (unconfirmed: no capture of that case). A thinking block or an unmodelled one is kept
 * whole or left out; nothing after the cut is sent.
 */
function cutAtMaxTokens(content: Record<string, any>[], maxTokens: number) {
  const fits = (blocks: Record<string, any>[]) =>
    JSON.stringify(unsigned(blocks)).length <= maxTokens * 4;
  if (fits(content)) return undefined;
  const kept: Record<string, any>[] = [];
  // The longest start of `whole` that still fits, as `make` turns it into the last block.
  const longest = (whole: string, make: (part: string) => Record<string, any>) => {
    let [lo, hi] = [0, whole.length];
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits([...kept, make(whole.slice(0, mid))])) lo = mid;
      else hi = mid - 1;
    }
    // Never half of a surrogate pair.
    const part = whole.slice(0, lo);
    return /[\ud800-\udbff]$/.test(part) ? part.slice(0, -1) : part;
  };
  for (const block of content) {
    if (fits([...kept, block])) {
      kept.push(block);
      continue;
    }
    if (block.type === 'text') {
      const part = longest(block.text, (t) => ({ ...block, text: t }));
      if (part) kept.push({ ...block, text: part });
    }
    if (block.type === 'tool_use' && fits([...kept, { ...block, input: '' }])) {
      // The estimate counts the JSON written so far, as a string in place of the input.
      const json = JSON.stringify(block.input);
      const partialInput = longest(json, (part) => ({ ...block, input: part }));
      kept.push({ ...block, input: {} });
      return { content: kept, partialInput };
    }
    break;
  }
  return { content: kept, partialInput: undefined };
}

/** Cut a string into pieces of about `size` characters. */
function pieces(s: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out.length ? out : [''];
}

/** Cut the connection mid-stream, after what was written so far has reached the client. */
function drop(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => res.write('', () => (res.socket?.destroy(), resolve())));
}

/** Where a replayed stream's writes end: after the first byte of each multi-byte character. */
export function replayCuts(bytes: Uint8Array): number[] {
  const cuts: number[] = [];
  // A byte 11xxxxxx starts a character of two to four bytes; the ones after it are 10xxxxxx.
  for (let at = 0; at < bytes.length - 1; at++) if ((bytes[at] & 0xc0) === 0xc0) cuts.push(at + 1);
  return cuts;
}

/**
 * A recorded stream, as it is: its UTF-8 bytes in writes that end inside each multi-byte character,
 * each sent before the next. (Only there: a cut elsewhere tests nothing of the chapter's, as the SDK
 * parses the events, and each write costs both sides a read.) The client may read several writes at
 * once; after each write the fake waits a moment, so that the client most likely reads the first
 * half of the character on its own.
 */
async function replayStream(res: ServerResponse, requestId: string, answer: RecordedReply) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
  const bytes = Buffer.from(answer.sse, 'utf8');
  let from = 0;
  for (const cut of [...replayCuts(bytes), bytes.length]) {
    if (res.destroyed) break;
    await new Promise((sent) => res.write(bytes.subarray(from, cut), sent));
    from = cut;
    if (cut < bytes.length) await new Promise((wait) => setTimeout(wait, 30));
  }
  res.end();
}

async function streamMessage(
  res: ServerResponse,
  requestId: string,
  { message, partialInput }: ReturnType<typeof buildMessage>,
  answer: MessageReply,
) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
  const delay = answer.eventDelayMs ?? 0;
  const send = async (event: string, data: unknown) => {
    if (res.destroyed) return;
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (delay) await new Promise((r) => setTimeout(r, delay));
  };

  await send('message_start', {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  let done = 0; // blocks of the script sent whole (thinking blocks the fake added do not count)
  for (const [index, block] of message.content.entries()) {
    if (!isThinking(block) && answer.errorAfterBlocks === done) {
      await send('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      return res.end();
    }
    if (!isThinking(block) && answer.dropAfterBlocks === done) return drop(res);
    if (!isThinking(block)) done++;
    if (block.type === 'thinking') {
      // Empty at the start, the text in deltas (none under "omitted"), the signature last (§7.4).
      const start = { type: 'thinking', thinking: '', signature: '' };
      await send('content_block_start', { type: 'content_block_start', index, content_block: start });
      for (const part of block.thinking ? pieces(block.thinking, 24) : []) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: part } });
      }
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'text') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      if (index === 0) await send('ping', { type: 'ping' });
      for (const part of pieces(block.text!, 24)) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: part } });
      }
    } else if (block.type !== 'tool_use') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: block });
    } else {
      await send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      if (index === 0) await send('ping', { type: 'ping' });
      // Split the JSON in three, mid-string: a client that does not reassemble the fragments gets garbage.
      // A call cut at max_tokens is the last block: its JSON as far as it got.
      const cut = index === message.content.length - 1 ? partialInput : undefined;
      const json = cut ?? JSON.stringify(block.input);
      const third = Math.max(1, Math.ceil(json.length / 3));
      for (const part of pieces(json, third)) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } });
      }
    }
    await send('content_block_stop', { type: 'content_block_stop', index });
  }
  if (answer.errorAfterBlocks !== undefined && answer.errorAfterBlocks >= done) {
    await send('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    return res.end();
  }
  if (answer.dropAfterBlocks !== undefined && answer.dropAfterBlocks >= done) return drop(res);
  // message_start carried the input side; message_delta the output, and again the cumulative input
  // counters (MessageDeltaUsage in the SDK: "cumulative", overwritten, never added).
  const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens } = message.usage;
  await send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens },
  });
  await send('message_stop', { type: 'message_stop' });
  res.end();
}
