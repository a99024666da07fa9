/**
 * What the chapters put in requests, as the page recognises it: a tool result sent as a
 * placeholder (s05's tier 1), the summary a compaction starts from, thinking blocks.
 */
import { isObject } from './untrusted.ts';

// Tier 1 (s05's compact.ts): an old tool result sent as a one-line placeholder.
const PLACEHOLDER = '[cleared to save context: the result of ';
// Tiers 2 and 3: the conversation starts again from a summary of what came before.
const SUMMARY = '[Earlier conversation, compacted.';

type Block = { type: string; [field: string]: any };
type Message = { role: string; content: string | Block[] };

// Anything odd in a trace (a message that is not an object, say) is shown, never a crash.
export function blocksOf(message: unknown): Block[] {
  const content = isObject(message) ? message.content : undefined;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isObject) as Block[] : [];
}

export function isPlaceholder(block: Block): boolean {
  if (block.type !== 'tool_result') return false;
  const { content } = block;
  const text = typeof content === 'string' ? content : content?.[0]?.text;
  return typeof text === 'string' && text.startsWith(PLACEHOLDER);
}

/** The user message a compaction starts the conversation with. */
export function isSummary(message: unknown): boolean {
  const text = blocksOf(message)[0]?.text;
  const byYou = isObject(message) && message.role === 'user';
  return byYou && typeof text === 'string' && text.startsWith(SUMMARY);
}

export const isThinking = (block: Block) =>
  block.type === 'thinking' || block.type === 'redacted_thinking';
export const count = (message: unknown, test: (block: Block) => boolean) =>
  blocksOf(message).filter(test).length;
