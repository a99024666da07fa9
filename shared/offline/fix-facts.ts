/**
 * What the offline demo model knows while it fixes the failing test (fix-the-test.ts), read back
 * at every step from the conversation: the tools' results, and its own notes. It writes down what
 * it learns in its visible text, in sentences it can read back ("The failing test is … at
 * test/a.test.js:21: expected 9000, got 10000."): an old tool result may have become a
 * placeholder (s05), or the start of the conversation a summary.
 */
import { addedBy, readRule, readRuleNote, type Rule } from './changelog.ts';
import type { Call, Request } from './conversation.ts';
import { callKind, fileOf, learn, testCommand } from './looking.ts';
import { readNumbered, readTestRun, type Failing } from './outputs.ts';
import { bodyOf, explain, importOf, newKnowledge, resolveImport } from './source.ts';
import { strictComparisons, type Knowledge } from './source.ts';
import { clip } from './reply.ts';
import type { Task } from './tasks.ts';

export interface Change {
  file: string;
  line: number;
  /** The line before and after (trimmed), and the comparison in it before and after. */
  before: string;
  after: string;
  from: string;
  to: string;
  why: string;
}

export interface Facts {
  seen: Knowledge;
  failing?: Failing;
  before?: { pass: number; total: number };
  after?: { pass: number; total: number; failing?: Failing };
  fn?: string;
  module?: string;
  /** Where the project states the rule the test checks (README.md); null: it does not say. */
  spec?: { file: string; line: number; text: string } | null;
  change?: Change;
  edited?: Change;
  failedEdits: number;
  /** Where an edit did not apply: read there again. */
  stale?: { file: string; line: number };
  /** A sub-agent's report came back (s03 on). */
  reported: boolean;
  /** A project rule to follow after a fix (s06: from AGENTS.md), and the line it added. */
  rule?: Rule;
  ruleLine?: string;
  /** The last call: what the next step was decided after; and whether you interrupted after it. */
  last?: Call;
  interrupted: boolean;
  /** The last call failed in a way that trying again would not mend: what the tool said. */
  failed?: string;
  /** The fact sentences its notes hold already. */
  written: Set<string>;
  /** How this project's tests run (looking.ts); unknown to a summary, which sees no folder. */
  testCommand?: string;
}

// ── Its notes ──────────────────────────────────────────────────────────────────────────────────

type Run = { pass: number; total: number };
export const notes = {
  before: (r: Run) => `Before any change, tests: ${r.pass} of ${r.total} pass.`,
  failing: (f: Failing) =>
    `The failing test is “${f.name}” at ${f.file}:${f.line}: expected ${f.expected}, ` +
    `got ${f.actual}.`,
  target: (fn: string, module: string) => `The test calls ${fn}, imported from ${module}.`,
  spec: (s: { file: string; line: number; text: string }) =>
    `${s.file}:${s.line} says: “${s.text.replace(/\.$/, '')}”.`,
  noSpec: (file: string) => `${file} says nothing about it.`,
  reported: (fn: string, file: string) => `The sub-agent reports ${fn} in ${file}.`,
  change: (c: Change) =>
    `The line to change is ${c.file}:${c.line}: \`${c.before}\` → \`${c.after}\` (${c.why}).`,
  edited: (c: Change) => `Edited ${c.file}:${c.line}: \`${c.before}\` → \`${c.after}\`.`,
  failedEdit: (file: string, n: number) => `The edit of ${file} did not apply (attempt ${n}).`,
  after: (r: Run) => `After the change, tests: ${r.pass} of ${r.total} pass.`,
};

// The sentences that hold a fact: what a summary keeps of the notes.
const FACTS = [
  /^Before any change, tests:/, /^The failing test is /, /^The test calls /,
  /^\S+\.md(?::\d+)? says\b/, /^The sub-agent reports /, /^The line to change is /, /^Edited /,
  /^The edit of /,
  /^After the change, tests:/, /^Added to /,
];

/** The facts in a text: its sentences (or its lines, in a summary) that are notes of the task. */
export const factSentences = (text: string): string[] =>
  text
    .split(/\n|(?<=\.)\s+(?=[A-Z])/)
    .map((s) => s.replace(/^\s*- /, '').trim())
    .filter((s) => FACTS.some((fact) => fact.test(s)));

const END = String.raw`\.(?=\s|$)`; // the end of a sentence
const NOTE = {
  target: new RegExp(String.raw`The test calls ([\w$]+), imported from (\S+?)${END}`),
  // (?<!\S): from where a word starts, not from every character of a long one
  spec: /(?<!\S)(\S+\.md):(\d+) says: “(.+?)”\./,
  noSpec: /(?<!\S)(\S+\.md) says nothing about it\./,
  failedEdit: /The edit of \S+ did not apply \(attempt (\d+)\)/g,
};

// How far after its opening words a note's sentence may go: a test's name and values are cut at
// 200 characters (outputs.ts), a line of code is rarely longer.
const WINDOW = 5_000;

/**
 * A note's sentence, read piece by piece: after `head`, up to the first of each delimiter in
 * turn, the last piece up to `end`; `file:line` pieces split. A pattern of several lazy groups
 * (`“(.+?)” at … expected (.+?), got (.+?)\.`) would try every way to split a text that
 * repeats its delimiters: 3.4 s for a 28 KB name, minutes for 100 KB.
 */
function readNote(text: string, head: string, delimiters: string[], end: RegExp) {
  for (let at = text.indexOf(head); at !== -1; at = text.indexOf(head, at + 1)) {
    let rest = text.slice(at + head.length, at + head.length + WINDOW).split('\n')[0];
    const pieces: string[] = [];
    for (const delimiter of delimiters) {
      const i = rest.indexOf(delimiter);
      if (i <= 0) break;
      pieces.push(rest.slice(0, i));
      rest = rest.slice(i + delimiter.length);
    }
    const stop = rest.search(end);
    if (pieces.length < delimiters.length || stop <= 0) continue;
    return [...pieces, rest.slice(0, stop)];
  }
  return undefined;
}

/** `src/a.js:19` → ['src/a.js', 19], as a note names a place. */
function place(piece: string): [string, number] | undefined {
  const colon = piece.lastIndexOf(':');
  const [file, line] = [piece.slice(0, colon), piece.slice(colon + 1)];
  return colon > 0 && /^\S+$/.test(file) && /^\d+$/.test(line) ? [file, Number(line)] : undefined;
}

const SENTENCE_END = new RegExp(END);

function readNotes(text: string, facts: Facts): void {
  for (const sentence of factSentences(text)) facts.written.add(sentence);
  const failingNote = readNote(text, 'The failing test is “', ['” at ', ': expected ', ', got '],
    SENTENCE_END);
  const failing = failingNote && place(failingNote[1]) && failingNote;
  if (failing) {
    const [name, where, expected, actual] = failing;
    const [file, line] = place(where)!;
    // Its note names the file as the workspace knows it (a summary's results may not).
    if (!facts.failing || facts.failing.name === name) {
      facts.failing = { name, file, line: Number(line), expected, actual };
    }
  }
  const count = (when: string) => text.match(new RegExp(`${when}, tests: (\\d+) of (\\d+) pass`));
  const before = count('Before any change');
  if (before) facts.before ??= { pass: Number(before[1]), total: Number(before[2]) };
  const after = count('After the change');
  if (after) facts.after = { pass: Number(after[1]), total: Number(after[2]) };
  const target = text.match(NOTE.target);
  if (target) [facts.fn, facts.module] = [target[1], target[2]];
  const spec = text.match(NOTE.spec);
  if (spec) facts.spec ??= { file: spec[1], line: Number(spec[2]), text: spec[3] };
  if (NOTE.noSpec.test(text)) facts.spec ??= null;
  const change = readNote(text, 'The line to change is ', [': `', '` → `', '` ('],
    /\)\.(?=\s|$)/);
  const changed = change && place(change[0]);
  if (change && changed) {
    const [, before, after, why] = change;
    facts.change = changeOf(changed[0], changed[1], before, after, why);
  }
  const edited = readNote(text, 'Edited ', [': `', '` → `'], /`\./);
  const where = edited && place(edited[0]);
  if (edited && where) {
    const why = facts.change?.line === where[1] ? facts.change.why : '';
    facts.edited = changeOf(where[0], where[1], edited[1], edited[2], why);
  }
  for (const m of text.matchAll(NOTE.failedEdit)) {
    facts.failedEdits = Math.max(facts.failedEdits, Number(m[1]));
  }
  if (/The sub-agent reports /.test(text)) facts.reported = true;
  facts.ruleLine ??= readRuleNote(text);
}

/** A change from its line before and after: the comparison in it is what differs. */
function changeOf(file: string, line: number, before: string, after: string, why: string): Change {
  const written = strictComparisons(file, line, before)[0]?.written ?? before;
  return { file, line, before, after, from: written, to: written.replace(/([<>])/, '$1='), why };
}

// ── Everything the task has seen, in order ─────────────────────────────────────────────────────

export function readFacts(task: Task, request: Pick<Request, 'system' | 'workdir'>): Facts {
  const facts: Facts = {
    seen: newKnowledge(),
    failedEdits: 0,
    reported: false,
    rule: readRule(request.system),
    written: new Set(),
    interrupted: false,
    testCommand: request.workdir === undefined ? undefined : testCommand(request.workdir),
  };
  for (const entry of task.entries) {
    if (entry.kind === 'note') readNotes(entry.text, facts);
    if (entry.kind === 'interrupted') facts.interrupted = true;
    if (entry.kind !== 'call') continue;
    [facts.last, facts.interrupted] = [entry.call, false];
    if (entry.call.result?.usable) learnFrom(entry.call, facts, request.workdir);
  }
  const { last } = facts;
  if (last?.result?.usable && !facts.interrupted) facts.failed = failureOf(last, request.workdir);
  deriveTarget(facts);
  deriveSpec(facts);
  deriveChange(facts);
  // The change already made (an edit interrupted after it ran): nothing is left to edit.
  const { change } = facts;
  const now = change && facts.seen.listings.get(change.file)?.get(change.line)?.trim();
  if (change && !facts.edited && now === change.after) facts.edited = change;
  return facts;
}

function learnFrom(call: Call, facts: Facts, workdir?: string): void {
  const { text, isError } = call.result!;
  const kind = callKind(call);
  if (kind === 'tests') {
    // The command it ran goes on being the one: a summary knows no folder to read it from.
    const command = String(call.input.command ?? '');
    if (command.startsWith('node --test')) facts.testCommand = command;
    const run = readTestRun(text, workdir);
    if (run && facts.edited) facts.after = run;
    if (!run || facts.edited) return;
    // The same test as a note names (a summary knows no working folder): keep the note's path.
    const same = run.failing && facts.failing?.name === run.failing.name;
    [facts.before, facts.failing] = [run, same ? facts.failing : (run.failing ?? facts.failing)];
    return;
  }
  if (kind === 'report' && !isError) facts.reported = true; // a failed sub-agent reports nothing
  // No README to read: the project does not state its rules, and the test is the rule.
  if (kind === 'read' && fileOf(call) === README && isMissing(call)) facts.spec ??= null;
  if (kind !== 'edit') return learn(call, facts.seen, workdir);
  const file = fileOf(call)!;
  if (facts.rule && file === facts.rule.file) {
    facts.ruleLine ??= addedBy(call, facts.rule);
    return;
  }
  // Only an old text that is not there means the file changed; EACCES and the like are reported.
  if (failureOf(call, workdir)) return;
  // edit_file answers with a diff, or an error; `sed -i … && sed -n` shows the line after.
  const { change } = facts;
  const shown = [...readNumbered(text).values()][0]?.trim();
  const applied = call.name === 'edit_file' ? !isError : shown === change?.after;
  if (applied && change) {
    facts.edited = change;
    facts.seen.listings.get(file)?.set(change.line, change.after);
    return;
  }
  // What was read of the file is stale: read it again before the next try.
  facts.failedEdits++;
  facts.seen.listings.delete(file);
  facts.stale = { file, line: change?.line ?? 1 };
  facts.change = undefined;
}

// ── What a failed call said ────────────────────────────────────────────────────────────────────

// Cut to this many characters where a failure is quoted: the rest is the tool's to show.
const QUOTED = 300;

/**
 * What the tool said, in its own words: an error result's message, or bash's output with the
 * status it ended with (`exit code 2`, `timed out after 120s; killed`).
 */
function toolSaid(text: string): string {
  const lines = text.trimEnd().split('\n');
  const status = lines.at(-1)?.match(/^\[([^\]]*)\]$/)?.[1];
  const first = (status === undefined ? lines : lines.slice(0, -1)).find((line) => line.trim());
  const words = first?.trim().replace(/^Error: /, '') ?? '';
  // A command the tool killed: why it was killed is what matters, not its first line.
  const said = status === undefined || /exit code 0\b/.test(status) ? words
    : /; killed$/.test(status) || !words ? status : `${words} (${status})`;
  return clip(said, QUOTED);
}

/** bash's status, from its last line: `[exit code 1]` → 1; a kill → NaN; no status: 0. */
function exitCode(text: string): number {
  const status = text.trimEnd().split('\n').at(-1)?.match(/^\[([^\]]*)\]$/)?.[1];
  if (status === undefined) return 0;
  return Number(status.match(/^exit code (\d+)\b/)?.[1] ?? NaN);
}

/** A read of a file that is not there (s01: cat says so; s02 on: ENOENT). */
const isMissing = (call: Call) =>
  callKind(call) === 'read' &&
  (call.result!.isError || exitCode(call.result!.text) !== 0 ||
    readNumbered(call.result!.text).size === 0) &&
  /no such file|ENOENT|not found|does not exist/i.test(call.result!.text);

/**
 * The words of a failure that ends the task: a test run that ended without node's summary (it
 * hung and was killed, say), a read or a search the tool refused, an edit that failed for another
 * reason than its old text. Undefined when the call did what it was asked, or failed in a way the
 * task handles itself: an edit whose old text is not there (the file changed: read it again), a
 * README that does not exist (the test is the rule), a search that found nothing.
 */
function failureOf(call: Call, workdir?: string): string | undefined {
  const { text, isError } = call.result!;
  const kind = callKind(call);
  const code = exitCode(text);
  if (kind === 'tests') return readTestRun(text, workdir) ? undefined : toolSaid(text);
  if (kind === 'read') {
    if (fileOf(call) === README && isMissing(call)) return undefined;
    const shown = readNumbered(text).size > 0;
    return isError || code !== 0 || !shown ? toolSaid(text) : undefined;
  }
  // grep's exit code 1: nothing found, an answer too.
  if (kind === 'search') return isError || !(code <= 1) ? toolSaid(text) : undefined;
  if (kind === 'edit') {
    if (isError) return /^Error: old_string not found\b/.test(text) ? undefined : toolSaid(text);
    return code !== 0 ? toolSaid(text) : undefined;
  }
  return kind === 'report' && isError ? toolSaid(text) : undefined;
}

// ── What follows from what was seen ────────────────────────────────────────────────────────────

/** The failing test's lines, from its `test(` to its closing `});`, if they have been read. */
export function testBlock(facts: Facts): Map<number, string> | undefined {
  const { file, line } = facts.failing!;
  const listing = facts.seen.listings.get(file);
  if (!listing?.has(line)) return undefined;
  const { end } = bodyOf(listing, line);
  if (end === undefined) return undefined;
  return new Map([...listing].filter(([n]) => n >= line && n <= end));
}

/** The function under test (the call in its assertion) and the module it is imported from. */
function deriveTarget(facts: Facts): void {
  const { failing, seen } = facts;
  if (!failing || facts.module) return;
  if (!facts.fn) {
    const block = testBlock(facts);
    if (!block) return;
    const calls = (line: string) =>
      [...line.matchAll(/(?<![.\w$])([a-zA-Z_$][\w$]*)\s*\(/g)].map((m) => m[1]);
    const ignore = new Set(['test', 'it', 'describe', 'assert', 'expect', 'function']);
    const lines = [...block.values()];
    // The call inside an assertion first: `assert.equal(lineTotal(1000, 10), 9000)`.
    const ordered = [...lines.filter((l) => /\bassert|expect\(/.test(l)), ...lines];
    facts.fn = ordered.flatMap(calls).find((name) => !ignore.has(name));
  }
  const spec = facts.fn && importOf(seen.listings.get(failing.file), facts.fn);
  if (spec) facts.module = resolveImport(failing.file, spec);
}

export const README = 'README.md';

/** The line of the README that states the rule: the test's number, and a word of its name. */
function deriveSpec(facts: Facts): void {
  const readme = facts.seen.listings.get(README);
  if (facts.spec !== undefined || !readme || !facts.failing) return;
  const number = boundaries(facts)[0];
  const words = facts.failing.name.toLowerCase().match(/[a-z]{4,}/g) ?? [];
  const states = (text: string) =>
    new RegExp(`(?<![\\w.])${number}(?![\\w.])`).test(text) &&
    words.some((word) => !['gives', 'from', 'with', 'when'].includes(word) &&
      text.toLowerCase().includes(word));
  const found = [...readme].sort(([a], [b]) => a - b).find(([, text]) => states(text));
  const text = found?.[1].replace(/^[-*\s]+/, '').replace(/\*\*/g, '').replace(/\.$/, '').trim();
  facts.spec = found ? { file: README, line: found[0], text: text! } : null;
}

/** The numbers the failing test is about: in its name first ("from 10 items"), then its code. */
export function boundaries(facts: Facts): number[] {
  const numbers = (s: string) =>
    [...s.matchAll(/(?<![\w.])\d+(?:\.\d+)?(?![\w.])/g)].map((m) => Number(m[0]));
  const inCode = [...(testBlock(facts)?.values() ?? [])].flatMap(numbers);
  return [...new Set([...numbers(facts.failing?.name ?? ''), ...inCode])];
}

/** The line to change: a strict comparison against a boundary the test names. */
function deriveChange(facts: Facts): void {
  if (facts.change || facts.edited || !facts.fn || !facts.module) return;
  const wanted = boundaries(facts);
  const explained = explain(facts.seen, facts.fn, facts.module, wanted);
  if (!('done' in explained)) return;
  const { comparisons, constants } = explained.done;
  for (const value of wanted) {
    const c = comparisons.find((c) => c.values.includes(value));
    if (!c) continue;
    const to = `${c.left} ${c.op}= ${c.right}`;
    const after = c.text.slice(0, c.at) + to + c.text.slice(c.at + c.written.length);
    const named = [c.left, c.right].find((side) => constants.has(side));
    const is = named ? ` (${named} is ${value})` : '';
    const why = `\`${c.written}\` leaves out exactly ${value}${is}, which the test counts in`;
    const [before, now] = [c.text.trim(), after.trim()];
    facts.change = { file: c.file, line: c.line, before, after: now, from: c.written, to, why };
    return;
  }
}
