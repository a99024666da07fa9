/**
 * Prompt caching (new in s06): the second cache breakpoint, at the end of the conversation, and
 * what a request cost, with the cache's reads and writes priced as they are billed.
 */
import type { MessageParam, Usage } from '@anthropic-ai/sdk/resources';
import { blocksOf } from './compact.ts';

/** Breakpoint 2, on the last block of the last message: the next request reads all this cached. */
export function withBreakpoint(messages: MessageParam[]): MessageParam[] {
  const last = messages.at(-1);
  if (!last) return messages;
  const blocks = blocksOf(last);
  const marked = blocks.map((block, i) => {
    if (i < blocks.length - 1) return block;
    return { ...block, cache_control: { type: 'ephemeral' as const } };
  });
  return [...messages.slice(0, -1), { ...last, content: marked } as MessageParam];
}

// Dollars per million tokens (https://platform.claude.com/docs/en/about-claude/pricing). Reading
// from the cache costs 0.1× the input price; writing to it, for the default 5 minutes, 1.25×.
const PRICES: Record<string, { input: number; output: number }> = {
  'claude-sonnet-5-5': { input: 2, output: 10 },
};

/** What a request cost in dollars, or undefined for a model without a price here. */
export function cost(model: string, usage: Usage): number | undefined {
  const price = PRICES[model];
  if (!price) return undefined;
  const { cache_read_input_tokens: read, cache_creation_input_tokens: written } = usage;
  const input = usage.input_tokens + (read ?? 0) * 0.1 + (written ?? 0) * 1.25;
  return (input * price.input + usage.output_tokens * price.output) / 1e6;
}

/**
 * The run's cost so far, for the round line. Offline, nobody pays: the figure is what the real
 * model would have charged for the same tokens.
 */
export function soFar(dollars: number, offline: boolean): string {
  return `$${dollars.toFixed(4)} so far${offline ? ' (not charged)' : ''}`;
}
