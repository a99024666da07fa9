/**
 * Invalid request bodies, one for each rule the fake enforces, with the message the real API
 * refuses each with: validation.test.ts sends every one. The messages some other tests expect.
 */
import { type FakeOptions } from '../../shared/fake-anthropic.ts';
import { assistant, BASH_TOOL, body, marked, MODEL, tb, tr, tu, user } from './harness.ts';

interface RuleCase {
  rule: string;
  params: Record<string, unknown>;
  message: string;
  opts?: FakeOptions;
  /** Send with client.post: messages.create() itself throws (TypeError, client-side) on this body. */
  raw?: boolean;
}

const TOOL_USE_MISSING = (i: number, ids: string) =>
  `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids}. ` +
  'Each `tool_use` block must have a corresponding `tool_result` block in the next message.';
export const UNEXPECTED_RESULT = (i: number, j: number, id: string) =>
  `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
  'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.';
const RESULTS_NOT_FIRST = (i: number, n: number) =>
  `messages.${i}: Did not find ${n} \`tool_result\` block(s) at the beginning of this message. ` +
  'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.';
const EMPTY_CONTENT = (i: number) =>
  `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
const PREFILL = 'This model does not support assistant message prefill. The conversation must end with a user message.';
const TOOL_NAME = (i: number) => `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
const MAX_BREAKPOINTS = (n: number) => `A maximum of 4 blocks with cache_control may be provided. Found ${n}.`;
const TTL_ORDER =
  "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. " +
  'Note that blocks are processed in the following order: `tools`, `system`, `messages`.';

/** Invalid /v1/messages bodies the SDK sends as given (cast past its types), one per rule. */
export const RULES: RuleCase[] = [
  // Pairing of tool_use and tool_result (after merging consecutive same-role messages).
  {
    rule: 'tool_use without a tool_result in the next turn',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')]), user('what did you find?')] }),
    message: TOOL_USE_MISSING(1, 'toolu_1'),
  },
  {
    rule: 'tool_use without a tool_result: every missing id is listed',
    params: body({
      messages: [user('list files'), assistant([tb('Two commands.'), tu('toolu_1'), tu('toolu_2')]), user('no results, sorry')],
    }),
    message: TOOL_USE_MISSING(1, 'toolu_1, toolu_2'),
  },
  {
    rule: 'tool_use without a tool_result: one of two answered',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1'), tu('toolu_2')]), user([tr('toolu_1')])] }),
    message: TOOL_USE_MISSING(1, 'toolu_2'),
  },
  {
    rule: 'tool_use as the last message (no next turn at all)',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')])] }),
    message: TOOL_USE_MISSING(1, 'toolu_1'),
  },
  {
    rule: 'the same tool_use id twice in a conversation',
    params: body({
      messages: [
        user('list files'),
        assistant([tu('toolu_1')]),
        user([tr('toolu_1')]),
        assistant([tu('toolu_1')]),
        user([tr('toolu_1')]),
      ],
    }),
    message: 'messages.3.content.0: `tool_use` ids must be unique',
  },
  {
    rule: 'tool_result with an unexpected tool_use_id in the first message',
    params: body({ messages: [user([tr('toolu_ghost')])] }),
    message: UNEXPECTED_RESULT(0, 0, 'toolu_ghost'),
  },
  {
    rule: 'tool_result with an unexpected tool_use_id after a real answer',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1'), tr('toolu_ghost')])] }),
    message: UNEXPECTED_RESULT(2, 1, 'toolu_ghost'),
  },
  {
    rule: 'tool_result answering a tool_use of an older turn (not the previous one)',
    params: body({
      messages: [user('list files'), assistant([tu('toolu_1')]), user([tr('toolu_1')]), assistant('Done.'), user([tr('toolu_1')])],
    }),
    message: UNEXPECTED_RESULT(4, 0, 'toolu_1'),
  },
  {
    rule: 'tool_results not first in the user turn (a text block before them)',
    params: body({ messages: [user('list files'), assistant([tu('toolu_1')]), user([tb('Here you go:'), tr('toolu_1')])] }),
    message: RESULTS_NOT_FIRST(2, 1),
  },
  {
    rule: 'tool_results not first: a text message then a tool_result message (merged into one turn)',
    params: body({
      messages: [user('list files'), assistant([tu('toolu_1')]), user('Here you go:'), user([tr('toolu_1')])],
    }),
    message: RESULTS_NOT_FIRST(2, 1),
  },
  {
    rule: 'tool_results not first: two tool_uses, text between the two results',
    params: body({
      messages: [user('go'), assistant([tu('toolu_1'), tu('toolu_2')]), user([tr('toolu_1'), tb('and'), tr('toolu_2')])],
    }),
    message: RESULTS_NOT_FIRST(2, 2),
  },
  // Text and content.
  {
    rule: 'empty text block',
    params: body({ messages: [user([tb('')])] }),
    message: 'messages: text content blocks must be non-empty',
  },
  {
    rule: 'empty text block inside tool_result content',
    params: body({ messages: [user('go'), assistant([tu('toolu_1')]), user([tr('toolu_1', [tb('')])])] }),
    message: 'messages: text content blocks must be non-empty',
  },
  {
    rule: 'whitespace-only text block',
    params: body({ messages: [user([tb(' \n\t ')])] }),
    message: 'messages: text content blocks must contain non-whitespace text',
  },
  {
    rule: 'whitespace-only string content',
    params: body({ messages: [user('   ')] }),
    message: 'messages: text content blocks must contain non-whitespace text',
  },
  {
    rule: 'a content block of a type the API does not know (sent back from a newer reply, say)',
    params: body({ messages: [user('hi'), assistant([{ type: 'mystery_block' } as any]), user('and?')] }),
    message:
      "messages.1.content.0: Input tag 'mystery_block' found using 'type' does not match any of the expected tags: " +
      "'document', 'image', 'redacted_thinking', 'search_result', 'server_tool_use', 'text', 'thinking', " +
      "'tool_result', 'tool_use', 'web_fetch_tool_result', 'web_search_tool_result'",
  },
  {
    rule: 'empty message content: string ""',
    params: body({ messages: [user('')] }),
    message: EMPTY_CONTENT(0),
  },
  {
    rule: 'empty message content: []',
    params: body({ messages: [user([])] }),
    message: EMPTY_CONTENT(0),
  },
  {
    rule: 'empty message content: an assistant message that is not the last one',
    params: body({ messages: [user('hi'), assistant([]), user('hello?')] }),
    message: EMPTY_CONTENT(1),
  },
  {
    rule: 'empty messages array',
    params: body({ messages: [] }),
    message: 'messages: at least one message is required',
  },
  {
    rule: 'messages missing',
    params: body({}),
    message: 'messages: Field required',
  },
  {
    rule: 'messages not a list',
    params: body({ messages: { role: 'user', content: 'hi' } }),
    message: 'messages: Input should be a valid list',
    raw: true,
  },
  {
    rule: 'a message that is not an object',
    params: body({ messages: ['hi'] }),
    message: 'messages.0: Input should be a valid dictionary',
  },
  {
    rule: 'a message with an unknown role (e.g. "system")',
    params: body({ messages: [{ role: 'system', content: 'be brief' }, user('hi')] }),
    message: "messages.0.role: Input should be 'user' or 'assistant'",
  },
  {
    rule: 'message content neither string nor list',
    params: body({ messages: [user({ type: 'text', text: 'hi' })] }),
    message: 'messages.0.content: Input should be a valid list',
  },
  {
    rule: 'a content block without a type',
    params: body({ messages: [user([{ text: 'hi' }])] }),
    message: 'messages.0.content.0: Input should be a valid dictionary',
  },
  {
    rule: 'a text block without text',
    params: body({ messages: [user([{ type: 'text' }])] }),
    message: 'messages.0.content.0.text: Field required',
  },
  // Block placement and shape.
  {
    rule: 'tool_use in a user message',
    params: body({ messages: [user([tu('toolu_1')])] }),
    message: 'messages.0.content.0: tool_use blocks can only appear in assistant messages',
  },
  {
    rule: 'tool_use without id',
    params: body({ messages: [user('go'), assistant([{ type: 'tool_use', name: 'bash', input: {} }]), user('x')] }),
    message: 'messages.1.content.0.tool_use: id and name are required',
  },
  {
    rule: 'tool_use.input is a string (JSON not parsed)',
    params: body({ messages: [user('go'), assistant([tu('toolu_1', '{"command":"ls"}')]), user([tr('toolu_1')])] }),
    message: 'messages.1.content.0.tool_use.input: Input should be a valid dictionary',
  },
  {
    rule: 'tool_use.input is an array',
    params: body({ messages: [user('go'), assistant([tb('Running.'), tu('toolu_1', ['ls'])]), user([tr('toolu_1')])] }),
    message: 'messages.1.content.1.tool_use.input: Input should be a valid dictionary',
  },
  {
    rule: 'tool_result in an assistant message',
    params: body({ messages: [user('go'), assistant([tr('toolu_1')]), user('x')] }),
    message: 'messages.1.content.0: tool_result blocks can only appear in user messages',
  },
  {
    rule: 'tool_result without tool_use_id',
    params: body({ messages: [user('go'), assistant([tu('toolu_1')]), user([{ type: 'tool_result', content: 'x' }])] }),
    message: 'messages.2.content.0.tool_result.tool_use_id: Field required',
  },
  // Prefill.
  {
    rule: 'conversation ending with an assistant message (prefill) on a model that refuses it',
    params: body({ messages: [user('Write a haiku.'), assistant('Here is')] }),
    message: PREFILL,
  },
  {
    rule: 'prefill allowed (allowPrefill) but the final assistant text ends with whitespace',
    params: body({ messages: [user('Write a haiku.'), assistant('Here is ')] }),
    message: 'messages: final assistant content cannot end with trailing whitespace',
    opts: { allowPrefill: true },
  },
  {
    rule: 'prefill allowed, final assistant block list ends with a newline',
    params: body({ messages: [user('Write a haiku.'), assistant([tb('Here is\n')])] }),
    message: 'messages: final assistant content cannot end with trailing whitespace',
    opts: { allowPrefill: true },
  },
  // Top-level fields.
  {
    rule: 'model missing',
    params: { max_tokens: 1024, messages: [user('hi')] },
    message: 'model: Field required',
  },
  {
    rule: 'max_tokens missing',
    params: { model: MODEL, messages: [user('hi')] },
    message: 'max_tokens: Field required',
  },
  {
    rule: 'max_tokens below 1',
    params: body({ max_tokens: 0, messages: [user('hi')] }),
    message: 'max_tokens: Input should be greater than or equal to 1',
  },
  {
    rule: 'max_tokens above the limit set by maxOutputTokens',
    params: body({ max_tokens: 8193, messages: [user('hi')] }),
    message: `max_tokens: 8193 > 8192, which is the maximum allowed number of output tokens for ${MODEL}`,
    opts: { maxOutputTokens: 8192 },
  },
  ...['temperature', 'top_p', 'top_k', 'foo'].map(
    (field): RuleCase => ({
      rule: `unknown field: ${field}`,
      params: body({ messages: [user('hi')], [field]: field === 'foo' ? 'bar' : field === 'top_k' ? 5 : 0.5 }),
      message: `${field}: Extra inputs are not permitted`,
    }),
  ),
  // System.
  {
    rule: 'system neither string nor list',
    params: body({ system: { text: 'be brief' }, messages: [user('hi')] }),
    message: 'system: Input should be a valid string',
  },
  {
    rule: 'system block that is not a text block',
    params: body({ system: [tb('be brief'), { type: 'image' }], messages: [user('hi')] }),
    message: "system.1.type: Input should be 'text'",
  },
  {
    rule: 'system block with empty text',
    params: body({ system: [tb('')], messages: [user('hi')] }),
    message: 'system: text content blocks must be non-empty',
  },
  // Tools.
  {
    rule: 'tool name with a space',
    params: body({ tools: [BASH_TOOL, { ...BASH_TOOL, name: 'read file' }], messages: [user('hi')] }),
    message: TOOL_NAME(1),
  },
  {
    rule: 'tool name longer than 128 characters',
    params: body({ tools: [{ ...BASH_TOOL, name: 'x'.repeat(129) }], messages: [user('hi')] }),
    message: TOOL_NAME(0),
  },
  {
    rule: 'tool name with a dot (MCP-style server.tool)',
    params: body({ tools: [{ ...BASH_TOOL, name: 'github.create_issue' }], messages: [user('hi')] }),
    message: TOOL_NAME(0),
  },
  {
    rule: 'tool input_schema.type not "object"',
    params: body({ tools: [{ name: 'bash', input_schema: { type: 'array', items: { type: 'string' } } }], messages: [user('hi')] }),
    message: "tools.0.custom.input_schema.type: Input should be 'object'",
  },
  {
    rule: 'tool input_schema missing',
    params: body({ tools: [{ name: 'bash', description: 'Run a command' }], messages: [user('hi')] }),
    message: 'tools.0.custom.input_schema: Field required',
  },
  {
    rule: 'tools not a list',
    params: body({ tools: BASH_TOOL, messages: [user('hi')] }),
    message: 'tools: Input should be a valid list',
    raw: true,
  },
  {
    rule: 'a tool that is not an object',
    params: body({ tools: ['bash'], messages: [user('hi')] }),
    message: 'tools.0: Input should be a valid dictionary',
  },
  // Prompt caching: where the breakpoints are, how many, and their TTLs.
  {
    rule: 'five cache breakpoints (two tools, two system blocks, one message block)',
    params: body({
      tools: [marked(BASH_TOOL), marked({ ...BASH_TOOL, name: 'read_file' })],
      system: [marked(tb('Rules.')), marked(tb('More rules.'))],
      messages: [user([marked(tb('hi'))])],
    }),
    message: MAX_BREAKPOINTS(5),
  },
  {
    rule: 'five cache breakpoints, one of them inside a tool_result’s content',
    params: body({
      system: [marked(tb('a')), marked(tb('b')), marked(tb('c'))],
      messages: [user('go'), assistant([tu('toolu_1')]), user([marked(tr('toolu_1', [marked(tb('out'))]))])],
    }),
    message: MAX_BREAKPOINTS(5),
  },
  {
    rule: 'four block breakpoints plus a top-level cache_control (automatic caching takes a fifth)',
    params: body({
      cache_control: { type: 'ephemeral' },
      system: [marked(tb('a')), marked(tb('b'))],
      messages: [user([marked(tb('c')), marked(tb('d')), tb('e')])],
    }),
    message: MAX_BREAKPOINTS(5),
  },
  {
    rule: 'a cache_control type other than ephemeral',
    params: body({ system: [{ ...tb('Rules.'), cache_control: { type: 'persistent' } }], messages: [user('hi')] }),
    message: "system.0.cache_control.type: Input should be 'ephemeral'",
  },
  {
    rule: 'a cache_control ttl other than 5m or 1h',
    params: body({ messages: [user([{ ...tb('hi'), cache_control: { type: 'ephemeral', ttl: '10m' } }])] }),
    message: "messages.0.content.0.cache_control.ttl: Input should be '5m' or '1h'",
  },
  {
    rule: 'a cache_control with an unknown field',
    params: body({ tools: [{ ...BASH_TOOL, cache_control: { type: 'ephemeral', scope: 'global' } }], messages: [user('hi')] }),
    message: 'tools.0.cache_control.scope: Extra inputs are not permitted',
  },
  {
    rule: "a ttl='1h' breakpoint in messages after a default (5-minute) one in system",
    params: body({ system: [marked(tb('Rules.'))], messages: [user([marked(tb('hi'), '1h')])] }),
    message: `messages.0.content.0.cache_control.ttl: ${TTL_ORDER}`,
  },
  {
    rule: "a ttl='1h' system breakpoint after a ttl='5m' one on a tool (tools come first)",
    params: body({ tools: [marked(BASH_TOOL, '5m')], system: [tb('a'), marked(tb('Rules.'), '1h')], messages: [user('hi')] }),
    message: `system.1.cache_control.ttl: ${TTL_ORDER}`,
  },
];
