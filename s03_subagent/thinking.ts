/**
 * Thinking (new in s01): the 5.x models think before they act, and a reply brings that thinking
 * back as `thinking` blocks, each with a `signature`: the thinking itself, encrypted, and bound to
 * everything the model had been given when it wrote it. Its text is a summary, and only when asked
 * for (`display: "summarized"`); by default it is empty.
 *
 * Within a turn the blocks go back with the reply, exactly as they came: the model picks up its own
 * reasoning from one tool call to the next. When a turn is over they are dropped, all of them: the
 * API allows dropping the oldest, the newest or all (not a gap in between), and kept blocks would
 * be billed as input on every request. A block sent after anything before it changed is refused.
 */
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { ContentBlock, MessageParam } from '@anthropic-ai/sdk/resources';
import { DIM, paint } from '../shared/terminal.ts';

/** The request, asking for the thinking's summary, to show it. No field for other models. */
export function withThinking<P extends { model: string }>(params: P) {
  if (!/^claude-(sonnet|opus|haiku)-5/.test(params.model)) return params; // some would refuse one
  return { ...params, thinking: { type: 'adaptive', display: 'summarized' } as const };
}

function isThinking(block: { type: string }): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

/** Print the thinking as it streams: dimmed, on stderr, each block a paragraph of its own. */
export function showThinking(stream: MessageStream): void {
  let midLine = false; // the answer (on stdout) is in the middle of a line
  stream.on('text', (delta) => (midLine = !delta.endsWith('\n')));
  stream.on('thinking', (delta, snapshot) => {
    if (delta === snapshot) {
      if (midLine) process.stdout.write('\n'); // a new block: the answer's line ends first
      process.stderr.write(paint(DIM, '[thinking] '));
    }
    midLine = false;
    process.stderr.write(paint(DIM, delta));
  });
  stream.on('contentBlock', (block) => {
    if (block.type === 'thinking' && block.thinking) process.stderr.write('\n');
  });
}

/**
 * What to keep of a reply: `kept`, the blocks the loop keeps of what it `received` (thinking
 * aside), and the reply's thinking too if nothing else was left out or changed. A thinking block is
 * bound to all that came before it, and the API takes the latest reply's thinking whole or not at
 * all.
 */
export function thinkingKept<T>(received: ContentBlock[], kept: T[]): (T | ContentBlock)[] {
  const others: unknown[] = received.filter((block) => !isThinking(block));
  const whole = kept.length === others.length && kept.every((block, i) => block === others[i]);
  return whole ? received : kept;
}

/** The messages without their thinking blocks (and without a message that held nothing else). */
export function withoutThinking(messages: MessageParam[]): MessageParam[] {
  return messages.flatMap((message): MessageParam[] => {
    if (typeof message.content === 'string') return [message];
    if (!message.content.some(isThinking)) return [message];
    const content = message.content.filter((block) => !isThinking(block));
    return content.length > 0 ? [{ ...message, content } as MessageParam] : [];
  });
}

/** A new turn: drop the thinking of the turns before it, from the conversation itself. */
export function forgetThinking(messages: MessageParam[]): void {
  const kept = withoutThinking(messages);
  messages.splice(0, messages.length, ...kept);
}
