/**
 * The session log (new in s04): one JSON Lines file per conversation, only ever appended to, each
 * message the moment it is complete; and reading it back to resume, one writer at a time.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources';
import { createHash, randomUUID } from 'node:crypto';
import { accessSync, appendFileSync, closeSync, constants, existsSync, fstatSync } from 'node:fs';
import { linkSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { paint, YELLOW } from '../shared/terminal.ts';
import { ROOT, WORKDIR } from './workspace.ts';

// Sessions are grouped by workspace (its folder name and a hash of its real path), so two projects
// never share a list:
//   ~/.learn-agent-harness/sessions/app-1f0c9a2e/3f2a9c1e-….jsonl
//   {"type":"session","version":1,"id":"3f2a…","workspace":"/home/me/app","created":"…",…}
//   {"type":"message","at":"…","message":{"role":"user","content":"fix it"},"n":1}
//   {"type":"message","at":"…","message":{"role":"assistant","content":[…]},"n":2}
//   {"type":"subagent","at":"…","file":"3f2a9c1e-…/agent-5e1d0c3a.jsonl","task":"…"}  ← its file
//   {"type":"dropped","at":"…","n":2}  ← message 3, refused as too long, is taken back
const FORMAT = 1;
const HASH = createHash('sha256').update(ROOT).digest('hex').slice(0, 8);
const FOLDER = `${basename(ROOT)}-${HASH}`;
const SESSIONS = join(os.homedir(), '.learn-agent-harness', 'sessions', FOLDER);

type Header = { version: number; id: string; workspace: string; created: string; title: string };
type Line =
  | ({ type: 'session' } & Header)
  | { type: 'message'; at: string; message: MessageParam; n: number } // n last: see listSessions
  | { type: 'dropped'; at: string; n: number } // the last message taken back; n is the new last
  | { type: 'subagent'; at: string; file: string; task: string }
  // NEW in s05: the first `replaced` messages are now `summary` (the full text is in `transcript`).
  | { type: 'compaction'; at: string; replaced: number; summary: MessageParam; transcript: string };
const now = () => new Date().toISOString();

/** A session that cannot be opened: unknown, damaged, or open in another process. Exit code 2. */
export class SessionError extends Error {}

export class SessionLog {
  private unsaved = ''; // lines a failed write left, to write again
  private checkTail = true; // the file may end in a torn line: a crash's, or a failed write's
  private warned = false; // a failed write is told once

  constructor(
    readonly id: string,
    readonly file: string,
    private n = 0, // the number of the last message in the file
    private create = { lock: false }, // a new session locks its file as the file appears
  ) {}

  /** Append one message, as soon as it is complete. The first one creates the file. */
  append(message: MessageParam): void {
    if (this.n === 0 && !existsSync(this.file)) {
      // The title is the first prompt: a string, or the first text block of the message.
      const first = typeof message.content === 'string' ? message.content : message.content[0];
      let prompt = '';
      if (typeof first === 'string') prompt = first;
      else if (first?.type === 'text') prompt = first.text;
      const title = prompt.replace(/\s+/g, ' ').trim().slice(0, 80);
      const id = this.id;
      this.write({ type: 'session', version: FORMAT, id, workspace: ROOT, created: now(), title });
    }
    this.write({ type: 'message', at: now(), message, n: ++this.n });
  }

  /**
   * Take the last message (a prompt the API refused as too long) out of `messages`, and out of the
   * log by a line that says so: the log is only ever appended to.
   */
  dropLast(messages: MessageParam[]): void {
    messages.pop();
    this.write({ type: 'dropped', at: now(), n: --this.n });
  }

  /** A log for a sub-agent: a file of its own, linked from this one, never loaded into ours. */
  subagent(task: string): SessionLog {
    const file = this.newFile('agent');
    this.write({ type: 'subagent', at: now(), file: relative(dirname(this.file), file), task });
    return new SessionLog(`${this.id}/${basename(file, '.jsonl')}`, file);
  }

  /** A new `<kind>-<random>.jsonl` in the folder beside this log, which holds its side files. */
  private newFile(kind: string): string {
    const folder = this.file.replace(/\.jsonl$/, '');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // A name no file there has: numbered by count, the next one after a deletion would overwrite
    // the last. agent-1f0c9a2e.jsonl
    let file;
    do file = join(folder, `${kind}-${randomUUID().slice(0, 8)}.jsonl`);
    while (existsSync(file));
    return file;
  }

  /** NEW in s05: save messages about to be compacted away, whole, in a file of their own. */
  transcript(messages: MessageParam[]): string {
    const file = this.newFile('compacted');
    const lines = messages.map((m) => `${JSON.stringify(m)}\n`).join('');
    writeFileSync(file, lines, { mode: 0o600, flush: true, flag: 'wx' }); // wx: never over another
    return file;
  }

  /** NEW in s05: the first `replaced` messages are now `summary`; the log keeps them above. */
  compaction(replaced: number, summary: MessageParam, transcript: string): void {
    this.write({ type: 'compaction', at: now(), replaced, summary, transcript });
  }

  // One write per line: a crash can tear only the line being written, never an earlier one.
  // flush: the line is on the disk (fsync) before the agent acts on it, so even a power cut loses
  // at most that line. 0600: yours only.
  private write(line: Line): void {
    this.unsaved += `${JSON.stringify(line)}\n`;
    try {
      if (this.create.lock) lock(this.file); // a new session: its lock, as its file appears
      this.create.lock = false;
      // A torn last line (a crash, a full disk) gets its newline first, or the next line would
      // stick to it and be lost too. Then every line not saved yet, in order.
      const tail = this.checkTail && !endsWithNewline(this.file) ? '\n' : '';
      appendFileSync(this.file, tail + this.unsaved, { mode: 0o600, flush: true });
      this.unsaved = '';
      this.checkTail = false;
    } catch (err) {
      // The conversation goes on in memory; the lines are tried again with the next one.
      this.checkTail = true;
      if (this.warned) return;
      this.warned = true;
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      const what = `session ${basename(this.file).slice(0, 8)} could not be saved (${why})`;
      console.error(paint(YELLOW, `${what}; the conversation goes on, and saving is retried`));
    }
  }
}

/** Whether a file is empty or ends with a newline: not torn. */
function endsWithNewline(file: string): boolean {
  return !existsSync(file) || ['', '\n'].includes(readPart(file, 'end', 1));
}

// The kinds of line this chapter writes. Sessions are shared by every chapter from s04 on: a line
// of another kind was written by a later one (s05 adds `compaction`), and is not ours to read.
const KINDS = ['session', 'message', 'subagent', 'dropped', 'compaction']; // s05: and compaction
// Past this size a log is refused, not read: it is more than any request can carry again (the
// API takes 32 MB), and more than Node can hold as one string (ERR_STRING_TOO_LONG at ~512 MB).
const MAX_LOAD_MB = 256;

/** A message the API would take back: a user or an assistant turn, with content. */
const isMessage = (m?: MessageParam) =>
  (m?.role === 'user' || m?.role === 'assistant') &&
  (typeof m.content === 'string' || Array.isArray(m.content)) &&
  m.content.length > 0;

/**
 * Read a session back: its messages, and the lines it skipped: damaged (torn by a crash, garbled,
 * not a message the API would take) or written by a later chapter.
 */
export function loadSession(file: string) {
  const { size } = statSync(file);
  if (size > MAX_LOAD_MB * 1024 ** 2) {
    const mb = Math.round(size / 1024 ** 2);
    const what = `is ${mb} MB, more than this chapter loads (${MAX_LOAD_MB} MB)`;
    throw new SessionError(`${file} ${what}; it was left untouched`);
  }
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const parse = (line: string): Line | undefined => {
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  };
  const header = parse(lines[0]);
  if (header?.type !== 'session' || header.version !== FORMAT) {
    const what = `does not start with a session header (format ${FORMAT})`;
    throw new SessionError(`${file} ${what}; it was left untouched`);
  }
  const messages: MessageParam[] = [];
  const damaged: number[] = [];
  const later: number[] = [];
  let n = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = parse(lines[i]);
    if (line?.type === 'message' && isMessage(line.message)) {
      messages.push(line.message);
      n = line.n;
    } else if (line?.type === 'dropped' && line.n === n - 1) {
      messages.pop(); // see dropLast
      n = line.n;
    } else if (line?.type === 'compaction') {
      messages.splice(0, line.replaced, line.summary); // s05: resume the compacted conversation
    } else if (typeof line?.type === 'string' && !KINDS.includes(line.type)) {
      later.push(i + 1); // a later chapter's: skip it, and say so
    } else if (line?.type !== 'subagent') {
      damaged.push(i + 1); // skip it, lose nothing else
    }
  }
  return { messages, damaged, later, n };
}

/**
 * Only one process may append to a session: the one whose pid is in its lock file. A lock left by
 * a process that died is taken over.
 */
function lock(file: string): void {
  const lockFile = file.replace(/\.jsonl$/, '.lock');
  const name = `session ${basename(file).slice(0, 8)}`;
  // The pid is written aside, then linked into place: link fails if the lock exists (EEXIST), and
  // no one ever sees a lock without its pid in it.
  const aside = `${lockFile}.${randomUUID().slice(0, 8)}`;
  try {
    writeFileSync(aside, String(process.pid), { mode: 0o600 });
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        linkSync(aside, lockFile);
        process.on('exit', () => unlock(lockFile));
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const pid = lockHolder(lockFile);
      if (pid === 0) {
        const what = `is locked by ${lockFile}, which names no process`;
        throw new SessionError(`${name} ${what}; delete it if no agent has the session open`);
      }
      if (pid !== undefined && isAlive(pid)) {
        throw new SessionError(`${name} is open in another process (pid ${pid})`);
      }
      rmSync(lockFile, { force: true }); // its process is gone (it crashed): the lock is stale
    }
    throw new SessionError(`${name} is being opened by another process`);
  } catch (err) {
    if (err instanceof SessionError) throw err;
    throw new SessionError(`${name} cannot be locked: ${(err as Error).message}`);
  } finally {
    rmSync(aside, { force: true });
  }
}

/** On exit: remove the lock, if it is still ours. Another process may have taken it over. */
function unlock(lockFile: string): void {
  if (lockHolder(lockFile) === process.pid) rmSync(lockFile, { force: true });
}

/** The pid in a lock file; 0 if it holds none; undefined if there is no lock file (any more). */
function lockHolder(lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8'));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0 delivers nothing: it only asks whether the process exists
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // it exists, but is not ours to signal
  }
}

/** The start or the end of a file, without reading the rest. */
function readPart(file: string, from: 'start' | 'end', bytes: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(bytes, fstatSync(fd).size));
    const at = from === 'start' ? 0 : fstatSync(fd).size - buffer.length;
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, at)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** This workspace's sessions, newest first. Reads a few KB of each file: big ones list as fast. */
export function listSessions() {
  const all = existsSync(SESSIONS) ? readdirSync(SESSIONS) : [];
  const names = all.filter((name) => name.endsWith('.jsonl'));
  const sessions = names.flatMap((name) => {
    const file = join(SESSIONS, name);
    // Regular files only: a folder, a link or a FIFO named *.jsonl is no session of ours (and
    // reading a FIFO waits forever for a writer).
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile()) return [];
    let [title, end] = ['(damaged header)', ''];
    try {
      end = readPart(file, 'end', 65536);
      title = JSON.parse(readPart(file, 'start', 4096).split('\n')[0]).title;
    } catch {}
    // Every message line ends with its number, `…,"n":12}`: the last one in the file is the count.
    const numbers = [...end.matchAll(/,"n":(\d+)\}\n/g)];
    const messages = numbers.at(-1)?.[1] ?? '?';
    const modified = stat.mtime;
    return [{ id: name.replace('.jsonl', ''), file, modified, messages, title }];
  });
  return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/** `--sessions` and `/sessions`: id, last used, messages, first prompt. */
export function printSessions(): void {
  const sessions = listSessions();
  if (sessions.length === 0) console.log(`No sessions in ${WORKDIR} yet.`);
  for (const s of sessions) {
    const when = s.modified.toISOString().slice(0, 16).replace('T', ' ');
    const messages = `${s.messages.padStart(4)} messages`;
    console.log(`${s.id.slice(0, 8)}  ${when}  ${messages}  ${s.title}`);
  }
}

/** The session for -c (prefix '': the newest) or -r <prefix>: locked, loaded, ready to append. */
export function resumeSession(prefix: string): { log: SessionLog; messages: MessageParam[] } {
  const all = listSessions();
  const matches = all.filter((s) => s.id.startsWith(prefix));
  if (all.length === 0) {
    throw new SessionError(`no session to continue in ${WORKDIR}; start one without -c or -r`);
  }
  if (matches.length === 0) {
    throw new SessionError(`no session ${prefix} in this folder; --sessions lists them`);
  }
  if (prefix && matches.length > 1) {
    const ids = matches.map((s) => s.id.slice(0, 13)).join(', ');
    const more = `give more of the id`;
    const which = `${prefix} could be any of ${matches.length} sessions (${ids})`;
    throw new SessionError(`${which}; ${more}`);
  }
  const { id, file } = matches[0];
  lock(file);
  const { messages, damaged, later, n } = loadSession(file);
  if (damaged.length > 0) {
    const where = `${file}: line ${damaged.join(', ')}`;
    console.error(paint(YELLOW, `skipped ${damaged.length} damaged line(s) of ${where}`));
  }
  if (later.length > 0) {
    const where = `${file}: line ${later.join(', ')}`;
    const what = `line(s) a later chapter wrote, of ${where}`;
    console.error(paint(YELLOW, `skipped ${later.length} ${what}`));
  }
  // A torn last line gets its newline with the next append (SessionLog.write), not before.
  return { log: new SessionLog(id, file, n), messages };
}

/**
 * A new session. Its file, and its lock, appear with the first message: a run that says nothing
 * leaves neither.
 */
export function newSession(): SessionLog {
  const id = randomUUID();
  try {
    mkdirSync(SESSIONS, { recursive: true, mode: 0o700 }); // conversations hold secrets: yours only
    accessSync(SESSIONS, constants.W_OK);
  } catch (err) {
    // No usable home (HOME=/nonexistent, a read-only folder): say so, before anything is typed.
    const why = `sessions cannot be saved in ${SESSIONS} (${(err as NodeJS.ErrnoException).code})`;
    throw new SessionError(`${why}; set HOME to a folder you can write to`);
  }
  // Locks whose process is gone (kill -9, a crash) are cleaned up here; -c and -r would take them
  // over anyway.
  for (const lockFile of readdirSync(SESSIONS).filter((name) => name.endsWith('.lock'))) {
    const pid = lockHolder(join(SESSIONS, lockFile));
    if (pid && !isAlive(pid)) rmSync(join(SESSIONS, lockFile), { force: true });
  }
  return new SessionLog(id, join(SESSIONS, `${id}.jsonl`), 0, { lock: true });
}

/** A new session, or the one -c or -r asks for, with its conversation so far; or exit 2. */
export function openSession(options: { continue?: boolean; resume?: string }) {
  try {
    if (!options.continue && options.resume === undefined) {
      return { log: newSession(), messages: [] };
    }
    return resumeSession(options.resume ?? '');
  } catch (err) {
    if (!(err instanceof SessionError)) throw err;
    console.error(err.message); // before the banner, and nothing was created
    process.exit(2);
  }
}
