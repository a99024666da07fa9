/**
 * The search tools (new in s02): glob lists files, grep searches their contents. Both stay inside
 * the workspace, and every walk and every match has a bound: a pattern cannot hang the agent.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { createContext, Script } from 'node:vm';
import { glob } from 'tinyglobby';
import { head } from '../shared/text.ts';
import { isBinary, MAX_LINE, MAX_READ, readRegularFile } from './files.ts';
import { safePath, WORKDIR } from './workspace.ts';

const SKIP = ['**/node_modules/**', '**/.git/**']; // never worth searching, often huge
const WALK_SECONDS = 10; // glob and grep give up listing files after this long…
const MAX_FILES = 20_000; // …or when more files match: each would be stat'ed (glob) or read (grep)
const REGEX_SECONDS = 3; // grep's matching time in all; (a+)+$ on 40 characters would take hours

/** Files under `path` matching `pattern`, inside the workspace, as paths relative to it. */
async function findFiles(pattern: string, path = '.'): Promise<string[]> {
  const base = safePath(path);
  // Refuse before walking: for "/**" or "../**" the walk itself is the problem, whatever is
  // filtered out later.
  if (isAbsolute(pattern) || /(^|[\\/{,(|])\.\.($|[\\/},)|])/.test(pattern)) {
    const hint = 'use a relative pattern without "..", and path to pick the folder';
    throw new Error(`the pattern ${pattern} could reach outside the workspace; ${hint}`);
  }
  // Symlinks are not followed (a link to / would walk the whole disk); the walk has a time limit.
  const signal = AbortSignal.timeout(WALK_SECONDS * 1000);
  const walk = { ignore: SKIP, dot: true, absolute: true, followSymbolicLinks: false, signal };
  const found = await glob(pattern, { cwd: base, ...walk });
  const narrow = 'narrow the pattern (src/**/*.ts, not **/*) or the path';
  if (signal.aborted) {
    throw new Error(`listing files took longer than ${WALK_SECONDS} s; ${narrow}`);
  }
  if (found.length > MAX_FILES) {
    throw new Error(`${found.length} files match ${pattern}, more than ${MAX_FILES}; ${narrow}`);
  }
  // Check every hit anyway: a folder could be swapped for a link while we walk.
  const inside = (file: string) => {
    try {
      return Boolean(safePath(file));
    } catch {
      return false;
    }
  };
  return found.filter(inside).map((file) => relative(WORKDIR, file));
}

export async function globTool(input: { pattern: string; path?: string }): Promise<string> {
  const files = await findFiles(input.pattern, input.path);
  // Newest first: the file you just touched is usually the one you want.
  const times = await Promise.all(files.map(async (f) => [f, (await stat(f)).mtimeMs] as const));
  const mtimes = new Map(times);
  files.sort((a, b) => mtimes.get(b)! - mtimes.get(a)! || a.localeCompare(b));
  if (files.length === 0) return `No files match ${input.pattern}`;
  let more = '';
  if (files.length > 100) more = `\n(${files.length - 100} more not shown; narrow the pattern)`;
  return files.slice(0, 100).join('\n') + more;
}

// A regex like (a+)+$ can backtrack for hours, and plain JavaScript cannot interrupt it. Code
// started through node:vm with a timeout can be stopped mid-way, regex included. The job itself is
// our own code.
const sandbox = createContext({});
const callJob = new Script('job()');
function runWithTimeout<T>(ms: number, job: () => T): T {
  sandbox.job = job;
  return callJob.runInContext(sandbox, { timeout: Math.max(1, Math.ceil(ms)) });
}

interface GrepInput {
  pattern: string;
  path?: string;
  include?: string;
}

export async function grepTool(input: GrepInput): Promise<string> {
  const regex = new RegExp(input.pattern); // an invalid pattern throws; the model gets the message
  const include = input.include ?? '**/*';
  const target = safePath(input.path ?? '.');
  // "*.ts" should mean any .ts file below the folder, as in grep --include and ripgrep -g.
  const files = (await stat(target)).isDirectory()
    ? await findFiles(include.includes('/') ? include : `**/${include}`, input.path)
    : [relative(WORKDIR, target)];
  const matches: string[] = [];
  let tooLarge = 0; // files over MAX_READ, not searched
  let msLeft = REGEX_SECONDS * 1000; // matching time left, for all files together
  // 20 files at a time: read side by side, then matched in one timed call (each call costs a
  // thread, ~0.1 ms).
  const sorted = files.sort();
  for (let k = 0; k < sorted.length; k += 20) {
    const batch = sorted.slice(k, k + 20);
    const contents = await Promise.all(batch.map((file) => readRegularFile(file, file)));
    const texts: { file: string; lines: string[] }[] = [];
    contents.forEach((bytes, j) => {
      if (!bytes) tooLarge++;
      else if (!isBinary(bytes)) texts.push({ file: batch[j], lines: String(bytes).split('\n') });
    });
    const started = performance.now();
    try {
      runWithTimeout(msLeft, () => {
        for (const { file, lines } of texts) {
          lines.forEach((line, i) => {
            if (regex.test(line)) matches.push(`${file}:${i + 1}: ${head(line, MAX_LINE)}`);
          });
        }
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw err;
      const why = 'simplify it (nested repeats such as (a+)+ can take hours) or search fewer files';
      throw new Error(`the pattern took longer than ${REGEX_SECONDS} s; ${why}`);
    }
    msLeft -= performance.now() - started;
  }
  let skipped = '';
  if (tooLarge) {
    const size = `over ${MAX_READ / 1e6} MB`;
    skipped = `\n(${tooLarge} file(s) ${size} not searched; use bash grep for those)`;
  }
  if (matches.length === 0) return `No matches for /${input.pattern}/${skipped}`;
  let more = '';
  if (matches.length > 100) {
    more = `\n(${matches.length - 100} more matches not shown; narrow the pattern or path)`;
  }
  return matches.slice(0, 100).join('\n') + more + skipped;
}
