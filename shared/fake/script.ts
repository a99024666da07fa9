/**
 * What a test scripts: the replies the fake answers with (a message, an HTTP error, a recorded
 * stream), the faults it can inject, its options, what it records of each request, and the small
 * builders that make a script read like the conversation (`reply(text('done'))`).
 */

export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id?: string; name: string; input: unknown }
  /** Any other block, streamed as it is (a type newer than the client, say): `other({ type: 'x' })`. */
  | { type: 'other'; block: { type: string; [k: string]: unknown } }
  /**
   * A thinking block where the script puts it (its text shows only under `display: "summarized"`).
   * Without any, a reply to a model that thinks gets them where the API puts them (thinking.ts).
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
 * blocks' signatures are bound to this request (see thinking.ts).
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
