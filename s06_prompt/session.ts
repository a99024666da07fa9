/**
 * The session log (new in s04): one JSON Lines file per conversation, only ever appended to, each
 * message the moment it is complete; and reading it back to resume, one writer at a time.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources';
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync } from 'node:fs';
import { readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
//   {"type":"subagent","at":"…","file":"3f2a9c1e-…/agent-1.jsonl","task":"…"}   ← the child's file
const FORMAT = 1;
const HASH = createHash('sha256').update(ROOT).digest('hex').slice(0, 8);
const FOLDER = `${basename(ROOT)}-${HASH}`;
const SESSIONS = join(os.homedir(), '.learn-agent-harness', 'sessions', FOLDER);

type Header = { version: number; id: string; workspace: string; created: string; title: string };
type Line =
  | ({ type: 'session' } & Header)
  | { type: 'message'; at: string; message: MessageParam; n: number } // n last: see listSessions
  | { type: 'subagent'; at: string; file: string; task: string }
  // NEW in s05: the first `replaced` messages are now `summary` (the full text is in `transcript`).
  | { type: 'compaction'; at: string; replaced: number; summary: MessageParam; transcript: string };
const now = () => new Date().toISOString();

/** A session that cannot be opened: unknown, damaged, or open in another process. Exit code 2. */
export class SessionError extends Error {}

export class SessionLog {
  constructor(
    readonly id: string,
    readonly file: string,
    private n = 0, // the number of the last message in the file
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

  /** A log for a sub-agent: a file of its own, linked from this one, never loaded into ours. */
  subagent(task: string): SessionLog {
    const file = this.newFile('agent');
    this.write({ type: 'subagent', at: now(), file: relative(dirname(this.file), file), task });
    return new SessionLog(`${this.id}/${basename(file, '.jsonl')}`, file);
  }

  /** The next `<kind>-N.jsonl` in the folder beside this log, which holds the session's files. */
  private newFile(kind: string): string {
    const folder = this.file.replace(/\.jsonl$/, '');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const count = readdirSync(folder).filter((name) => name.startsWith(`${kind}-`)).length;
    return join(folder, `${kind}-${count + 1}.jsonl`);
  }

  /** NEW in s05: save messages about to be compacted away, whole, in a file of their own. */
  transcript(messages: MessageParam[]): string {
    const file = this.newFile('compacted');
    const lines = messages.map((m) => `${JSON.stringify(m)}\n`).join('');
    writeFileSync(file, lines, { mode: 0o600, flush: true });
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
    appendFileSync(this.file, `${JSON.stringify(line)}\n`, { mode: 0o600, flush: true });
  }
}

/** Read a session back: its messages, and the lines it skipped (torn by a crash, or garbled). */
export function loadSession(file: string) {
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
  let n = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = parse(lines[i]);
    if (line?.type === 'message' && typeof line.message?.role === 'string') {
      messages.push(line.message);
      n = line.n;
    } else if (line?.type === 'compaction') {
      messages.splice(0, line.replaced, line.summary); // s05: resume the compacted conversation
    } else if (line?.type !== 'subagent') {
      damaged.push(i + 1); // skip it, lose nothing else
    }
  }
  return { messages, damaged, n, torn: !text.endsWith('\n') };
}

/** Only one process may append to a session. A lock left by a process that died is taken over. */
function lock(file: string): void {
  const lockFile = file.replace(/\.jsonl$/, '.lock');
  const name = `session ${basename(file).slice(0, 8)}`;
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx', mode: 0o600 }); // wx: if none
      process.on('exit', () => rmSync(lockFile, { force: true }));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(lockFile, 'utf8'));
      if (pid > 0 && isAlive(pid)) {
        throw new SessionError(`${name} is open in another process (pid ${pid})`);
      }
      rmSync(lockFile, { force: true }); // its process is gone (it crashed): the lock is stale
    }
  }
  throw new SessionError(`${name} is being opened by another process`);
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
  const sessions = names.map((name) => {
    const file = join(SESSIONS, name);
    let title = '(damaged header)';
    try {
      title = JSON.parse(readPart(file, 'start', 4096).split('\n')[0]).title;
    } catch {}
    // Every message line ends with its number, `…,"n":12}`: the last one in the file is the count.
    const numbers = [...readPart(file, 'end', 65536).matchAll(/,"n":(\d+)\}\n/g)];
    const messages = numbers.at(-1)?.[1] ?? '?';
    const modified = statSync(file).mtime;
    return { id: name.replace('.jsonl', ''), file, modified, messages, title };
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
  const { messages, damaged, n, torn } = loadSession(file);
  if (damaged.length > 0) {
    const where = `${file}: line ${damaged.join(', ')}`;
    console.error(paint(YELLOW, `skipped ${damaged.length} damaged line(s) of ${where}`));
  }
  // A torn last line gets its newline now, or the next line would stick to it and be lost too.
  if (torn) appendFileSync(file, '\n', { flush: true });
  return { log: new SessionLog(id, file, n), messages };
}

/** A new session. Its file appears with the first message: a run that says nothing leaves none. */
export function newSession(): SessionLog {
  const id = randomUUID();
  mkdirSync(SESSIONS, { recursive: true, mode: 0o700 }); // conversations hold secrets: yours only
  lock(join(SESSIONS, `${id}.jsonl`));
  return new SessionLog(id, join(SESSIONS, `${id}.jsonl`));
}
