/**
 * Prompt caching: every `cache_control` of a request checked as the API checks it (the 400s for a
 * bad one, or for too many), and what the cache reads and writes for a request it serves.
 */
import { createHash } from 'node:crypto';
import { bad, isObject } from './refusal.ts';
import { promptChars, unmarked } from './tokens.ts';

// The rules, from https://platform.claude.com/docs/en/build-with-claude/prompt-caching (summarised in
// anthropic-api-notes.md section 6):
//   - `cache_control: { type: 'ephemeral', ttl?: '5m' | '1h' }` marks a breakpoint. It may sit on a tool
//     definition, a system text block, or a message content block (a tool_result's own content blocks
//     included); a top-level `cache_control` puts one on the last block ("automatic caching").
//   - The cached prefix is everything in the order tools → system → messages up to and including the
//     marked block. Here that is a flat list of blocks: each tool, each system block, each message
//     content block (a string system prompt or string message content is one block). A prefix is
//     identified by the model and its blocks, markers left out; tool_choice and thinking are part of
//     every message block's identity ("changing them invalidates the messages cache").
//   - At most 4 breakpoints per request. A 1-hour one must not come after a 5-minute one.
//   - On each request, for each breakpoint, the API looks for a cache entry at that block boundary and
//     at the earlier ones, up to 20 blocks before it. The longest one found is read; from there to the
//     breakpoint is written, and becomes an entry.
//   - An entry lives 5 minutes (or 1 hour with ttl '1h'), and each hit starts its time again.
//   - A prefix shorter than the model's minimum cacheable length is not cached, and no error is raised.
//   - usage: `input_tokens` is what comes after the last breakpoint, `cache_creation_input_tokens` what
//     was written, `cache_read_input_tokens` what was read; the three add up to the whole prompt.
// The refusals' wording is the API's own, as its 400s are quoted in bug reports:
//   "A maximum of 4 blocks with cache_control may be provided. Found 5."
//     (https://github.com/tghamm/Anthropic.SDK/issues/50, with the full error envelope)
//   "messages.0.content.4.cache_control.ttl: a ttl='1h' cache_control block must not come after a
//     ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`,
//     `system`, `messages`." (https://github.com/cnighswonger/claude-code-cache-fix/issues/44,
//     https://github.com/kristianvast/hermes-claude-auth/issues/31 for a `system.1…` path)
// The messages for a bad type or ttl are not quoted anywhere found: they follow the validator's
// wording for a literal that does not match (as for `tools.0.custom.input_schema.type` in
// validation.ts).

type Ttl = '5m' | '1h';
const TTL_MS: Record<Ttl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };
const MAX_BREAKPOINTS = 4;
const LOOKBACK_BLOCKS = 20;
const TTL_ORDER =
  "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. " +
  'Note that blocks are processed in the following order: `tools`, `system`, `messages`.';

/** A `cache_control` as found in the request, before it is checked. */
interface Marker {
  value: unknown;
  /** Where it sits, as the API names it in errors: 'system.1', 'messages.3.content.0', '' for top-level. */
  path: string;
}

/** One block of the prompt, in the order tools → system → messages. */
interface PromptBlock {
  /** Its share of the characters the token estimate counts. */
  chars: number;
  /** What identifies it in a cache key: its content without markers, and where it sits. */
  id: unknown;
  markers: Marker[];
}

interface Prompt {
  /** Characters counted before the first block: brackets, commas, placeholders for absent parts. */
  front: number;
  blocks: PromptBlock[];
  /** A top-level `cache_control`: a breakpoint on the last block. */
  automatic?: Marker;
}

interface Breakpoint {
  /** The number of blocks in its prefix: 1 is the first block. */
  blocks: number;
  ttl: Ttl;
}

/**
 * The prompt as a flat list of blocks, with the estimate's characters shared among them so that the
 * blocks and `front` add up to exactly what estimateTokens counts. Call on a validated body.
 */
export function promptOf(body: any): Prompt {
  const p = unmarked(body);
  const blocks: PromptBlock[] = [];
  const len = (v: unknown) => JSON.stringify(v).length;
  // In a JSON list each item brings its own characters and the comma (or the closing bracket) after
  // it; the first one also brings the opening bracket.
  const share = (item: unknown, i: number) => len(item) + 1 + (i === 0 ? 1 : 0);
  const markersOf = (block: any, path: string): Marker[] => {
    const own = isObject(block) && block.cache_control != null ? [{ value: block.cache_control, path }] : [];
    const inner = isObject(block) && block.type === 'tool_result' && Array.isArray(block.content) ? block.content : [];
    const nested = inner.flatMap((c: any, k: number) =>
      isObject(c) && c.cache_control != null ? [{ value: c.cache_control, path: `${path}.content.${k}` }] : [],
    );
    return [...own, ...nested];
  };

  (Array.isArray(p.tools) ? p.tools : []).forEach((tool, i) => {
    blocks.push({ chars: share(tool, i), id: { tool }, markers: markersOf(body.tools[i], `tools.${i}`) });
  });
  if (typeof p.system === 'string') blocks.push({ chars: len(p.system), id: { system: p.system }, markers: [] });
  if (Array.isArray(p.system)) {
    p.system.forEach((block, j) => {
      blocks.push({ chars: share(block, j), id: { system: block }, markers: markersOf(body.system[j], `system.${j}`) });
    });
  }
  // Changing tool_choice or thinking invalidates the cached messages (not the tools or system).
  const settings = { tool_choice: body.tool_choice ?? null, thinking: body.thinking ?? null };
  (p.messages as any[]).forEach((m, i) => {
    const chars = share(m, i); // the whole message, wrapper included
    if (typeof m.content === 'string') {
      blocks.push({ chars, id: { settings, message: i, role: m.role, content: m.content }, markers: [] });
      return;
    }
    const own = (m.content as unknown[]).map((b) => len(b) + 1);
    const wrapper = chars - own.reduce((a, b) => a + b, 0); // {"role":…,"content":[ … ]}, on the first block
    (m.content as unknown[]).forEach((block, j) => {
      blocks.push({
        chars: own[j] + (j === 0 ? wrapper : 0),
        id: { settings, message: i, role: m.role, block },
        markers: markersOf(body.messages[i].content[j], `messages.${i}.content.${j}`),
      });
    });
  });
  const front = promptChars(body) - blocks.reduce((a, b) => a + b.chars, 0);
  const automatic = body.cache_control != null ? { value: body.cache_control, path: '' } : undefined;
  return { front, blocks, automatic };
}

/** Checks every `cache_control` of the request the way the API does; returns the breakpoints. */
export function checkCacheControl(prompt: Prompt): Breakpoint[] {
  const found: (Breakpoint & { path: string })[] = [];
  const take = ({ value, path }: Marker, blocks: number) => {
    const at = path ? `${path}.cache_control` : 'cache_control';
    if (!isObject(value)) throw bad(`${at}: Input should be a valid dictionary`);
    if (value.type === undefined) throw bad(`${at}.type: Field required`);
    if (value.type !== 'ephemeral') throw bad(`${at}.type: Input should be 'ephemeral'`);
    if (value.ttl !== undefined && value.ttl !== '5m' && value.ttl !== '1h') throw bad(`${at}.ttl: Input should be '5m' or '1h'`);
    const extra = Object.keys(value).find((k) => k !== 'type' && k !== 'ttl');
    if (extra) throw bad(`${at}.${extra}: Extra inputs are not permitted`);
    found.push({ blocks, ttl: value.ttl ?? '5m', path: at });
  };
  prompt.blocks.forEach((block, k) => block.markers.forEach((marker) => take(marker, k + 1)));
  // Automatic caching takes a slot of its own, unless the last block is marked already (unconfirmed).
  const last = prompt.blocks.at(-1);
  if (prompt.automatic && last) take(prompt.automatic, prompt.blocks.length);
  const slots = found.length - (prompt.automatic && last && last.markers.length > 0 ? 1 : 0);
  if (slots > MAX_BREAKPOINTS) {
    throw bad(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${slots}.`);
  }
  let fiveMinutes = false;
  for (const b of found) {
    if (b.ttl === '1h' && fiveMinutes) throw bad(`${b.path}.ttl: ${TTL_ORDER}`);
    if (b.ttl === '5m') fiveMinutes = true;
  }
  return found.map(({ blocks, ttl }) => ({ blocks, ttl }));
}

export interface CacheEntry {
  expiresAt: number;
  ttlMs: number;
}

/** A JSON text with every object's keys sorted: the same content always gives the same key. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * What the cache does with one request: reads the longest live prefix it finds, writes from there to
 * the last cacheable breakpoint, stores (or refreshes) an entry per cacheable breakpoint. Returns the
 * usage numbers; `input_tokens` is the rest of the estimate.
 */
export function applyCache(
  cache: Map<string, CacheEntry>,
  model: string,
  prompt: Prompt,
  marks: Breakpoint[],
  now: number,
  minTokens: number,
) {
  const none = { read: 0, written: { '5m': 0, '1h': 0 } as Record<Ttl, number> };
  if (marks.length === 0) return none;
  for (const [key, entry] of cache) if (entry.expiresAt <= now) cache.delete(key);

  // tokens[k]: the estimate of the prefix made of the first k blocks; keys[k]: its cache key.
  const tokens = [0];
  const keys = [createHash('sha256').update(`model ${model}`).digest('hex')];
  let chars = prompt.front;
  for (const block of prompt.blocks) {
    chars += block.chars;
    tokens.push(Math.ceil(chars / 4));
    keys.push(createHash('sha256').update(keys.at(-1)! + canonical(block.id)).digest('hex'));
  }

  // One breakpoint per position (a block and a tool_result's inner block share one); 1h wins.
  const byPosition = new Map<number, Ttl>();
  for (const m of marks) if (byPosition.get(m.blocks) !== '1h') byPosition.set(m.blocks, m.ttl);
  const cacheable = [...byPosition]
    .map(([blocks, ttl]) => ({ blocks, ttl }))
    .filter((b) => tokens[b.blocks] >= minTokens)
    .sort((a, b) => a.blocks - b.blocks);

  // Reads: for each breakpoint, the longest live entry at it or at most LOOKBACK_BLOCKS boundaries before.
  let readUpTo = 0;
  const hits: CacheEntry[] = [];
  for (const b of cacheable) {
    for (let k = b.blocks; k >= Math.max(1, b.blocks - LOOKBACK_BLOCKS); k--) {
      const entry = cache.get(keys[k]);
      if (entry && entry.expiresAt > now) {
        hits.push(entry);
        readUpTo = Math.max(readUpTo, k);
        break;
      }
    }
  }
  // Writes: each breakpoint past what was read, the span since the previous one, at its own TTL.
  const written: Record<Ttl, number> = { '5m': 0, '1h': 0 };
  let from = readUpTo;
  for (const b of cacheable) {
    if (b.blocks <= from) continue;
    written[b.ttl] += tokens[b.blocks] - tokens[from];
    from = b.blocks;
  }
  // A hit starts the entry's time again; every cacheable breakpoint leaves a live entry behind.
  for (const entry of hits) entry.expiresAt = now + entry.ttlMs;
  for (const b of cacheable) {
    const entry = cache.get(keys[b.blocks]);
    const ttlMs = Math.max(TTL_MS[b.ttl], entry && entry.expiresAt > now ? entry.ttlMs : 0);
    cache.set(keys[b.blocks], { ttlMs, expiresAt: now + ttlMs });
  }
  return { read: tokens[readUpTo], written };
}
