/**
 * The token estimate: one deterministic count of a prompt, for the usage numbers, count_tokens,
 * the context window and the prompt cache's prefixes.
 */
import { isObject } from './refusal.ts';

/**
 * One deterministic estimate, used for usage numbers, count_tokens and the context window. A
 * `cache_control` marker is not part of the prompt, so it is left out: moving a breakpoint does not
 * change the count (and a request without one counts exactly as before).
 */
export function estimateTokens(body: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  return Math.ceil(promptChars(body) / 4);
}

/** The characters the estimate counts: [system, messages, tools] as JSON, cache markers left out. */
export function promptChars(body: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  const p = unmarked(body);
  return JSON.stringify([p.system ?? '', p.messages ?? [], p.tools ?? []]).length;
}

/** A block without its own `cache_control` (and, for a tool_result, without its content blocks' ones). */
export function withoutMarker(block: unknown): unknown {
  if (!isObject(block)) return block;
  let out = block;
  if ('cache_control' in out) {
    const { cache_control: _, ...rest } = out;
    out = rest;
  }
  if (out.type === 'tool_result' && Array.isArray(out.content) && out.content.some((c: unknown) => isObject(c) && 'cache_control' in c)) {
    out = { ...out, content: out.content.map(withoutMarker) };
  }
  return out;
}

/** The prompt's three parts with every cache marker removed (the same objects where there was none). */
export function unmarked(body: { system?: unknown; messages?: unknown; tools?: unknown }) {
  const list = (v: unknown) => (Array.isArray(v) ? v.map(withoutMarker) : v);
  const messages = Array.isArray(body.messages)
    ? body.messages.map((m) => (isObject(m) && Array.isArray(m.content) ? { ...m, content: m.content.map(withoutMarker) } : m))
    : body.messages;
  return { system: list(body.system), messages, tools: list(body.tools) };
}
