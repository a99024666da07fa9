/**
 * What a run of s04 or later left in its HOME: the session logs, read as a test needs them.
 *
 *   sessionFiles(run)            → ['/…/home/.learn-agent-harness/sessions/workspace-1f0c9a2e/3f2a….jsonl']
 *   logLines(file)               → every line, parsed: the header, then messages (and other entries)
 *   loggedMessages(file)         → the messages only, as they went to the API
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The folder holding the run's workspace's sessions (one workspace a run, so one folder). */
export function sessionFolder(run: { home: string }): string {
  const root = join(run.home, '.learn-agent-harness', 'sessions');
  return join(root, readdirSync(root)[0]);
}

/** The session files (not sub-agent files or transcripts, not locks), oldest first. */
export function sessionFiles(run: { home: string }): string[] {
  const folder = sessionFolder(run);
  const files = readdirSync(folder).filter((name) => name.endsWith('.jsonl'));
  return files.map((name) => join(folder, name)).sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
}

export const logLines = (file: string): any[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));

export const loggedMessages = (file: string): any[] =>
  logLines(file)
    .filter((line) => line.type === 'message')
    .map((line) => line.message);

/**
 * Messages without their thinking blocks (and without a message left empty): what a new turn
 * sends of earlier ones, as the chapters drop the thinking of the turns before it.
 */
export const withoutThinking = (messages: any[]): any[] =>
  messages
    .map((m) => (typeof m.content === 'string' ? m : { ...m, content: m.content.filter((b: any) => !/thinking/.test(b.type)) }))
    .filter((m) => m.content.length > 0);

/**
 * Give the run's workspace `count` more sessions (headers and one message each, titles of 70
 * characters): enough for `--sessions` to print more than a pipe holds (64 KB), so a reader who
 * stops reading (`| head -1`) closes it while the list is still being written.
 */
export async function addSessions(run: { home: string }, count: number): Promise<void> {
  const folder = sessionFolder(run);
  const workspace = logLines(sessionFiles(run)[0])[0].workspace;
  const write = (i: number) => {
    const id = `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const title = `session ${i} `.padEnd(70, 'x');
    const header = { type: 'session', version: 1, id, workspace, created: new Date().toISOString(), title };
    const message = { type: 'message', at: header.created, message: { role: 'user', content: title }, n: 1 };
    const text = `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`;
    return writeFile(join(folder, `${id}.jsonl`), text, { mode: 0o600 });
  };
  // Written without blocking: creating thousands of files can take seconds on a disk that the
  // chapters' session logs keep syncing, and the tests running beside this one (their fakes, in
  // this process) must go on meanwhile. A hundred at a time, to stay within the open files allowed.
  for (let i = 0; i < count; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, count - i) }, (_, k) => write(i + k)));
  }
}

/**
 * The run as if it had had a HOME of its own: a copy of its HOME, beside it, with the same
 * workspace. Sessions are kept in HOME, so a test can change (or resume) a session one run made
 * without touching what another test reads of it: one chapter process for several tests.
 */
export function withHomeCopy<T extends { home: string; tempDir: string }>(run: T): T {
  const home = mkdtempSync(join(run.tempDir, 'home-'));
  cpSync(run.home, home, { recursive: true, preserveTimestamps: true }); // "newest first" goes by them
  return { ...run, home };
}
