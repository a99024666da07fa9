/**
 * The offline demo model's hands: the tool calls its tasks make to run the tests, read, search
 * and edit, each with the best tool the chapter offers (s01 has only bash: `cat -n`, `sed -n`,
 * `grep -n`, `sed -i`; from s02 read_file, grep and edit_file); and what it learns from each
 * result: the lines it has seen of each file, and the searches that found nothing.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Call } from './conversation.ts';
import { readHits, readListings, readNumbered } from './outputs.ts';
import type { ToolCall } from './reply.ts';
import { addLines, type Knowledge, type Need } from './source.ts';

// TAP puts each failure's location, expected and actual values on lines of their own, in every
// Node version (the default reporter differs: TAP off a terminal in Node 20, spec from Node 22).
export const TEST_COMMAND = 'node --test --test-reporter=tap';

/**
 * The command that runs a project's tests: its package.json's scripts.test when that is node's
 * own runner with a reporter this model can read the output of (`--test-reporter=spec`, or the
 * project's own: `--test-reporter=./reporter.mjs`); TEST_COMMAND for anything else (a bare
 * `node --test` too), or no package.json. A shortcut a real model does not have: this one reads the
 * file itself, from the folder the system prompt names, instead of asking for it with a tool.
 */
export function testCommand(workdir?: string): string {
  if (!workdir) return TEST_COMMAND;
  let script: unknown;
  try {
    const file = join(workdir, 'package.json');
    const stat = lstatSync(file);
    if (!stat.isFile() || stat.size > 100_000) return TEST_COMMAND;
    script = JSON.parse(readFileSync(file, 'utf8'))?.scripts?.test;
  } catch {
    return TEST_COMMAND; // none, or not JSON
  }
  if (typeof script !== 'string' || !/^node --test(?: [\w./=-]+)*$/.test(script)) {
    return TEST_COMMAND; // another runner (vitest, jest), or a shell line
  }
  // Without a reporter named, node's default differs from one Node to the next: TEST_COMMAND's
  // TAP is the same in each.
  if (!script.includes(' --test-reporter=')) return TEST_COMMAND;
  // A reporter whose output is TAP or spec, or the project's own (reporter.mjs prints TAP); not
  // dot, junit, lcov, a reporter named in the next word, or output to a file.
  const readable = (option: string) =>
    !option.startsWith('--test-reporter') || /^--test-reporter=(?:tap|spec|\.\/.+)$/.test(option);
  const unreadable = !script.split(' ').slice(2).every(readable);
  return unreadable ? TEST_COMMAND : script;
}

// Quote for bash only what needs it: `cat -n src/a.js` reads better than `cat -n 'src/a.js'`.
const quote = (s: string) => (/^[\w./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const bash = (command: string): ToolCall => ({ name: 'bash', input: { command } });

// The searches, written so that a result can say what was searched for (see `searchedFor`).
const PATTERNS = {
  definition: (name: string) => `function ${name}\\b|(const|let|var) ${name}\\b`,
  constant: (name: string) => `(const|let|var) ${name} *=`,
  import: (name: string) => `^import .*\\b${name}\\b`,
};
type Search = keyof typeof PATTERNS;

function searchedFor(pattern: string): string | undefined {
  const definition = pattern.match(/^function ([\w$]+)\\b\|/);
  if (definition) return `definition:${definition[1]}`;
  const constant = pattern.match(/^\(const\|let\|var\) ([\w$]+) \*=$/);
  if (constant) return `constant:${constant[1]}`;
  const imported = pattern.match(/^\^import \.\*\\b([\w$]+)\\b$/);
  return imported ? `import:${imported[1]}` : undefined;
}

export const runTests = (command = TEST_COMMAND): ToolCall => bash(command);

/** Lines `from`–`to` of a file (all of it without `to`), numbered. */
export function readLines(tools: Set<string>, file: string, from = 1, to?: number): ToolCall {
  if (tools.has('read_file')) {
    const page = to === undefined ? {} : { offset: from, limit: to - from + 1 };
    return { name: 'read_file', input: { file_path: file, ...page } };
  }
  if (to === undefined) return bash(`cat -n ${quote(file)}`);
  return bash(`cat -n ${quote(file)} | sed -n '${from},${to}p'`);
}

export function search(tools: Set<string>, what: Search, name: string, where = '.'): ToolCall {
  const pattern = PATTERNS[what](name);
  if (tools.has('grep')) return { name: 'grep', input: { pattern, path: where } };
  const skip = where === '.' ? ' --exclude-dir=node_modules' : '';
  return bash(`grep -rnHE${skip} ${quote(pattern)} ${quote(where)}`);
}

/** The call that looks up what `explain` (source.ts) says is missing. */
export function lookUp(tools: Set<string>, need: Need, seen: Knowledge): ToolCall {
  if (need.kind === 'definition') return search(tools, 'definition', need.name, need.where);
  if (need.kind === 'constant') return search(tools, 'constant', need.name, need.where);
  // Lines of a file: with bash, all of it; else a page around them. Having only a search hit
  // there, read the lines around it too: the constants and helpers above are often needed.
  if (!tools.has('read_file')) return readLines(tools, need.file);
  const known = [...(seen.listings.get(need.file)?.keys() ?? [])];
  const from = known.length <= 3 ? Math.max(1, need.from - 21) : need.from;
  return readLines(tools, need.file, from, from + 44);
}

/** Replace one line's text: edit_file, else `sed -i` on that line, showing the line after. */
export function editLine(tools: Set<string>, file: string, line: number, from: string, to: string) {
  if (tools.has('edit_file')) {
    return { name: 'edit_file', input: { file_path: file, old_string: from, new_string: to } };
  }
  // sed reads the old text as a pattern and the new one as a replacement: escape both.
  const pattern = from.replace(/[\\/.*[\]^$]/g, '\\$&');
  const replacement = to.replace(/[\\/&]/g, '\\$&');
  const sed = `sed -i ${quote(`${line}s/${pattern}/${replacement}/`)} ${quote(file)}`;
  return bash(`${sed} && cat -n ${quote(file)} | sed -n '${line}p'`);
}

/** What a call was, from its input. */
export function callKind(call: Call) {
  const command = String(call.input.command ?? '');
  if (call.name === 'bash' && /\bnode --test\b|\bnpm (?:run )?test\b/.test(command)) return 'tests';
  if (call.name === 'read_file' || (call.name === 'bash' && /^cat -n /.test(command))) {
    return 'read';
  }
  if (call.name === 'grep' || (call.name === 'bash' && /^grep /.test(command))) return 'search';
  const sed = call.name === 'bash' && /^sed -i /.test(command);
  if (call.name === 'edit_file' || sed) return 'edit';
  return call.name === 'agent' ? 'report' : 'other';
}

/** The file a read, a search or an edit was about, as its input names it. */
export function fileOf(call: Call): string | undefined {
  const path = call.input.file_path ?? call.input.path;
  if (typeof path === 'string') return path.replace(/^\.\//, '');
  const command = String(call.input.command ?? '');
  const words = command.split(' | ')[0].replace(/'[^']*'/g, (q) => q.replace(/\s/g, '\u0000'));
  const file = words.trim().split(/\s+/).at(-1)?.replace(/\u0000/g, ' ').replace(/^'|'$/g, '');
  return file?.replace(/^\.\//, '');
}

/** Learn from a read, a search or a report: the lines it shows; a search that found nothing. */
export function learn(call: Call, seen: Knowledge, workdir?: string): void {
  const text = call.result!.text;
  const kind = callKind(call);
  if (kind === 'read') addLines(seen, fileOf(call)!, readNumbered(text));
  if (kind === 'report') {
    for (const [file, lines] of readListings(text, workdir)) addLines(seen, file, lines);
  }
  if (kind !== 'search') return;
  const tool = call.name === 'grep';
  const pattern = tool ? String(call.input.pattern) : patternOf(String(call.input.command));
  const hits = readHits(text, { tool, file: fileOf(call) }, workdir);
  for (const hit of hits) addLines(seen, hit.file, new Map([[hit.line, hit.text]]));
  const key = searchedFor(pattern);
  if (key && hits.length === 0) seen.missing.add(key);
}

/** The pattern of a `grep … 'pattern' where` command. */
const patternOf = (command: string) =>
  command.match(/'((?:[^']|'\\'')*)'/)?.[1].replace(/'\\''/g, "'") ?? command.split(/\s+/).at(-2)!;
