/**
 * Reading JavaScript the way the offline demo model needs to: where a function is defined, its
 * body, what it calls in its conditions, the constants it compares with. All from numbered lines
 * it has seen (a listing: line number → text), which may have gaps: then it says what it is
 * missing, and the task looks that up with a tool.
 */
import { posix } from 'node:path';

export type Listing = Map<number, string>;

/** What the model has read so far: the lines of each file, and the look-ups that found nothing. */
export interface Knowledge {
  listings: Map<string, Listing>;
  /** `definition:name` or `constant:name`: searched for, not there. */
  missing: Set<string>;
}

export const newKnowledge = (): Knowledge => ({ listings: new Map(), missing: new Set() });

export function addLines(k: Knowledge, file: string, lines: Listing): void {
  const listing = k.listings.get(file) ?? new Map();
  for (const [n, text] of lines) listing.set(n, text);
  k.listings.set(file, listing);
}

const escape = (s: string) => s.replace(/[$]/g, '\\$');
const definitionPattern = (name: string) =>
  new RegExp(
    `(?:\\bfunction\\s+${escape(name)}\\s*\\(|\\b(?:const|let|var)\\s+${escape(name)}\\s*=)`,
  );

/** The line that defines `name` in this listing, if it shows one. */
export function definitionLine(listing: Listing | undefined, name: string): number | undefined {
  for (const [n, text] of [...(listing ?? [])].sort(([a], [b]) => a - b)) {
    if (definitionPattern(name).test(text)) return n;
  }
  return undefined;
}

// Braces in strings and comments are not code.
const codeOf = (text: string) =>
  text.replace(/\/\/.*$/, '').replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');

/** What starts at `start`, up to its closing brace; `missing`: the first line not seen. */
export function bodyOf(listing: Listing, start: number) {
  let depth = 0;
  let opened = false;
  for (let n = start; ; n++) {
    const text = listing.get(n);
    if (text === undefined) return { end: undefined, missing: n };
    for (const ch of codeOf(text)) {
      if (ch === '{') depth++;
      if (ch === '}') depth--;
      opened ||= ch === '{';
    }
    const closed = opened ? depth <= 0 : /;\s*$/.test(text);
    if (closed) return { end: n, missing: undefined };
    if (n - start > 200) return { end: n, missing: undefined }; // not a function we can read
  }
}

const lines = (listing: Listing, from: number, to: number): [number, string][] =>
  [...listing].filter(([n]) => n >= from && n <= to).sort(([a], [b]) => a - b);

const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'return', 'function', 'typeof', 'catch']);

/** The functions called in a line's condition (`if (…)`, `while (…)`, `… ? … :`), by name. */
export function conditionCalls(text: string): string[] {
  const code = codeOf(text);
  // From the first `if (` or `while (` to the last `)`: one slice, not a pattern that tries every
  // `if (` against every `)` (quadratic on a long line).
  const head = /\b(?:if|while)\s*\(/.exec(code);
  const close = code.lastIndexOf(')');
  const conditions = head && close >= head.index + head[0].length
    ? [code.slice(head.index + head[0].length, close)]
    : [];
  const ternary = code.match(/=\s*([^=?]+)\?/)?.[1];
  const names = [...conditions, ternary ?? ''].flatMap((c) =>
    [...c.matchAll(/(?<![.\w$])([a-z_$][\w$]*)\s*\(/g)].map((m) => m[1]),
  );
  return names.filter((name) => !KEYWORDS.has(name));
}

/** `export const BULK_MIN_QUANTITY = 10;` → BULK_MIN_QUANTITY → 10, with where it is. */
export function constantsIn(listing: Listing, file: string) {
  const found = new Map<string, { value: number; file: string; line: number }>();
  for (const [line, text] of listing) {
    const m = text.match(/\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(-?\d+(?:\.\d+)?)\s*;/);
    if (m) found.set(m[1], { value: Number(m[2]), file, line });
  }
  return found;
}

export interface Comparison {
  file: string;
  line: number;
  text: string;
  /** The comparison as written, `quantity > BULK_MIN_QUANTITY`, and where it starts in the line. */
  written: string;
  at: number;
  left: string;
  op: '<' | '>';
  right: string;
}

/** The strict comparisons (< and >) in a line: the kind that leaves its boundary out. */
export function strictComparisons(file: string, line: number, text: string): Comparison[] {
  const code = codeOf(text);
  const found: Comparison[] = [];
  // Each side starts where a name starts: begun inside one, a long name is scanned again and
  // again (quadratic).
  for (const m of code.matchAll(/(?<![\w$.])([\w$.]+)(\s*)([<>])(?![=<>])(\s*)([\w$.]+)/g)) {
    const before = code[m.index! + m[1].length + m[2].length - 1];
    if (before === '=' || before === '-') continue; // =>, ->
    const [written, left, , op, , right] = m;
    found.push({ file, line, text, written, at: m.index!, left, op: op as '<' | '>', right });
  }
  return found;
}

/** The module a listing imports `name` from (`import { a, name } from './x.js'`), as written. */
export function importOf(listing: Listing | undefined, name: string): string | undefined {
  for (const text of listing?.values() ?? []) {
    const m = text.match(/^\s*import\s+(?:\{([^}]*)\}|([\w$]+))\s+from\s+['"]([^'"]+)['"]/);
    if (!m) continue;
    const names = (m[1] ?? m[2]).split(',').map((part) => part.trim().split(/\s+as\s+/).at(-1));
    if (names.includes(name)) return m[3];
  }
  return undefined;
}

/** `../src/discounts.js` imported from test/discounts.test.js → src/discounts.js. */
export const resolveImport = (from: string, spec: string) =>
  spec.startsWith('.') ? posix.normalize(posix.join(posix.dirname(from), spec)) : spec;

export type Need =
  | { kind: 'definition'; name: string; where?: string }
  | { kind: 'lines'; file: string; from: number }
  | { kind: 'constant'; name: string; where: string };

export interface Explained {
  name: string;
  file: string;
  line: number;
  /** The function and the ones it calls in its conditions, in the same file: name → lines. */
  bodies: { name: string; file: string; from: number; to: number }[];
  comparisons: (Comparison & { values: (number | undefined)[] })[];
  constants: Map<string, { value: number; file: string; line: number }>;
  /** The lines read of its file. */
  lines: Listing;
}

/**
 * Explain `name` from what has been read: where it is defined, its body and the functions its
 * conditions call, and the strict comparisons in them with the values they compare against.
 * Or the first thing missing to do that, or `not found` once it was searched for in vain.
 * `wanted`: stop asking for constants once a comparison with one of these values is found.
 */
export function explain(k: Knowledge, name: string, hint?: string, wanted: number[] = []):
  | { need: Need }
  | { done: Explained }
  | { notFound: true } {
  const files = [...k.listings.keys()].sort((a, b) => Number(b === hint) - Number(a === hint));
  const file = files.find((f) => definitionLine(k.listings.get(f), name) !== undefined);
  if (!file) {
    if (k.missing.has(`definition:${name}`)) return { notFound: true };
    return { need: { kind: 'definition', name, where: hint } };
  }
  const listing = k.listings.get(file)!;
  const line = definitionLine(listing, name)!;

  // The function, and what its conditions call that is defined in the same file.
  const bodies: Explained['bodies'] = [];
  const queue = [name];
  for (let fn = queue.shift(); fn !== undefined; fn = queue.shift()) {
    const start = definitionLine(listing, fn)!;
    const { end, missing } = bodyOf(listing, start);
    if (missing !== undefined) return { need: { kind: 'lines', file, from: missing } };
    bodies.push({ name: fn, file, from: start, to: end! });
    for (const [, text] of lines(listing, start, end!)) {
      for (const called of conditionCalls(text)) {
        const known = called === fn || bodies.some((b) => b.name === called);
        if (known || queue.includes(called)) continue;
        if (definitionLine(listing, called) !== undefined) queue.push(called);
        else if (!importOf(listing, called) && !k.missing.has(`definition:${called}`)) {
          return { need: { kind: 'definition', name: called, where: file } };
        }
      }
    }
  }

  // The strict comparisons in them, and the value each side stands for.
  const constants = new Map([...k.listings].flatMap(([f, l]) => [...constantsIn(l, f)]));
  const valueOf = (side: string) =>
    /^-?\d+(\.\d+)?$/.test(side) ? Number(side) : constants.get(side)?.value;
  const comparisons = bodies
    .flatMap((b) => lines(listing, b.from, b.to).flatMap(([n, t]) => strictComparisons(file, n, t)))
    .map((c) => ({ ...c, values: [valueOf(c.left), valueOf(c.right)] }));
  const isWanted = (v: number | undefined) => v !== undefined && wanted.includes(v);
  const found = comparisons.some((c) => c.values.some(isWanted));
  const unknown = comparisons
    .flatMap((c) => [c.left, c.right])
    .find((side) => /^[A-Z][A-Z0-9_]*$/.test(side) && !constants.has(side));
  if (!found && unknown && !k.missing.has(`constant:${unknown}`)) {
    return { need: { kind: 'constant', name: unknown, where: posix.dirname(file) } };
  }
  return { done: { name, file, line, bodies, comparisons, constants, lines: listing } };
}
