/**
 * The server: startFakeAnthropic, what it does with each request (the credential, validation, the
 * script's answer, the cache), and the reply, as JSON or as a stream with the faults the script
 * asked for, cut at max_tokens; a recorded stream replayed byte for byte.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyCache, type CacheEntry } from './caching.ts';
import { bad, ERROR_TYPES, Refusal } from './refusal.ts';
import type { ApiErrorInfo, FakeAnthropic, FakeOptions, FakeUsage, MessageReply } from './script.ts';
import type { RecordedReply, RecordedRequest, Reply, Respond } from './script.ts';
import { bindThinking, isThinking, placeThinking, signThinking, thinkingMode, unsigned, type Bound }
  from './thinking.ts';
import { checkCredential, MAX_BODY_BYTES, surrogateError, validate } from './validation.ts';

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
