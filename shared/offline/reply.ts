/**
 * How the offline demo model's task replies are made: thinking first (shown by the chapters on
 * stderr as `[thinking] …`), then its visible text, then at most one tool call; streamed in small
 * pieces at a pace a reader can follow. OFFLINE_PACE_MS is about how long one reply takes
 * (default 1000; 0: as fast as it can).
 */
import { showControls, type MessageReply, type ReplyBlock } from '../fake-anthropic.ts';
import { head } from '../text.ts';

const DEFAULT_PACE_MS = 1000;
const PIECE = 24; // characters per streamed delta, as the fake server cuts them

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

/** A step of a task: what it saw and will do (thinking), what it learned (text), the call. */
export function step(thinking: string, text: string, call?: ToolCall): MessageReply {
  const content: ReplyBlock[] = [{ type: 'thinking', thinking }];
  if (text) content.push({ type: 'text', text });
  if (call) content.push({ type: 'tool_use', name: call.name, input: call.input });
  return paced({ content });
}

/** At most `n` characters of `text`, cut between characters, and the cut marked: `abc…`. */
export const clip = (text: string, n: number) => (text.length > n ? `${head(text, n)}…` : text);

/** A plain answer, at once: the command language and what the model cannot do. */
export const say = (text: string): MessageReply => ({ content: [{ type: 'text', text }] });

/** The reply with every text and thinking block shown safe (the model writes no controls). */
export function showSafely(reply: MessageReply): MessageReply {
  const content = reply.content.map((block): ReplyBlock => {
    if (block.type === 'text') return { ...block, text: showControls(block.text) };
    if (block.type === 'thinking') return { ...block, thinking: showControls(block.thinking) };
    return block;
  });
  return { ...reply, content };
}

/** The reply with a delay between its streamed events, so that it takes about the pace. */
export function paced(reply: MessageReply): MessageReply {
  const setting = process.env.OFFLINE_PACE_MS;
  const pace = setting !== undefined && /^\d+$/.test(setting) ? Number(setting) : DEFAULT_PACE_MS;
  if (pace === 0) return reply;
  // message_start, message_delta, message_stop; each block a start, its deltas and a stop.
  const pieces = (s: string) => Math.ceil(s.length / PIECE);
  const events = reply.content.reduce((sum, block) => {
    if (block.type === 'thinking') return sum + 3 + pieces(block.thinking);
    if (block.type === 'text') return sum + 2 + pieces(block.text);
    return sum + 5;
  }, 3);
  return { ...reply, eventDelayMs: Math.max(1, Math.round(pace / events)) };
}
