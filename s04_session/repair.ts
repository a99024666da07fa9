/**
 * Repair before sending (new in s04): a conversation read back from a log that a crash cut short
 * is made valid for the API, every time it is sent, without ever rewriting the log.
 */
import type { MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources';
import { validCalls } from './tools.ts';

const INTERRUPTED_CALL =
  'Error: interrupted: the agent stopped while this ran. It may have partly run; check first.';

/**
 * The conversation as the API will accept it. A session that ended mid-turn (killed while a tool
 * ran) has a tool_use without its tool_result, and every later request would be refused with a
 * 400; a damaged line can leave a result whose call is gone. Answer the one, drop the other; and
 * mend half characters and the odd calls an older version stored. Only what is sent changes, not
 * what is stored, so this runs on every request and resuming twice adds nothing.
 */
// Half a character: a surrogate without its partner, left where an older version of the agent cut
// text inside an emoji. The API refuses the whole request for it, so it is sent as U+FFFD.
const HALF_CHARACTER = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `value` with every string in it made of whole characters; the same object if it already was. */
function wholeCharacters<T>(value: T): T {
  if (typeof value === 'string') return value.replace(HALF_CHARACTER, '\ufffd') as T;
  if (typeof value !== 'object' || value === null) return value;
  const before = Object.entries(value);
  const after = before.map(([key, item]) => [key, wholeCharacters(item)] as const);
  if (after.every(([, item], i) => item === before[i][1])) return value;
  return (Array.isArray(value) ? after.map(([, item]) => item) : Object.fromEntries(after)) as T;
}

export function repairForSending(messages: MessageParam[]): MessageParam[] {
  const answer = (id: string): ToolResultBlockParam => {
    return { type: 'tool_result', tool_use_id: id, content: INTERRUPTED_CALL, is_error: true };
  };
  const out: MessageParam[] = [];
  // The calls of the assistant message just before: the id in the log, and the id sent.
  let calls: { stored: string; sent: string }[] = [];
  for (const message of messages.map(wholeCharacters)) {
    if (message.role === 'assistant') {
      if (calls.length > 0) out.push({ role: 'user', content: calls.map((c) => answer(c.sent)) });
      const blocks = typeof message.content === 'string' ? [] : message.content;
      // Calls stored before validCalls (tools.ts) mended another vendor's: a repeated id, an input
      // that is not an object. The API refuses both.
      const valid = validCalls(blocks, out);
      out.push(valid.every((b, i) => b === blocks[i]) ? message : { ...message, content: valid });
      calls = [];
      for (const [i, block] of valid.entries()) {
        const stored = blocks[i]; // the same block, perhaps with another id
        if (block.type !== 'tool_use' || stored.type !== 'tool_use') continue;
        calls.push({ stored: stored.id, sent: block.id });
      }
      continue;
    }
    const { content } = message;
    const asText = (text: string) => [{ type: 'text' as const, text }];
    const blocks = typeof content === 'string' ? asText(content) : content;
    const results = blocks.filter((b) => b.type === 'tool_result');
    const kept: ToolResultBlockParam[] = []; // each result, with the first call left of its id
    for (const result of results) {
      const i = calls.findIndex((call) => call.stored === result.tool_use_id);
      if (i < 0) continue; // its call is gone
      const [{ sent }] = calls.splice(i, 1);
      kept.push(sent === result.tool_use_id ? result : { ...result, tool_use_id: sent });
    }
    const missing = calls.map((call) => call.sent);
    calls = [];
    const same = kept.length === results.length && kept.every((b, i) => b === results[i]);
    if (same && missing.length === 0) {
      out.push(message); // the usual case: sent exactly as stored
      continue;
    }
    const others = blocks.filter((b) => b.type !== 'tool_result');
    const repaired = [...kept, ...missing.map(answer), ...others];
    if (repaired.length > 0) out.push({ role: 'user', content: repaired });
  }
  if (calls.length > 0) out.push({ role: 'user', content: calls.map((c) => answer(c.sent)) });
  return out;
}
