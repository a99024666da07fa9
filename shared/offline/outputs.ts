/**
 * Reading what the tools returned, as the offline demo model does: a `node --test` run (its TAP
 * form, Node 20's default off a terminal, and its spec form, Node 22's and later), numbered lines
 * (`read_file`, `cat -n`, a sub-agent's report) and grep's hits. Each reader goes through the text
 * line by line, or with patterns that cannot backtrack: the text is another program's output, and
 * a pattern that tries every way to split a line spins forever on the wrong one (issue 32).
 */
import { relativePath } from './conversation.ts';
import { clip } from './reply.ts';

export interface Failing {
  name: string;
  file: string;
  line: number;
  expected?: string;
  actual?: string;
  /** What failed, when no values were compared: `test failed`, `Cannot read properties of …`. */
  error?: string;
  /** The test file failed as a whole (it did not load, or exited): node's error line, if any. */
  wholeFile?: { why: string };
}
export interface TestRun {
  total: number;
  pass: number;
  fail: number;
  failing?: Failing;
}

// A tool result's last line, when the bash tool killed the command: `[timed out after 120s;
// killed]`. Then whatever the tests printed before is no finished run, summary or not.
const KILLED = /^\[[^\]\n]*; killed\]$/;

/** A finished `node --test` run; undefined for anything else (one killed halfway, say). */
export function readTestRun(output: string, workdir?: string): TestRun | undefined {
  const lines = output.split('\n');
  if (KILLED.test(lines.findLast((line) => line.trim() !== '') ?? '')) return undefined;
  const summary = finalSummary(lines);
  if (!summary) return undefined;
  const { total, pass, fail } = summary;
  // TAP lists the failures before its summary; spec lists them again after it, on their own.
  const failing = summary.marker === '#'
    ? readTapFailing(lines.slice(0, summary.at), workdir)
    : readSpecFailing(lines.slice(summary.at), workdir);
  return { total, pass, fail, failing };
}

// Node's summary, each count on a line of its own at column 0, `duration_ms` last:
//   # tests 52      (spec: ℹ tests 52)
//   # suites 0
//   # pass 51 …
const SUMMARY_LINE = /^([#ℹ]) (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\d+)/;

/**
 * Node's own summary: the LAST block of summary lines. A test can print lines that look like one
 * (`# tests 53` in TAP, which shows a test's output as `# …` comments; as they are in spec), but
 * only before node's, which comes after every test has finished.
 */
function finalSummary(lines: string[]) {
  const at = lines.findLastIndex((line) => /^[#ℹ] tests \d+$/.test(line));
  if (at === -1) return undefined;
  const marker = lines[at][0];
  const counts = new Map<string, number>();
  for (const line of lines.slice(at, at + 8)) {
    const m = line.match(SUMMARY_LINE);
    if (!m || m[1] !== marker || counts.has(m[2])) break;
    counts.set(m[2], Number(m[3]));
  }
  const [total, pass, fail] = ['tests', 'pass', 'fail'].map((key) => counts.get(key));
  if (total === undefined || pass === undefined || fail === undefined) return undefined;
  return { at, marker, total, pass, fail };
}

const indentOf = (line: string) => line.length - line.trimStart().length;

// A name or a value, as the model quotes it in its notes and reads it back: at most this many
// characters (a test can be named with a whole file), cut between characters.
const QUOTED = 200;
function short(s: string): string;
function short(s: string | undefined): string | undefined;
function short(s: string | undefined): string | undefined {
  return s === undefined ? s : clip(s, QUOTED);
}

/**
 * The first failing test in TAP, with where it is and what it expected and got:
 *
 *   not ok 20 - gives the bulk discount from 10 items
 *     ---
 *     location: '/…/test/discounts.test.js:21:1'      (or `location: |-` and the path below it,
 *     expected: 9000                                   when the path holds a newline)
 *     actual: 10000
 *     ...
 */
function readTapFailing(lines: string[], workdir?: string): Failing | undefined {
  for (let i = 0; i < lines.length; i++) {
    const head = lines[i].match(/^( *)not ok \d+ - (.+)$/);
    if (!head) continue;
    const { fields, end } = readYaml(lines, i + 1, head[1].length + 2);
    const where = fields.get('location')?.replace(/^'(.*)'$/, '$1').match(/^([^]*):(\d+):\d+$/);
    i = end - 1;
    if (!where) continue;
    const failing: Failing = {
      name: short(head[2]),
      file: relativePath(where[1], workdir),
      line: Number(where[2]),
      expected: short(fields.get('expected')),
      actual: short(fields.get('actual')),
    };
    if (failing.expected !== undefined || failing.actual !== undefined) return failing;
    failing.error = short(fields.get('error')?.replace(/^'(.*)'$|^"(.*)"$/, '$1$2'));
    // A test file that did not load or exited: node names its test after the file, gives the
    // exit code, and shows what the file printed as `# …` lines above it.
    if (fields.has('exitCode')) {
      const printed = lines.slice(0, i).find((line) => /^# (?:[A-Z]\w*)?Error\b/.test(line));
      const why = short(printed?.slice(2)) ?? `exit code ${fields.get('exitCode')}`;
      failing.wholeFile = { why };
    }
    return failing;
  }
  return undefined;
}

/**
 * The fields of a TAP failure's YAML block, from line `from`: `key: value` at `indent` spaces,
 * a `|-` value on the lines below, indented further. Stops at `...` or a line indented less.
 */
function readYaml(lines: string[], from: number, indent: number) {
  const fields = new Map<string, string>();
  let i = from;
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '' || line.trim() === '---') continue;
    if (indentOf(line) < indent || line.trim() === '...') break;
    if (indentOf(line) > indent) continue; // inside a block value, read with its key
    // `key: value`, or `key:` with its value below (an object, say)
    const colon = line.endsWith(':') ? line.length - 1 : line.indexOf(': ', indent);
    if (colon === -1) continue;
    const key = line.slice(indent, colon);
    let value = line.slice(colon + 1).trim();
    if (['', '|-', '|', '>-'].includes(value)) {
      const block: string[] = [];
      while (lines[i + 1] !== undefined && indentOf(lines[i + 1]) > indent) {
        block.push(lines[++i].trim());
      }
      value = block.join('\n');
    }
    if (!fields.has(key)) fields.set(key, value);
  }
  return { fields, end: i };
}

/**
 * The first failing test in spec form, from the list node prints after its summary:
 *
 *   test at test/discounts.test.js:21:1
 *   ✖ gives the bulk discount from 10 items (1.7ms)
 *     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: …
 *       actual: 10000,
 *       expected: 9000,
 */
function readSpecFailing(lines: string[], workdir?: string): Failing | undefined {
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('test at ')) continue;
    // A path with a newline in it goes on on the next lines, up to its `:line:column`.
    let j = i;
    while (j < i + 5 && j + 1 < lines.length && !/:\d+:\d+$/.test(lines[j])) j++;
    const location = lines.slice(i, j + 1).join('\n').slice('test at '.length);
    const where = location.match(/^([^]*):(\d+):\d+$/);
    const title = lines[j + 1]?.match(/^✖ (.*) \([\d.]+m?s\)$/);
    if (!where || !title) continue;
    const file = relativePath(where[1], workdir);
    const failing: Failing = { name: short(title[1]), file, line: Number(where[2]) };
    // Its details follow it, indented, up to the next failure.
    const details: string[] = [];
    for (const line of lines.slice(j + 2, j + 62)) {
      if (line.startsWith('test at ')) break;
      details.push(line);
    }
    const value = (key: string) =>
      details.map((line) => line.trim()).find((line) => line.startsWith(`${key}: `))
        ?.slice(key.length + 2).replace(/,$/, '');
    [failing.expected, failing.actual] = [short(value('expected')), short(value('actual'))];
    if (failing.expected === undefined && failing.actual === undefined) {
      failing.error = short(details.find((line) => line.trim())?.trim());
    }
    return failing;
  }
  return undefined;
}

/** Numbered lines, as read_file and `cat -n` show them: `    12\tcode` → 12 → 'code'. */
export function readNumbered(output: string): Map<number, string> {
  const lines = new Map<number, string>();
  for (const m of output.matchAll(/^ *(\d+)\t(.*)$/gm)) lines.set(Number(m[1]), m[2]);
  return lines;
}

/**
 * A report or a listing that names its files: numbered lines after `In src/a.js:` belong to
 * src/a.js. (A sub-agent's report is written so.)
 */
export function readListings(output: string, workdir?: string): Map<string, Map<number, string>> {
  const files = new Map<string, Map<number, string>>();
  // [before, file, its text, file, its text, …]
  const parts = output.split(/^In (\S+?):$/m);
  for (let i = 1; i < parts.length; i += 2) {
    files.set(relativePath(parts[i], workdir), readNumbered(parts[i + 1] ?? ''));
  }
  return files;
}

export interface Hit {
  file: string;
  line: number;
  text: string;
}

/**
 * grep's hits. The grep tool writes `src/a.js:12: code` (one space after the colon); bash's
 * `grep -rnH` writes `src/a.js:12:code`, and `grep -n` on one file `12:code`.
 */
export function readHits(output: string, how: { tool: boolean; file?: string }, workdir?: string) {
  const hits: Hit[] = [];
  for (const row of output.split('\n')) {
    const m = row.match(/^(.+?):(\d+):(.*)$/) ?? row.match(/^()(\d+):(.*)$/);
    if (!m || (!m[1] && !how.file)) continue;
    const file = relativePath(m[1] || how.file!, workdir);
    hits.push({ file, line: Number(m[2]), text: how.tool ? m[3].replace(/^ /, '') : m[3] });
  }
  return hits;
}
