/**
 * Traces written by hand, in the format shared/trace.ts records, for the inspector's tests
 * (inspect-page, inspect-reader, inspect-command), and readers of what a page holds.
 */
import { expect } from 'vitest';

export const HEADER = {
  type: 'trace', version: 1, chapter: 's05_context_compact', workspace: '/home/me/app',
  started: '2026-11-24T10:00:00.000Z',
};
export const T0 = Date.parse(HEADER.started);
const MODEL = 'claude-sonnet-5-5';
const TOOLS = [{ name: 'bash', description: 'Run a command.', input_schema: { type: 'object' } }];

export type Message = { role: 'user' | 'assistant'; content: any };
export const user = (content: any): Message => ({ role: 'user', content });
export const assistant = (content: any[]): Message => ({ role: 'assistant', content });
export const text = (t: string) => ({ type: 'text', text: t });
export const call = (id: string, command: string) =>
  ({ type: 'tool_use', id, name: 'bash', input: { command } });
export const result = (id: string, content: string) =>
  ({ type: 'tool_result', tool_use_id: id, content });
export const PLACEHOLDER =
  '[cleared to save context: the result of bash {"command":"seq 1 2000"}, ' +
  '8906 characters. Run it again if needed.]';
export const HI = [user('hi')];

interface ExchangeOptions {
  agent?: string;
  try?: number;
  status?: number;
  response?: unknown;
  usage?: Record<string, number>;
  model?: string;
  error?: string;
}

/** A POST /v1/messages exchange, sent at T0 + n seconds, answered with `reply`. */
export function exchange(
  n: number, messages: Message[], reply: any[], options: ExchangeOptions = {},
) {
  const usage = options.usage ?? {
    input_tokens: 100 * n, output_tokens: 20, cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const stop = reply.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const response = options.response !== undefined ? options.response : {
    id: `msg_${n}`, type: 'message', role: 'assistant', model: MODEL, content: reply,
    stop_reason: stop, usage,
  };
  const model = options.model ?? MODEL;
  return {
    type: 'exchange', n, agent: options.agent ?? 'main', method: 'POST', path: '/v1/messages',
    try: options.try ?? 1,
    request: { model, max_tokens: 8000, system: 'Be brief.', tools: TOOLS, messages, stream: true },
    status: options.status ?? 200, response, ...(options.error ? { error: options.error } : {}),
    times: { sent: T0 + n * 1000, firstByte: T0 + n * 1000 + 50, done: T0 + n * 1000 + 400 },
  };
}

export const compaction = (exchanges: number, why: string, more: object = {}) => ({
  type: 'event', event: 'compaction', at: T0 + exchanges * 1000 + 500, exchanges, agent: 'main',
  why, messages: 7, before: 12_000, after: 3_000, ...more,
});
export const jsonl = (...lines: unknown[]) =>
  `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

/**
 * A run of `turns` turns, each a prompt, a tool call with an output of `outputSize` characters
 * and an answer: two requests a turn, each sending the whole conversation so far, as chapters do.
 */
export function conversation(turns: number, outputSize = 2_000): unknown[] {
  const messages: Message[] = [];
  const lines: unknown[] = [HEADER];
  let n = 0;
  for (let k = 1; k <= turns; k++) {
    messages.push(user(`turn ${k}: count to ${k}`));
    const calling = [text(`Counting to ${k}.`), call(`toolu_${k}`, `seq 1 ${k}`)];
    lines.push(exchange(++n, [...messages], calling));
    messages.push(assistant(calling));
    const output = `${k} `.repeat(outputSize / 2).slice(0, outputSize);
    messages.push(user([result(`toolu_${k}`, output)]));
    const answer = [text(`Done: turn ${k}.`)];
    lines.push(exchange(++n, [...messages], answer));
    messages.push(assistant(answer));
  }
  return lines;
}

/** The data island page.js reads: each distinct value once, and a row per exchange. */
export function island(html: string): { values: any[]; rows: any[]; runs: number } {
  const found = /<script type="application\/json" id="trace-data">([^]*?)<\/script>/.exec(html);
  expect(found, 'the page must keep its data in <script type="application/json">').not.toBeNull();
  return JSON.parse(found![1]);
}
export const steps = (html: string) =>
  [...html.matchAll(/<a class="step[^"]*" data-n="(\d+)"/g)].map((m) => Number(m[1]));
export const count = (html: string, pattern: RegExp) => (html.match(pattern) ?? []).length;
/** The one line of the list for request `n`. */
export const line = (html: string, n: number) =>
  new RegExp(`<details class="request" id="r${n}"[^]*?</summary>`).exec(html)?.[0] ?? '';
