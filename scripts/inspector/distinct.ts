/**
 * Each value once: what the requests sent, stored once however many requests sent it again, and
 * each message of a request compared with the same agent's previous request (resent, changed,
 * new).
 */
import { blocksOf, count, isPlaceholder, isThinking } from './requests.ts';
import { isObject } from './untrusted.ts';

/**
 * Distinct values, each stored once and named by its index: a message resent in 40 requests is
 * one entry, and each request lists indexes. Keyed by the value's JSON, so equal content is one
 * entry whichever line of the trace it was read from.
 */
export class Distinct {
  private readonly index = new Map<string, number>();
  readonly json: string[] = [];
  readonly values: unknown[] = [];

  add(value: unknown): number {
    const json = JSON.stringify(value) ?? 'null';
    let id = this.index.get(json);
    if (id === undefined) {
      id = this.json.push(json) - 1;
      this.values.push(value);
      this.index.set(json, id);
    }
    return id;
  }
}

/**
 * s06 marks the last block of the last message with cache_control: the same message, resent
 * later, has none. So the mark is taken off before the message is stored, and kept apart as
 * [message, block] positions, or every message would be stored twice.
 */
export function takeBreakpoints(
  message: unknown, at: number, breakpoints: [number, number][],
): unknown {
  if (!isObject(message) || !Array.isArray(message.content)) return message;
  if (!message.content.some((block) => block?.cache_control)) return message;
  const content = message.content.map((block, i) => {
    if (!block?.cache_control) return block;
    breakpoints.push([at, i]);
    const { cache_control: _, ...rest } = block;
    return rest;
  });
  return { ...message, content };
}

// A message as it may change when it is resent: thinking dropped, a tool result replaced.
function skeleton(message: unknown): string {
  const blocks = blocksOf(message)
    .filter((block) => !isThinking(block))
    .map((block) => (block.type === 'tool_result' ? ['result', block.tool_use_id] : block));
  return JSON.stringify([isObject(message) ? message.role : null, blocks]);
}

function howChanged(before: unknown, after: unknown): string {
  const reasons: string[] = [];
  if (count(after, isPlaceholder) > count(before, isPlaceholder)) reasons.push('placeholder');
  if (count(after, isThinking) < count(before, isThinking)) reasons.push('thinking dropped');
  return reasons.join(', ');
}

/**
 * Each message of a request against the previous request of the same agent: `r` sent again as
 * it was, `c` sent again changed (a placeholder, thinking dropped), `n` new. Matched as
 * multisets, not by position: after a compaction the kept messages move up behind the summary.
 * Exact matches first, so a prompt typed twice is once resent and once new, never "changed".
 */
export function compareWithPrevious(ids: number[], previous: number[], table: Distinct) {
  const left = new Map<number, number>(); // previous messages not matched yet, by id
  for (const id of previous) left.set(id, (left.get(id) ?? 0) + 1);
  const marks = ids.map((id): string => {
    const times = left.get(id) ?? 0;
    if (times === 0) return 'n';
    left.set(id, times - 1);
    return 'r';
  });
  const why: Record<number, string> = {};
  if (!marks.includes('n')) return { marks: marks.join(''), why };

  // What did not match exactly may be a message sent before, changed since.
  const loose = new Map<string, number[]>();
  for (const [id, times] of left) {
    const key = skeleton(table.values[id]);
    const same = loose.get(key) ?? [];
    for (let k = 0; k < times; k++) same.push(id);
    loose.set(key, same);
  }
  ids.forEach((id, i) => {
    if (marks[i] !== 'n') return;
    const before = loose.get(skeleton(table.values[id]))?.shift();
    if (before === undefined) return;
    marks[i] = 'c';
    const how = howChanged(table.values[before], table.values[id]);
    if (how) why[i] = how;
  });
  return { marks: marks.join(''), why };
}
