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
 *
 * It lives in shared/fake/, a file for each part, in the order a request meets them:
 *   fake/script.ts      what a test scripts: replies, errors, recorded streams, faults, options,
 *                       what each request leaves in `fake.requests`, and the builders below
 *   fake/server.ts      startFakeAnthropic: each request's way through the fake, and the reply as
 *                       JSON or as a stream (faults, the cut at max_tokens, recorded streams)
 *   fake/validation.ts  what the API refuses (auth, headers, fields, tools, messages, the context
 *                       window), and validate(): every check a request goes through, in order
 *   fake/caching.ts     prompt caching: each `cache_control` checked (the 400 for a bad one is
 *                       made in checkCacheControl), and what the cache reads and writes
 *   fake/thinking.ts    thinking blocks: which requests think, where the blocks go, their
 *                       signatures, and the 400s for a block sent back changed or out of place
 *   fake/tokens.ts      the token estimate (usage, count_tokens, the context window, the cache)
 *   fake/refusal.ts     a Refusal: the status and message of the API's error, thrown by every check
 */
export type {
  ApiErrorInfo,
  ErrorReply,
  FakeAnthropic,
  FakeOptions,
  FakeUsage,
  MessageReply,
  RecordedReply,
  RecordedRequest,
  Reply,
  ReplyBlock,
  Respond,
  RespondContext,
  StopReason,
} from './fake/script.ts';
// Small builders so tests read like the conversation they script.
export { httpError, other, recorded, redactedThinking, reply, text, thinking, toolUse }
  from './fake/script.ts';
export { startFakeAnthropic, replayCuts } from './fake/server.ts';
// For tests that check many conversations, or a body's JSON, without a server round trip.
export { checkMessages, surrogateError } from './fake/validation.ts';
export { estimateTokens } from './fake/tokens.ts';
// Text with its control characters shown as escapes (the offline model's replies use it too).
export { showControls } from './fake/thinking.ts';
