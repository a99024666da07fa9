/**
 * Repair before sending (new in s04): a conversation read back from a log that a crash cut short
 * is made valid for the API, every time it is sent, without ever rewriting the log.
 */
import type { MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources';

const INTERRUPTED_CALL =
  'Error: interrupted: the agent stopped while this ran. It may have partly run; check first.';

/**
 * The conversation as the API will accept it. A session that ended mid-turn (killed while a tool
 * ran) has a tool_use without its tool_result, and every later request would be refused with a
 * 400; a damaged line can leave a result whose call is gone. Answer the one, drop the other; and
 * mend half characters. Only what is sent changes, not what is stored, so this runs on every
 * request and resuming twice adds nothing.
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
  let calls: string[] = []; // the tool_use ids of the assistant message just before
  for (const message of messages.map(wholeCharacters)) {
    if (message.role === 'assistant') {
      if (calls.length > 0) out.push({ role: 'user', content: calls.map(answer) });
      out.push(message);
      const blocks = typeof message.content === 'string' ? [] : message.content;
      calls = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
      continue;
    }
    const { content } = message;
    const asText = (text: string) => [{ type: 'text' as const, text }];
    const blocks = typeof content === 'string' ? asText(content) : content;
    const results = blocks.filter((b) => b.type === 'tool_result');
    const kept = results.filter((b) => calls.includes(b.tool_use_id));
    const missing = calls.filter((id) => !kept.some((b) => b.tool_use_id === id));
    calls = [];
    if (kept.length === results.length && missing.length === 0) {
      out.push(message); // the usual case: sent exactly as stored
      continue;
    }
    const others = blocks.filter((b) => b.type !== 'tool_result');
    const repaired = [...kept, ...missing.map(answer), ...others];
    if (repaired.length > 0) out.push({ role: 'user', content: repaired });
  }
  if (calls.length > 0) out.push({ role: 'user', content: calls.map(answer) });
  return out;
}
