/**
 * npm run inspect [trace] — a trace of a chapter's run (`--trace`, shared/trace.ts) as a page that
 * replays the run request by request (scripts/inspector/page.ts), written beside the trace.
 *
 *   npm run inspect                          the newest trace of the folder you run it from, or
 *                                            of npm run demo's copies
 *   npm run inspect -- /path/to/trace.jsonl  that trace
 *
 * Prints the page's path on stdout (open it in a browser; it loads nothing from the network), and
 * on stderr the trace it took (when none is named) and how long it took. Exit 2, with one line
 * saying why: no trace, or not a trace. The trace is read a line at a time (traceLines): it may
 * be larger than any string, as a long run's is; only the page has to fit.
 */
import { constants } from 'node:buffer';
import { closeSync, constants as fs, fstatSync, openSync, readdirSync, readSync, realpathSync }
  from 'node:fs';
import { renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { traceFolder } from '../shared/trace.ts'; // where --trace writes them
import { NotATraceError, renderPage } from './inspector/page.ts';

const HOW_TO_TRACE = 'make one with --trace, e.g. npx tsx s05_context_compact/code.ts --trace';
const USAGE = `usage: npm run inspect [-- <trace.jsonl>]
Writes <trace>.html beside the trace: a page that replays the run request by request.
With no trace named: the newest one of the folder you run it from, or of npm run demo's copies
(${HOW_TO_TRACE}).`;

export interface Outcome {
  code: number; // 0 written, 1 could not write the page, 2 no trace or not a trace
  stdout: string;
  stderr: string;
}

/** The most recently written *.jsonl in these folders, or undefined if there is none. */
export function newestTrace(...folders: string[]): string | undefined {
  const files = folders.flatMap((folder) => {
    let names: string[];
    try {
      names = readdirSync(folder).filter((name) => name.endsWith('.jsonl'));
    } catch {
      return []; // no folder: nothing was traced from there yet
    }
    return names.map((name) => join(folder, name)).flatMap((path) => {
      const stat = statSync(path, { throwIfNoEntry: false });
      return stat?.isFile() ? [{ path, modified: stat.mtimeMs }] : [];
    });
  });
  files.sort((a, b) => b.modified - a.modified || b.path.localeCompare(a.path));
  return files[0]?.path;
}

/**
 * The trace folders of npm run demo's copies of demo/ (~/.learn-agent-harness/demo/lah-demo-sNN,
 * scripts/demo.ts). A chapter the demo starts runs in its copy, so --trace files its traces under
 * the copy's name, not under the folder you typed npm run demo in.
 */
function demoTraceFolders(home: string): string[] {
  const demo = join(home, '.learn-agent-harness', 'demo');
  let copies: string[];
  try {
    copies = readdirSync(demo).filter((name) => /^lah-demo-s\d\d$/.test(name));
  } catch {
    return []; // no demo run yet
  }
  return copies.flatMap((copy) => {
    try {
      return [traceFolder(join(demo, copy), home)];
    } catch {
      return []; // gone meanwhile (--fresh)
    }
  });
}

/** Where the page of a trace goes: beside it, `.jsonl` swapped for `.html`. */
export const pagePath = (trace: string) => `${trace.replace(/\.jsonl$/, '')}.html`;

/**
 * The command, as a function of its arguments and of the folder it was started from (npm runs
 * scripts in the repo's root, and says in INIT_CWD where you were): what to print, and the exit
 * code.
 */
export function inspect(args: string[], from: string, home = homedir()): Outcome {
  const fail = (code: number, message: string): Outcome => ({ code, stdout: '', stderr: message });
  if (args.includes('-h') || args.includes('--help')) return { code: 0, stdout: USAGE, stderr: '' };
  if (args.length > 1 || args[0]?.startsWith('-')) return fail(2, `inspect: ${USAGE}`);

  let trace: string;
  let which = ''; // which trace it took, when none was named
  if (args[0]) trace = resolve(from, args[0]);
  else {
    let folder: string;
    try {
      folder = traceFolder(from, home); // named after the folder's real path: it must be there
    } catch (err) {
      return fail(2, `inspect: cannot find the traces of ${from}: ${(err as Error).message}`);
    }
    const newest = newestTrace(folder, ...demoTraceFolders(home));
    if (!newest) return fail(2, `inspect: no trace in ${folder} (the traces of ${from}), nor of ` +
      `npm run demo; ${HOW_TO_TRACE}`);
    trace = newest;
    which = `inspect: the newest trace, ${trace}\n`;
  }

  const started = performance.now();
  let html: string;
  try {
    html = renderPage(traceLines(trace));
  } catch (err) {
    if (err instanceof NotATraceError) return fail(2, `inspect: ${trace} is ${err.message}`);
    if (err instanceof UnreadableError) {
      return fail(2, `inspect: cannot read ${trace}: ${err.message}`);
    }
    // The page itself past the longest string Node can make: it cannot be written.
    if (err instanceof RangeError && /string longer than/.test(err.message)) {
      return fail(1, `inspect: the page of ${trace} would be too large to write: ${err.message}`);
    }
    throw err; // a bug of the page's, not of the trace: with its stack trace
  }
  const page = pagePath(trace);
  try {
    writePrivately(page, html);
  } catch (err) {
    return fail(1, `inspect: cannot write ${page}: ${(err as Error).message}`);
  }
  const took = Math.round(performance.now() - started);
  const size = `${(Buffer.byteLength(html) / 1e6).toFixed(2)} MB`;
  return { code: 0, stdout: page, stderr: `${which}inspect: ${size} page written in ${took} ms` };
}

class UnreadableError extends Error {}

// The longest line read: longer, it could not be made a string (the limit is 2^29 - 24
// characters, about 512 MB), so it is replaced by a line that says so.
const LONGEST_LINE = constants.MAX_STRING_LENGTH;
const CHUNK = 1 << 20; // bytes read at a time

/**
 * The lines of a file, read a megabyte at a time: a long run's trace can be larger than the
 * longest string Node can make, and only what the page shows has to fit in memory. A line is cut
 * at the byte \n, which never occurs inside a UTF-8 character, so each decodes whole. A line
 * longer than `longest` bytes is given as `(a line of more than … bytes, not read)`: not JSON,
 * so the page counts it as skipped.
 */
export function* traceLines(file: string, options: { longest?: number } = {}): Generator<string> {
  const longest = options.longest ?? LONGEST_LINE;
  const fd = openTrace(file);
  try {
    const chunk = Buffer.alloc(CHUNK);
    let pieces: Buffer[] = []; // the line so far, when it began in an earlier chunk
    let size = 0;
    let tooLong = false;
    const line = (): string => {
      const text = tooLong ? `(a line of more than ${longest.toLocaleString('en-US')} bytes, ` +
        'not read)' : Buffer.concat(pieces, size).toString('utf8');
      [pieces, size, tooLong] = [[], 0, false];
      return text;
    };
    const add = (piece: Buffer) => {
      if (size + piece.length > longest) [pieces, tooLong] = [[], true];
      if (!tooLong) pieces.push(Buffer.from(piece)); // a copy: the chunk is read into again
      size += piece.length;
    };
    for (;;) {
      let read: number;
      try {
        read = readSync(fd, chunk, 0, CHUNK, null);
      } catch (err) {
        throw new UnreadableError((err as Error).message); // EIO, say
      }
      if (read === 0) break;
      const data = chunk.subarray(0, read);
      let start = 0;
      for (let end = data.indexOf(10); end !== -1; end = data.indexOf(10, start)) {
        // Most lines begin and end in one chunk: decoded from it, with no copy.
        if (size === 0 && end - start <= longest) yield data.toString('utf8', start, end);
        else {
          add(data.subarray(start, end));
          yield line();
        }
        start = end + 1;
      }
      add(data.subarray(start));
    }
    if (size > 0) yield line(); // the last line, with no \n after it
  } finally {
    closeSync(fd);
  }
}

/**
 * The file, open to read, if it is a regular file (a link to one will do). Anything else is
 * refused before a byte is read: /dev/zero never ends, and a FIFO with no writer would block the
 * open itself. O_NONBLOCK, so that one put there after the check cannot block it either.
 */
function openTrace(file: string): number {
  const notAFile = (info: Stats) =>
    new UnreadableError(`it is a ${kindOf(info)}, not a regular file`);
  let fd: number;
  try {
    const info = statSync(file);
    if (!info.isFile()) throw notAFile(info);
    fd = openSync(file, fs.O_RDONLY | fs.O_NONBLOCK);
  } catch (err) {
    if (err instanceof UnreadableError) throw err;
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new UnreadableError(missing ? 'no such file' : (err as Error).message);
  }
  const info = fstatSync(fd);
  if (info.isFile()) return fd;
  closeSync(fd);
  throw notAFile(info);
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'directory';
  if (info.isFIFO()) return 'FIFO (named pipe)';
  if (info.isSocket()) return 'socket';
  return info.isCharacterDevice() || info.isBlockDevice() ? 'device' : 'special file';
}

/**
 * The page is made 0600, like the trace: both hold whatever the agent read and ran. It is written
 * beside, then renamed over the old page: a page open in a browser is never seen half written,
 * and a symlink where the page goes is replaced, not followed.
 */
function writePrivately(page: string, html: string): void {
  const beside = `${page}.${process.pid}.tmp`;
  try {
    writeFileSync(beside, html, { mode: 0o600, flag: 'wx' });
    renameSync(beside, page);
  } finally {
    rmSync(beside, { force: true }); // gone already, unless something failed
  }
}

function main(): void {
  const from = process.env.INIT_CWD ?? process.cwd();
  const outcome = inspect(process.argv.slice(2), from);
  if (outcome.stdout) console.log(outcome.stdout);
  if (outcome.stderr) console.error(outcome.stderr);
  process.exitCode = outcome.code;
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] && realpathSync(process.argv[1]) === self) main();
