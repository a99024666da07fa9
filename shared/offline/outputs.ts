/**
 * Reading what the tools returned, as the offline demo model does: a `node --test` run (its TAP
 * form, Node 20's default off a terminal, and its spec form, Node 22's and later), numbered lines
 * (`read_file`, `cat -n`, a sub-agent's report) and grep's hits.
 */
import { relativePath } from './conversation.ts';

export interface Failing {
  name: string;
  file: string;
  line: number;
  expected?: string;
  actual?: string;
}
export interface TestRun {
  total: number;
  pass: number;
  fail: number;
  failing?: Failing;
}

/** A finished `node --test` run; undefined for anything else (one killed halfway, say). */
export function readTestRun(output: string, workdir?: string): TestRun | undefined {
  const count = (what: string) => output.match(new RegExp(`^[#ℹ] ${what} (\\d+)$`, 'm'))?.[1];
  const [total, pass, fail] = ['tests', 'pass', 'fail'].map(count);
  if (total === undefined || pass === undefined || fail === undefined) return undefined;
  const run = { total: Number(total), pass: Number(pass), fail: Number(fail) };
  return { ...run, failing: readFailing(output, workdir) };
}

/** The first failing test: its name, where it is, and what it expected and got. */
function readFailing(output: string, workdir?: string): Failing | undefined {
  // spec:  test at test/discounts.test.js:21:1
  //        ✖ gives the bulk discount from 10 items (1.7ms)
  const spec = output.match(/^test at (\S+?):(\d+):\d+\n✖ (.+?) \([\d.]+m?s\)$/m);
  // TAP:   not ok 12 - gives the bulk discount from 10 items
  //          ---
  //          location: '/…/test/discounts.test.js:21:1'
  const tap = output.match(/^ *not ok \d+ - (.+)\n(?: +.*\n)*? +location: '(.+?):(\d+):\d+'/m);
  if (!spec && !tap) return undefined;
  const [name, file, line] = spec ? [spec[3], spec[1], spec[2]] : [tap![1], tap![2], tap![3]];
  // Its details follow it: `expected: 9000` (TAP) or `expected: 9000,` (spec).
  const after = output.slice((spec ?? tap)!.index!).split('\n').slice(0, 60).join('\n');
  const value = (key: string) => after.match(new RegExp(`^ +${key}: (.+?),?$`, 'm'))?.[1];
  const failing = { name, file: relativePath(file, workdir), line: Number(line) };
  return { ...failing, expected: value('expected'), actual: value('actual') };
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
