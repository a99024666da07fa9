/**
 * s03 · Sub-agents — s02, plus an `agent` tool: hand a task to a fresh loop and get back only its answer.
 *
 * The child starts with one message (the task), works with every tool but `agent`, and its reading
 * and searching never enter the parent's context: the parent sees only the child's final report.
 *
 *   npx tsx s03_subagent/code.ts              a REPL (type `exit` or press Ctrl+D to leave)
 *   npx tsx s03_subagent/code.ts -p "..."     one prompt, then exit
 */
import Anthropic, { type Middleware } from '@anthropic-ai/sdk';
import type { Message, MessageCreateParams, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { Tool, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { constants, lstatSync, mkdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createContext, Script } from 'node:vm';
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import 'dotenv/config';
import readlineSync from 'readline-sync';
import { glob } from 'tinyglobby';
import { startOfflineModel } from '../shared/offline-model.ts';

// ── Config ──────────────────────────────────────────────────────────────────────────────────────
const API_KEY = process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN;
const BASE_URL = process.env.ANTHROPIC_BASE_URL || undefined;
export const MODEL = process.env.MODEL_ID || 'claude-sonnet-5-5';
const MAX_TOKENS = 8000; // the longest reply we accept in one call
const MAX_ROUNDS = 30; // model calls per prompt, so a confused model cannot loop forever
const WORKDIR = process.cwd(); // the agent works in the folder you start it from
// s01: bash only → s02: the file tools first
const SYSTEM =
  `You are a coding agent working in ${WORKDIR}. Use the tools to look around and to make changes; ` +
  'prefer read_file, edit_file, glob and grep over bash for files. Be brief.';

// The model's answer goes to stdout; everything about the run (banner, tool calls, token counts,
// errors) goes to stderr, so `code.ts -p "…" > answer.txt` keeps just the answer.
// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
const COLOR = process.stderr.isTTY && !process.env.NO_COLOR;
const [DIM, YELLOW, CYAN] = [2, 33, 36];
const paint = (color: number, text: string) => (COLOR ? `\x1b[${color}m${text}\x1b[0m` : text);

// The SDK retries a 429 or 5xx by itself, waiting as long as the API's retry-after header asks, with
// no upper bound. Say when it waits; and rather than sit silent for an hour, give up with an error.
const MAX_RETRY_WAIT = 60; // seconds

/** How long a response asks us to wait before retrying, in seconds (0 if it does not say). */
function retryAfter(headers: Headers): number {
  const ms = Number(headers.get('retry-after-ms'));
  if (ms > 0) return ms / 1000;
  const after = headers.get('retry-after') ?? ''; // seconds, or an HTTP date
  const seconds = Number(after) || (Date.parse(after) - Date.now()) / 1000;
  return seconds > 0 ? Math.ceil(seconds) : 0;
}

const announceRetries: Middleware = async (request, next) => {
  const response = await next(request);
  const wait = retryAfter(response.headers);
  const lastTry = Number(new Headers(request.headers).get('x-stainless-retry-count')) >= client.maxRetries;
  if (response.ok || wait === 0 || lastTry || response.headers.get('x-should-retry') === 'false') return response;
  if (wait <= MAX_RETRY_WAIT) {
    console.error(paint(DIM, `(API ${response.status}: it asks to wait ${wait} s; the SDK will retry)`));
    return response;
  }
  // x-should-retry: false makes the SDK throw this error now instead of waiting; describeError says why.
  const headers = new Headers(response.headers);
  headers.set('x-should-retry', 'false');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
};

// No key? Talk to the offline demo model on 127.0.0.1 instead: same SDK, same requests.
const offline = API_KEY ? undefined : await startOfflineModel();
const client = new Anthropic({
  apiKey: API_KEY || offline!.apiKey, // ||, not ??: an empty key counts as no key
  baseURL: offline?.url ?? BASE_URL,
  // SDK 1.x authenticates with a Bearer header; some Anthropic-compatible vendors read only x-api-key.
  defaultHeaders: BASE_URL && API_KEY ? { 'x-api-key': API_KEY } : undefined,
  middleware: [announceRetries],
});

// ── NEW in s02: tools as data — one schema per tool (the handlers follow) ──────────────────────
const string = (description: string) => ({ type: 'string', description });
const integer = (description: string) => ({ type: 'integer', description });

// The model sees only this description: name, what it does, and a JSON Schema for its input.
export const TOOLS: Tool[] = [
  {
    name: 'bash',
    description: 'Run a shell command in the workspace. Returns stdout and stderr together, then the exit code.',
    input_schema: {
      type: 'object',
      properties: {
        command: string('The command, e.g. "npm test"'),
        timeout: integer('Seconds before it is killed (default 120, max 600)'),
      },
      required: ['command'],
    },
  },
  {
    name: 'read_file',
    description: 'Read a text file, with line numbers. Long files come in pages: use offset and limit.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: string('Path in the workspace'),
        offset: integer('First line, 1-based'),
        limit: integer('How many lines (default 2000)'),
      },
      required: ['file_path'],
    },
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a file with the given content. Creates missing folders.',
    input_schema: {
      type: 'object',
      properties: { file_path: string('Path in the workspace'), content: string('The whole new content') },
      required: ['file_path', 'content'],
    },
  },
  {
    name: 'edit_file',
    description:
      'Replace an exact string in a file. old_string must match once (whitespace included) unless replace_all ' +
      'is true. Answers with a diff.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: string('Path in the workspace'),
        old_string: string('The exact text to replace; include enough context to be unique'),
        new_string: string('The text to put in its place'),
        replace_all: { type: 'boolean', description: 'Replace every occurrence (default false)' },
      },
      required: ['file_path', 'old_string', 'new_string'],
    },
  },
  {
    name: 'glob',
    description: 'List files matching a glob pattern such as "src/**/*.ts", newest first.',
    input_schema: {
      type: 'object',
      properties: { pattern: string('Glob pattern'), path: string('Folder to search in (default: the workspace)') },
      required: ['pattern'],
    },
  },
  {
    name: 'grep',
    description: 'Search file contents with a regular expression. Returns path:line: text for each match.',
    input_schema: {
      type: 'object',
      properties: {
        pattern: string('JavaScript regular expression'),
        path: string('File or folder (default: the workspace)'),
        include: string('Only files matching this glob, e.g. "*.ts"'),
      },
      required: ['pattern'],
    },
  },
  // NEW in s03
  {
    name: 'agent',
    description:
      'Hand a task to a sub-agent that works in a fresh context with the same tools and returns only its final ' +
      'report. It sees nothing of this conversation, so the task must be self-contained: say what to do, where, ' +
      'and what to report. Use it for work that would fill your context, such as searching a large codebase or ' +
      'reading many files.',
    input_schema: {
      type: 'object',
      properties: {
        task: string('The complete, self-contained task'),
      },
      required: ['task'],
    },
  },
];

// ── The tools: bash ─────────────────────────────────────────────────────────────────────────────
const MAX_OUTPUT = 20_000; // characters; a `cat` of a huge log must not flood the context
const TIMEOUT = 120; // seconds a command may run

// Each command runs in its own process group, so we can kill it together with everything it started.
// Remember the groups: however the agent exits, no command may outlive it.
const running = new Set<number>();
const killGroup = (pid: number) => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {} // it had already finished
};
process.on('exit', () => running.forEach(killGroup));

// NEW in s02: a gate for commands that can wreck a machine. A blocklist is a speed bump, not a
// sandbox: `find / -delete` walks straight past it. Real isolation is a container or a VM.
// Where a command word starts: after a separator, maybe behind sudo, time, env X=1 …, maybe with its folder.
// So `mkfs` is found in `time mkfs`, `x && /sbin/mkfs.ext4` and `| sudo mkfs`, but not in `man mkfs`.
const CMD =
  String.raw`(?:^|[;&|({\x60\n])\s*` + // the start, or after ; & | ( { ` or a newline
  String.raw`(?:(?:sudo|doas|time|nice|nohup|exec|command|env|xargs)(?:\s+-\S+)*\s+|\w+=\S*\s+)*` +
  String.raw`(?:[^\s;&|()\x60]*\/)?`; // /sbin/ in /sbin/mkfs
// What a recursive rm must never be given: /, the home folder or a top-level system folder, with or without /*.
const SYSTEM_DIRS =
  String.raw`bin|boot|dev|etc|home|lib\w*|opt|root|sbin|srv|sys|usr|var` + // Linux
  String.raw`|Applications|Library|System|Users`; // macOS
const ROOTS = String.raw`(?:~|\$HOME|\$\{HOME\}|\/(?:${SYSTEM_DIRS})?)\/?\*?(?=[\s;&|)]|$)`;
const DISK = String.raw`\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|r?disk|mapper\/)`; // disks and partitions, not /dev/null
const SHELL = String.raw`(?:sudo\s+(?:-\S+\s+)*)?(?:[^\s;&|()\x60]*\/)?(?:ba|da|k|z)?sh\b`; // sh, bash, /bin/bash …
const ARGS = String.raw`[^;&|\n(){}\x60]*`; // the rest of one simple command, up to where the next one may start

const DANGEROUS: [RegExp, string][] = [
  // -r, -R, -rf … or --recursive anywhere, and a dangerous target as ANY argument: `rm -rf build ~` too.
  [
    new RegExp(String.raw`${CMD}rm(?=${ARGS}\s(?:-[a-zA-Z]*[rR]|--recursive))${ARGS}\s${ROOTS}`),
    'recursive delete of /, the home folder or a system folder',
  ],
  [new RegExp(String.raw`${CMD}mkfs(?:\.\w+)?(?=\s|$)`), 'formatting a file system (mkfs)'],
  [new RegExp(String.raw`${CMD}dd\s${ARGS}\bof=${DISK}|>\s*${DISK}`), 'raw write to a disk'],
  // name(){ name|name& };name — the classic is called ":", but any name works.
  [/(?<![\w:.-])([\w:.-]+)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&/, 'fork bomb'],
  // curl … | bash, and the forms without a pipe: bash <(curl …) and bash -c "$(curl …)".
  [
    new RegExp(
      String.raw`\b(?:curl|wget)\b.*\|\s*${SHELL}` + // curl … | sh
        String.raw`|${CMD}${SHELL}\s+(?:-\S+\s+)*\(?(?:<\(|\$\()\s*(?:curl|wget)\b`, // sh <(curl …), sh -c "$(curl …)"
    ),
    'piping a download into a shell',
  ],
];

/**
 * The command as the gate reads it. Quoted text is usually a message (git commit -m "…", echo "…"), so it
 * is blanked out and its words are not taken for commands. Kept, minus the quotes: a quoted single word
 * ("$HOME" is still an argument), text with $(…) or backticks (the shell runs those), and the script
 * after -c (bash -c '…' runs it), which is kept as a subshell (…).
 */
function unquote(command: string): string {
  return command.replace(/(-c\s+)?(?:"((?:[^"\\]|\\.)*)"|'([^']*)')/g, (_, dashC, double, single) => {
    const inner: string = double ?? single;
    if (dashC) return `${dashC}(${inner})`;
    return /\s/.test(inner) && !/\$\(|`/.test(inner) ? '""' : inner;
  });
}

// s01: always TIMEOUT → s02: the model may ask for more time, and the gate comes first.
export async function runBash(command: string, timeout = TIMEOUT): Promise<string> {
  const danger = DANGEROUS.find(([pattern]) => pattern.test(unquote(command)));
  if (danger) throw new Error(`refused: ${danger[1]}. Do this by hand if it is really wanted.`);
  const child = spawn('bash', ['-c', command], { cwd: WORKDIR, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child.pid!);
  let output = '';
  let killed = ''; // why we killed it, if we did
  const kill = (why: string) => {
    killed ||= why;
    killGroup(child.pid!);
  };
  const timer = setTimeout(() => kill(`timed out after ${timeout}s`), timeout * 1000);
  const collect = (chunk: string) => {
    output += chunk;
    if (output.length > 10_000_000) kill('more than 10 MB of output'); // `yes` would fill the memory
  };
  child.stdout.setEncoding('utf8').on('data', collect); // decode as text, so a character split
  child.stderr.setEncoding('utf8').on('data', collect); // between two chunks stays whole
  const [code, signal] = await once(child, 'close');
  clearTimeout(timer);
  running.delete(child.pid!);
  if (output.length > MAX_OUTPUT) {
    // Keep the head and the tail: errors and summaries tend to be at the ends.
    const cut = output.length - MAX_OUTPUT;
    output = `${output.slice(0, MAX_OUTPUT / 2)}\n… (${cut} characters cut) …\n${output.slice(-MAX_OUTPUT / 2)}`;
  }
  const status = killed ? `${killed}; killed` : `exit code ${code ?? signal}`;
  // trimEnd, not trim: the first line's indentation can matter (`cat -n` pads its numbers).
  return `${output.trimEnd() || '(no output)'}\n[${status}]`;
}

// ── NEW in s02: the workspace boundary ──────────────────────────────────────────────────────────
const ROOT = realpathSync(WORKDIR);

/** Resolve a path the model gave us, and refuse it if it lands outside the workspace. */
export function safePath(path: string): string {
  const full = resolve(WORKDIR, path);
  // Follow symlinks in the part that exists: `docs` may be a link to /etc. A new file has no
  // real path yet, so resolve its deepest existing folder and add the rest.
  let head = full;
  const rest: string[] = [];
  while (!exists(head)) {
    rest.unshift(basename(head));
    head = dirname(head);
  }
  const real = join(realpathSync(head), ...rest);
  const rel = relative(ROOT, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new Error(`${path} is outside the workspace (${WORKDIR}); file tools only work inside it`);
  }
  return full;
}
const exists = (p: string) => { try { return !!lstatSync(p); } catch { return false; } };

/** Write to a temp file, then rename over the target: a crash mid-write never leaves half a file. */
function writeAtomic(path: string, text: string): void {
  // Through a symlink to the file it names, and with the file's permissions (a script stays executable).
  const target = exists(path) ? realpathSync(path) : path;
  safePath(target); // check the file really written, too: a link can change after the first check
  // Only ever replace a regular file: a rename over a folder fails, and for "." the temp file would land outside.
  if (exists(target) && !statSync(target).isFile()) {
    throw new Error(`${path} is a ${kindOf(statSync(target))}, not a regular file; nothing was written`);
  }
  // The temp file goes next to the target (a rename is atomic only within one file system), under a random
  // name, and 'wx' fails if anything is already there: a file or link planted at that name is never used.
  const tmp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, text, { flag: 'wx', mode: exists(target) ? statSync(target).mode : 0o666 });
    renameSync(tmp, target);
  } catch (err) {
    // Leave no temp file behind. EEXIST means the name was taken: that file is not ours to delete.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') rmSync(tmp, { force: true });
    throw err;
  }
}

// ── NEW in s02: the file tools ──────────────────────────────────────────────────────────────────
const SKIP = ['**/node_modules/**', '**/.git/**']; // never worth searching, often huge
const MAX_LINE = 2000; // characters of one line that read_file and grep show
const MAX_READ = 10_000_000; // bytes; a bigger file is refused (read_file, edit_file) or skipped (grep)
const MAX_RESULT = 100_000; // characters in one tool result (about 25,000 tokens); runTool cuts anything longer
const MAX_BODY = MAX_RESULT - 1_000; // what read_file and edit_file fill, leaving room for their closing note
const WALK_SECONDS = 10; // glob and grep give up listing files after this long…
const MAX_FILES = 20_000; // …or when more files than this match: each would be stat'ed (glob) or read (grep)
const REGEX_SECONDS = 3; // grep's matching time in all; (a+)+$ on a 40-character line would take hours
const DIFF_SECONDS = 2; // a diff of a huge replace_all can take minutes; edit_file then answers without one
const isBinary = (bytes: Buffer) => bytes.subarray(0, 8000).includes(0);
const cutLine = (line: string) => (line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}… (line cut)` : line);
const tooBig = (name: string) =>
  `${name} is over ${MAX_READ / 1e6} MB; look at parts of it with bash: head, tail, sed -n '100,200p', grep -n`;

/** What a file that is not a regular file is, for error messages. */
function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'directory';
  if (info.isFIFO()) return 'FIFO (named pipe)';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice()) return 'character device';
  return info.isBlockDevice() ? 'block device' : 'special file';
}
const notRegular = (name: string, info: Stats) =>
  new Error(`${name} is a ${kindOf(info)}, not a regular file; the file tools only read regular files`);

/**
 * The bytes of a regular file, or undefined if it has more than MAX_READ. Anything else is refused: reading a
 * FIFO waits for a writer that may never come, and a device like /dev/zero never ends.
 */
async function readRegularFile(path: string, name: string): Promise<Buffer | undefined> {
  // O_NONBLOCK: even opening a FIFO returns at once. Then ask the open handle what it is (fstat), so the
  // path cannot be swapped for something else between the check and the read.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch(async (err) => {
    if (err.code === 'ENXIO') throw notRegular(name, await stat(path)); // what open() says for a socket
    throw err;
  });
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new Error(`${name} is a directory; use glob to list it`);
    if (!info.isFile()) throw notRegular(name, info);
    return info.size > MAX_READ ? undefined : await handle.readFile();
  } finally {
    await handle.close();
  }
}

// Strict UTF-8: a byte that is not UTF-8 (a Latin-1 "é") throws instead of turning into "\uFFFD".
// ignoreBOM keeps a byte order mark in the text, so writing the text back writes the BOM back.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const decodeUtf8 = (bytes: Buffer) => { try { return utf8.decode(bytes); } catch { return undefined; } };

async function readFileTool(input: { file_path: string; offset?: number; limit?: number }): Promise<string> {
  const path = safePath(input.file_path);
  const bytes = await readRegularFile(path, input.file_path);
  if (!bytes) throw new Error(tooBig(input.file_path));
  if (isBinary(bytes)) throw new Error(`${input.file_path} is a binary file; read_file shows text only`);
  // Not UTF-8 (Latin-1, say): show it anyway, and say that the � marks are not in the file.
  const text = decodeUtf8(bytes);
  const note = text === undefined ? '\n(not valid UTF-8: bytes that are not UTF-8 text are shown as �)' : '';
  const lines = (text ?? bytes.toString('utf8')).split('\n');
  if (lines.at(-1) === '') lines.pop(); // the newline at the end of the last line
  const start = Math.max(0, (input.offset ?? 1) - 1);
  if (start > 0 && start >= lines.length) {
    throw new Error(`offset ${input.offset} is past the end: ${input.file_path} has ${lines.length} lines`);
  }
  // `cat -n` style, so the model can cite line numbers:  "    12\tconst x = 1;"
  // A page ends after `limit` lines or MAX_BODY characters: 2,000 rows of a wide CSV would fill the context.
  const body: string[] = [];
  let size = 0;
  for (const line of lines.slice(start, start + (input.limit ?? 2000))) {
    const numbered = `${String(start + body.length + 1).padStart(6)}\t${cutLine(line)}`;
    if (body.length > 0 && size + numbered.length > MAX_BODY) break;
    body.push(numbered);
    size += numbered.length + 1;
  }
  if (body.length === lines.length) return (body.join('\n') || '(empty file)') + note;
  const end = start + body.length;
  const page = `(showing lines ${start + 1}-${end} of ${lines.length}; to read on, use offset ${end + 1})`;
  return `${body.join('\n')}\n${page}${note}`;
}

async function writeFileTool(input: { file_path: string; content: string }): Promise<string> {
  const path = safePath(input.file_path);
  mkdirSync(dirname(path), { recursive: true });
  writeAtomic(path, input.content);
  return `Wrote ${input.content.length} characters to ${input.file_path}`;
}

/** The line ending of the line that `index` is on: "\r\n" or "\n" (on a last line without one, the file's). */
function lineEndAt(text: string, index: number): string {
  const newline = text.indexOf('\n', index);
  if (newline === -1) return text.includes('\r\n') ? '\r\n' : '\n';
  return text[newline - 1] === '\r' ? '\r\n' : '\n';
}

interface EditInput {
  file_path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

async function editFileTool(input: EditInput): Promise<string> {
  if (!input.old_string) throw new Error('old_string is empty; to create a file use write_file');
  if (input.old_string === input.new_string) {
    throw new Error('old_string and new_string are the same; nothing would change');
  }
  const path = safePath(input.file_path);
  const bytes = await readRegularFile(path, input.file_path);
  if (!bytes) throw new Error(tooBig(input.file_path));
  if (isBinary(bytes)) throw new Error(`${input.file_path} is a binary file; edit_file edits text only`);
  // Only a file we can decode exactly can be written back unchanged outside the edit.
  const before = decodeUtf8(bytes);
  if (before === undefined) {
    const why = 'edit_file could not write it back unchanged. Use bash';
    throw new Error(`${input.file_path} is not valid UTF-8 (Latin-1, say); ${why}`);
  }
  // old_string is plain text, so escape what a regex would read as special. The model writes "\n": let each
  // newline match "\r\n" too, for Windows files and for files that mix both endings.
  const escaped = input.old_string.replace(/\r\n/g, '\n').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(escaped.replace(/\n/g, '\\r?\\n'), 'g');
  const count = before.match(pattern)?.length ?? 0;
  if (count === 0) {
    const hint = 'Read the file and copy the text exactly, whitespace included.';
    throw new Error(`old_string not found in ${input.file_path}. ${hint}`);
  }
  if (count > 1 && !input.replace_all) {
    const hint = 'include more surrounding lines to make it unique, or set replace_all';
    throw new Error(`old_string appears ${count} times in ${input.file_path}; ${hint}`);
  }
  // new_string gets the line ending of the text it replaces, so a CRLF line stays CRLF.
  const after = before.replace(pattern, (_match, offset: number) => {
    return input.new_string.replace(/\r?\n/g, lineEndAt(before, offset));
  });
  writeAtomic(path, after);
  // Answer with a unified diff: the model (and you) can see exactly what changed.
  const lf = (text: string) => text.replace(/\r\n/g, '\n');
  const options = { headerOptions: FILE_HEADERS_ONLY, timeout: DIFF_SECONDS * 1000 };
  const name = input.file_path;
  const diff = createTwoFilesPatch(name, name, lf(before), lf(after), undefined, undefined, options);
  if (diff === undefined) {
    return `Edited ${name} (${count} replacements); the diff took too long to compute, so read the file to check`;
  }
  // A one-word edit in a minified bundle is a diff of two 900 KB lines: cut long lines, then the whole diff.
  const shown = diff.split('\n').map(cutLine).join('\n');
  if (shown === diff && diff.length <= MAX_BODY) return diff;
  const cut = `(the edit was applied; this diff was cut to fit, long lines to their first ${MAX_LINE} characters)`;
  return `${shown.slice(0, MAX_BODY)}\n${cut}`;
}

/** Files under `path` matching `pattern`, inside the workspace, as paths relative to it. */
async function findFiles(pattern: string, path = '.'): Promise<string[]> {
  const base = safePath(path);
  // Refuse before walking: for "/**" or "../**" the walk itself is the problem, whatever is filtered out later.
  if (isAbsolute(pattern) || /(^|[\\/{,(|])\.\.($|[\\/},)|])/.test(pattern)) {
    const hint = 'use a relative pattern without "..", and path to pick the folder';
    throw new Error(`the pattern ${pattern} could reach outside the workspace; ${hint}`);
  }
  // Symlinks are not followed (a link to / would walk the whole disk), and the walk has a time limit.
  const signal = AbortSignal.timeout(WALK_SECONDS * 1000);
  const options = { cwd: base, ignore: SKIP, dot: true, absolute: true, followSymbolicLinks: false, signal };
  const found = await glob(pattern, options);
  const narrow = 'narrow the pattern (src/**/*.ts, not **/*) or the path';
  if (signal.aborted) throw new Error(`listing files took longer than ${WALK_SECONDS} s; ${narrow}`);
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

async function globTool(input: { pattern: string; path?: string }): Promise<string> {
  const files = await findFiles(input.pattern, input.path);
  // Newest first: the file you just touched is usually the one you want.
  const mtimes = new Map(await Promise.all(files.map(async (f) => [f, (await stat(f)).mtimeMs] as const)));
  files.sort((a, b) => mtimes.get(b)! - mtimes.get(a)! || a.localeCompare(b));
  if (files.length === 0) return `No files match ${input.pattern}`;
  const more = files.length > 100 ? `\n(${files.length - 100} more not shown; narrow the pattern)` : '';
  return files.slice(0, 100).join('\n') + more;
}

// A regex like (a+)+$ can backtrack for hours, and plain JavaScript cannot interrupt it. Code started
// through node:vm with a timeout can be stopped mid-way, regex included. The job itself is our own code.
const sandbox = createContext({});
const callJob = new Script('job()');
function runWithTimeout<T>(ms: number, job: () => T): T {
  sandbox.job = job;
  return callJob.runInContext(sandbox, { timeout: Math.max(1, Math.ceil(ms)) });
}

async function grepTool(input: { pattern: string; path?: string; include?: string }): Promise<string> {
  const regex = new RegExp(input.pattern); // an invalid pattern throws, and the model gets the message
  const include = input.include ?? '**/*';
  const target = safePath(input.path ?? '.');
  // "*.ts" should mean any .ts file below the folder, as in grep --include and ripgrep -g.
  const files = (await stat(target)).isDirectory()
    ? await findFiles(include.includes('/') ? include : `**/${include}`, input.path)
    : [relative(WORKDIR, target)];
  const matches: string[] = [];
  let tooLarge = 0; // files over MAX_READ, not searched
  let msLeft = REGEX_SECONDS * 1000; // matching time left, for all files together
  // 20 files at a time: read side by side, then matched in one timed call (each call costs a thread, ~0.1 ms).
  const sorted = files.sort();
  for (let k = 0; k < sorted.length; k += 20) {
    const batch = sorted.slice(k, k + 20);
    const contents = await Promise.all(batch.map((file) => readRegularFile(file, file)));
    const texts: { file: string; lines: string[] }[] = [];
    contents.forEach((bytes, j) => {
      if (!bytes) tooLarge++;
      else if (!isBinary(bytes)) texts.push({ file: batch[j], lines: bytes.toString('utf8').split('\n') });
    });
    const started = performance.now();
    try {
      runWithTimeout(msLeft, () => {
        for (const { file, lines } of texts) {
          lines.forEach((line, i) => {
            if (regex.test(line)) matches.push(`${file}:${i + 1}: ${line.slice(0, MAX_LINE)}`);
          });
        }
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw err;
      const why = 'nested repeats such as (a+)+ can take hours';
      throw new Error(`the pattern took longer than ${REGEX_SECONDS} s; simplify it (${why}) or search fewer files`);
    }
    msLeft -= performance.now() - started;
  }
  let skipped = '';
  if (tooLarge) skipped = `\n(${tooLarge} file(s) over ${MAX_READ / 1e6} MB not searched; use bash grep for those)`;
  if (matches.length === 0) return `No matches for /${input.pattern}/${skipped}`;
  let more = '';
  if (matches.length > 100) more = `\n(${matches.length - 100} more matches not shown; narrow the pattern or path)`;
  return matches.slice(0, 100).join('\n') + more + skipped;
}

// ── NEW in s02: dispatch — look the handler up by name ───────────────────────────────────────────
type Handler = (input: any) => Promise<string>;

// The dispatch map: tool name → the function that runs it. Adding a tool is one schema and one line here.
export const HANDLERS: Record<string, Handler> = {
  bash: (input) => runBash(input.command, Math.min(input.timeout ?? TIMEOUT, 600)),
  read_file: readFileTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  glob: globTool,
  grep: grepTool,
  agent: runSubagent, // NEW in s03
};

/** Check an input against its schema's required fields and simple types; say what is wrong. */
function checkInput(tool: Tool, input: Record<string, unknown>): string | undefined {
  const schema = tool.input_schema as { properties?: Record<string, { type: string }>; required?: string[] };
  const { properties = {}, required = [] } = schema;
  for (const name of required) {
    if (input[name] === undefined) return `missing required parameter "${name}" for ${tool.name}`;
  }
  for (const [name, value] of Object.entries(input)) {
    const want = properties[name]?.type;
    const got = Number.isInteger(value) ? 'integer' : typeof value;
    if (want && want !== got && !(want === 'number' && got === 'integer')) {
      return `parameter "${name}" of ${tool.name} must be of type ${want}, not ${got}`;
    }
  }
}

/** Cut a result over MAX_RESULT characters: one huge result would make every later request too long. */
function capResult(content: string): string {
  if (content.length <= MAX_RESULT) return content;
  const rest = `${content.length - MAX_RESULT} more characters not shown`;
  const ask = 'ask for less: a narrower pattern or path, read_file with offset and limit, or bash with head or sed';
  return `${content.slice(0, MAX_RESULT)}\n… (result cut at ${MAX_RESULT} characters; ${rest}; ${ask})`;
}

/** Run one tool call. Every failure becomes an is_error result the model can read and react to. */
// s02: every tool in TOOLS → s03: only the tools this agent was given (a sub-agent has no `agent`).
export async function runTool(call: ToolUseBlock, tools = TOOLS): Promise<ToolResultBlockParam> {
  const fail = (message: string): ToolResultBlockParam => {
    return { type: 'tool_result', tool_use_id: call.id, content: `Error: ${message}`, is_error: true };
  };
  const tool = tools.find((t) => t.name === call.name);
  if (!tool || !HANDLERS[call.name]) {
    return fail(`unknown tool "${call.name}". Available: ${tools.map((t) => t.name).join(', ')}`);
  }
  const problem = checkInput(tool, call.input as Record<string, unknown>);
  if (problem) return fail(problem);
  try {
    return { type: 'tool_result', tool_use_id: call.id, content: capResult(await HANDLERS[call.name](call.input)) };
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
}

// Tools that only look. Several of them in one reply can run at once; anything that may change the
// workspace runs alone, in order: two edits of one file racing would each write over the other.
const READ_ONLY = new Set(['read_file', 'glob', 'grep']);

/** A tool call as the reader sees it: `$ npm test` for bash, `> read_file src/a.ts, limit: 50` for the rest. */
function showCall(call: ToolUseBlock): string {
  const input = call.input as Record<string, unknown>;
  if (call.name === 'bash') return `$ ${input.command}`;
  // The first value is the path or the pattern; the others are named. Long values are cut, newlines folded.
  const values = Object.entries(input).map(([name, value], i) => {
    const text = (typeof value === 'string' ? value : JSON.stringify(value)).replace(/\s+/g, ' ');
    const short = text.length > 60 ? `${text.slice(0, 60)}…` : text;
    return i === 0 ? short : `${name}: ${short}`;
  });
  return `> ${call.name} ${values.join(', ')}`;
}

export async function runToolCalls(calls: ToolUseBlock[], agent = MAIN): Promise<ToolResultBlockParam[]> {
  const results: ToolResultBlockParam[] = [];
  for (let i = 0; i < calls.length; ) {
    let j = i + 1;
    if (READ_ONLY.has(calls[i].name)) while (j < calls.length && READ_ONLY.has(calls[j].name)) j++;
    for (const call of calls.slice(i, j)) console.error(agent.indent + paint(YELLOW, showCall(call)));
    const batch = calls.slice(i, j).map((call) => runTool(call, agent.tools));
    results.push(...(await Promise.all(batch))); // results keep the order of the calls
    i = j;
  }
  return results;
}

// ── NEW in s03: who runs a loop ─────────────────────────────────────────────────────────────────
// The main agent talks to you. A sub-agent works alone on one task, with fewer rounds and no `agent`
// tool (no sub-agents of sub-agents), and prints its tool calls indented so you can tell them apart.
interface Agent {
  system: string;
  tools: Tool[];
  maxRounds: number;
  indent: string;
  usage: { input: number; output: number }; // tokens this agent has used, across its rounds
}
const MAIN: Agent = { system: SYSTEM, tools: TOOLS, maxRounds: MAX_ROUNDS, indent: '', usage: { input: 0, output: 0 } };

const SUBAGENT_SYSTEM =
  `You are a sub-agent working in ${WORKDIR} on one task given to you by another agent. You work alone: ` +
  'nobody can answer questions, so decide for yourself. Use the tools, then finish with a concise report ' +
  'of what you found or changed; that report is all the other agent will see.';
const SUBAGENT_ROUNDS = 20;
const MAX_REPORT = 5_000; // characters of the child's answer that reach the parent
const MAGENTA = 35; // the sub-agent's colour

// The agent tool's input, as a type.
interface SubagentInput {
  task: string;
}

async function runSubagent(input: SubagentInput): Promise<string> {
  // An empty task would only come back from the API as a 400: refuse it before any request.
  if (!input.task.trim()) {
    throw new Error('the task is empty: say what the sub-agent should do, where, and what to report');
  }
  console.error(paint(MAGENTA, `┌ sub-agent: ${input.task.replace(/\s+/g, ' ').slice(0, 100)}`));
  const child: Agent = {
    system: SUBAGENT_SYSTEM,
    tools: TOOLS.filter((t) => t.name !== 'agent'),
    maxRounds: SUBAGENT_ROUNDS,
    indent: `${paint(MAGENTA, '│')} `,
    usage: { input: 0, output: 0 },
  };
  // A fresh context: the task is the only message. Nothing of the parent's conversation comes along.
  const messages: MessageParam[] = [{ role: 'user', content: input.task }];
  let stop: string;
  try {
    stop = await agentLoop(messages, child);
  } catch (err) {
    // A failure inside the child becomes one readable line for the parent (runTool makes it is_error).
    const why = err instanceof Anthropic.APIError ? describeError(err) : (err as Error).message;
    throw new Error(`the sub-agent failed: ${why}`);
  } finally {
    console.error(paint(MAGENTA, `└ sub-agent used ${child.usage.input} input + ${child.usage.output} output tokens`));
  }

  // Only its final reply goes back; everything it read and ran stays here and is dropped. (If that
  // reply was not kept, e.g. cut off at max_tokens, there is no report: not some earlier "Let me look".)
  const last = messages.at(-1)!;
  const blocks = last.role === 'assistant' && Array.isArray(last.content) ? last.content : [];
  const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text);
  let report = texts.join('\n').trim() || '(the sub-agent gave no report)';
  if (report.length > MAX_REPORT) {
    report = `${report.slice(0, MAX_REPORT)}\n… (report cut: it was ${report.length} characters)`;
  }
  // Anything but a plain end is an error the parent should see as one, with whatever the child said.
  if (stop === 'max_rounds') {
    const why = `the sub-agent was stopped after ${SUBAGENT_ROUNDS} rounds without finishing`;
    throw new Error(`${why}. Its last words:\n${report}`);
  }
  if (stop !== 'end_turn' && stop !== 'stop_sequence') {
    throw new Error(`the sub-agent did not finish normally (stop_reason: ${stop}). Its last words:\n${report}`);
  }
  return report;
}

// ── The loop ────────────────────────────────────────────────────────────────────────────────────
// What each stop_reason means for the turn when it is not 'tool_use' (end_turn needs no remark).
const STOP_NOTES: Record<string, string> = {
  max_tokens: `(reply cut off at max_tokens=${MAX_TOKENS}; any tool call in it was not run)`,
  refusal: '(the model declined to continue)',
  model_context_window_exceeded: '(the context window is full; s05 shows how to make room)',
  pause_turn: '(the model paused its turn; say "continue" to resume)',
};
// The SDK's timeout covers the wait for a response to begin, not a stream that goes quiet halfway.
const STREAM_IDLE_SECONDS = Number(process.env.STREAM_IDLE_SECONDS) || 90;

/** Stream one reply, printing its text as it arrives; give up if the stream stalls. */
// s02: always printed → s03: a sub-agent works quietly (print = false).
async function streamReply(params: MessageCreateParams, print = true): Promise<Message> {
  const stream = client.messages.stream(params);
  let printed = false;
  stream.on('text', (delta) => {
    if (!print) return;
    printed = true;
    process.stdout.write(delta);
  });
  let idle: NodeJS.Timeout | undefined;
  const restartClock = () => {
    clearTimeout(idle);
    idle = setTimeout(() => stream.abort(), STREAM_IDLE_SECONDS * 1000);
  };
  stream.on('connect', restartClock); // the clock starts when the response does (not during retries)…
  stream.on('streamEvent', restartClock); // …and starts again with every event
  try {
    return await stream.finalMessage();
  } catch (err) {
    if (stream.aborted) throw new Error(`the API sent nothing for ${STREAM_IDLE_SECONDS} s; gave up on this reply`);
    throw err;
  } finally {
    clearTimeout(idle);
    if (printed) process.stdout.write('\n'); // what comes next, an error included, starts on its own line
  }
}

export async function agentLoop(messages: MessageParam[], agent = MAIN): Promise<string> {
  for (let round = 1; round <= agent.maxRounds; round++) {
    // Stream so text appears as it is written; the SDK reassembles the tool-call JSON for us.
    const params = { model: MODEL, max_tokens: MAX_TOKENS, system: agent.system, tools: agent.tools, messages };
    const reply = await streamReply(params, agent === MAIN);
    agent.usage.input += reply.usage.input_tokens;
    agent.usage.output += reply.usage.output_tokens;
    // The input grows every round: the whole conversation is sent each time.
    const { input_tokens, output_tokens } = reply.usage;
    console.error(agent.indent + paint(DIM, `[round ${round} · tokens in ${input_tokens} · out ${output_tokens}]`));

    // Keep the reply for the next round, minus what the API would refuse to take back: text that is
    // only whitespace (models send "\n\n" now and then); tool calls from a reply that did not stop to
    // have them run (cut off at max_tokens, a refusal…), which would never get their results; and
    // block types this loop does not know.
    const content = reply.content.filter((block) => {
      if (block.type === 'text') return block.text.trim() !== '';
      return block.type === 'tool_use' && reply.stop_reason === 'tool_use';
    });
    if (content.length > 0) messages.push({ role: 'assistant', content });
    const calls = content.filter((block) => block.type === 'tool_use');
    if (calls.length === 0) {
      const note = STOP_NOTES[reply.stop_reason ?? ''];
      if (note) console.error(agent.indent + note);
      return reply.stop_reason ?? 'end_turn';
    }

    // Run every tool call, in order, and answer them all in ONE user message.
    // → { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_…', content: '…' }, …] }
    // s01: called runBash directly → s02: looks each call up in the dispatch map.
    const results = await runToolCalls(calls, agent);
    messages.push({ role: 'user', content: results });
  }
  console.error(`${agent.indent}(stopped after ${agent.maxRounds} rounds without a final answer)`);
  return 'max_rounds';
}

// ── The CLI ─────────────────────────────────────────────────────────────────────────────────────
/** One readable line for a failed API call; no stack trace for failures we expect. */
export function describeError(err: unknown): string {
  if (err instanceof Anthropic.APIConnectionError) {
    // fetch reports "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND…) is the cause of that.
    const reason = (err.cause as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const why = reason?.code ?? reason?.message ?? err.message;
    return `API error: could not reach ${client.baseURL} (${why}). Check ANTHROPIC_BASE_URL and your network.`;
  }
  if (err instanceof Anthropic.APIError) {
    const apiMessage = (err.error as { error?: { message?: string } } | undefined)?.error?.message ?? err.message;
    const wait = err.headers ? retryAfter(err.headers) : 0;
    let hint = '';
    if (err.status === 401) hint = ' (check ANTHROPIC_API_KEY in your .env)';
    if (wait > MAX_RETRY_WAIT) hint = ` (the API asks to wait ${wait} s before trying again; try later)`;
    return `API error${err.status ? ` ${err.status}` : ''}: ${apiMessage}${hint}`;
  }
  return `Error: ${err instanceof Error ? err.message : String(err)}`;
}

const USAGE = `Usage: npx tsx s03_subagent/code.ts [options]
  (no options)         a REPL: type a prompt and press Enter; exit, quit or Ctrl+D leaves
  -p, --prompt <text>  run one prompt to completion, print the answer, and exit
  -h, --help           show this help
Exit codes: 0 done, 1 the API failed, 2 wrong usage.`;

/** Run one turn. Ctrl+C or SIGTERM meanwhile exits through process.exit, so no command outlives us. */
async function turn(messages: MessageParam[]): Promise<void> {
  // Only during a turn: at the prompt readline-sync blocks the event loop, and a listener would keep
  // Ctrl+C from ending the program. Nothing is running there anyway.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const quit = (signal: NodeJS.Signals) => process.exit(128 + os.constants.signals[signal]); // as if killed by it
  for (const signal of signals) process.on(signal, quit);
  try {
    await agentLoop(messages);
  } finally {
    for (const signal of signals) process.off(signal, quit);
  }
}

async function main(): Promise<void> {
  let options;
  try {
    const flags = {
      prompt: { type: 'string', short: 'p' },
      help: { type: 'boolean', short: 'h' },
    } as const;
    options = parseArgs({ options: flags }).values;
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`); // an unknown flag, or -p without its text
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  if (options.prompt !== undefined && !options.prompt.trim()) {
    console.error(`-p needs a prompt.\n${USAGE}`);
    process.exit(2);
  }
  if (options.prompt === undefined && !process.stdin.isTTY) {
    console.error('The REPL needs a terminal. Without one, use: code.ts -p "<prompt>"');
    process.exit(2);
  }
  // A reader of `-p … | head -1` has stopped listening: end quietly, and run nothing more.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
  });
  if (offline) console.error(offline.banner(TOOLS));

  if (options.prompt !== undefined) {
    // One-shot mode: run one prompt to completion; exit 1 if the API call failed.
    try {
      await turn([{ role: 'user', content: options.prompt }]);
    } catch (err) {
      console.error(describeError(err));
      process.exit(1);
    }
    return;
  }
  const history: MessageParam[] = []; // one conversation across prompts
  for (;;) {
    const query = readlineSync.question(paint(CYAN, 's03 >> ')).trim();
    if (readlineSync.getRawInput() === '\0') break; // Ctrl+D on an empty line: end of input
    if (['exit', 'quit', 'q', '/exit', '/quit'].includes(query.toLowerCase())) break;
    if (!query) continue;
    history.push({ role: 'user', content: query });
    try {
      await turn(history);
    } catch (err) {
      console.error(describeError(err)); // the REPL stays usable; the prompt stays in history
    }
  }
}

// Run the CLI only when this file is the program, so tests can import its pieces. (Node names a module
// by its real path, and the checkout may be reached through a symlink: compare real paths.)
const program = process.argv[1] ? realpathSync(process.argv[1]) : '';
if (import.meta.url === pathToFileURL(program).href) await main();
