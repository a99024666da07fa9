import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply, text } from '../shared/fake-anthropic.ts';
import { firstMiss, fixture, stageTests } from './helpers/grading.ts';
import { chapterCode, runChapter } from './helpers/run-chapter.ts';
import { logLines, loggedMessages, withoutThinking } from './helpers/sessions.ts';
import { scenarios, sparedHome, stages, words } from './stages/s04.ts';
import { Agent, Miss } from './stages/stage.ts';

// The chapter's own agent: the tests at the end read its stage runs for what only s04 promises.
const agent = new Agent('s04', chapterCode('s04'));

stageTests('s04', stages, {
  agent,
  previousFailsAt: 1,
  mutants: [
    {
      stage: 1,
      does: 'logs a reply only once its tools have run',
      edits: [
        [
          'code.ts',
          "keep({ role: 'assistant', content }); // logged before its tools run",
          "messages.push({ role: 'assistant', content });",
        ],
        [
          'code.ts',
          'const results = await runToolCalls(calls, agent, signal);',
          'const results = await runToolCalls(calls, agent, signal);\n' +
            "    agent.log?.append({ role: 'assistant', content });",
        ],
        [
          'code.ts',
          '    if (calls.length === 0) {',
          '    if (calls.length === 0) {\n' +
            "      if (content.length > 0) agent.log?.append({ role: 'assistant', content });",
        ],
      ],
    },
    {
      stage: 2,
      does: 'ends the program on Ctrl+C, as s03 does',
      edits: [
        [
          'code.ts',
          "exitingOnSignals(['SIGTERM', 'SIGHUP'], loop)",
          "exitingOnSignals(['SIGINT', 'SIGTERM', 'SIGHUP'], loop)",
        ],
      ],
    },
    {
      stage: 3,
      does: 'resumes the oldest session on -c',
      edits: [
        ['session.ts', 'const { id, file } = matches[0];', 'const { id, file } = matches.at(-1)!;'],
      ],
    },
    {
      stage: 4,
      does: 'takes no lock',
      edits: [
        [
          'session.ts',
          'function lock(file: string): void {',
          'function lock(file: string): void {\n  if (file) return;',
        ],
      ],
    },
    {
      stage: 5,
      does: 'sends the log as it is, unrepaired',
      edits: [
        [
          'repair.ts',
          'export function repairForSending(messages: MessageParam[]): MessageParam[] {',
          'export function repairForSending(messages: MessageParam[]): MessageParam[] {\n' +
            '  if (messages) return messages;',
        ],
      ],
    },
  ],
});

// Written on s03 as another reader might: a journal with the message's fields at the top of each
// line, ids from the time, a claim file, the mending in code.ts, other words everywhere.
describe('s04: a solution in another style', () => {
  it('the fixture s04-alt passes every s04 stage', async () => {
    const { code, remove } = fixture('s04-alt', 's03');
    try {
      const { stage, error } = await firstMiss(new Agent('s04', code), stages);
      const said = error instanceof Miss ? error.message : String((error as Error)?.stack ?? error);
      expect(stage, said).toBe(0);
    } finally {
      remove();
    }
  });
});

/** The session file (s04's layout) in a HOME whose first message is `prompt`. */
function sessionFile(home: string, prompt: string): string {
  const root = join(home, '.learn-agent-harness', 'sessions');
  const folder = join(root, readdirSync(root)[0]);
  const names = readdirSync(folder).filter((name) => name.endsWith('.jsonl'));
  const first = (file: string) =>
    JSON.parse(readFileSync(file, 'utf8').split('\n')[1]).message.content;
  const file = names.map((name) => join(folder, name)).find((f) => first(f) === prompt);
  if (!file) throw new Error(`no session in ${folder} starts with ${prompt}`);
  return file;
}

const thinkingOf = (m: any): any[] =>
  typeof m.content === 'string' ? [] : m.content.filter((b: any) => b.type === 'thinking');
const ids = (m: any, type: string, key: string) =>
  (m.content as any[]).filter((b) => b.type === type).map((b) => b[key]);

// What s04 itself promises beyond the grader's contract (its file, header, lock, messages), read
// off the runs its stages made: these were tests in s04.test.ts, each with runs of its own.
describe.concurrent('s04: the chapter’s own session log, on the stages’ runs', () => {
  it('logs what was sent byte for byte, with its thinking, in a file yours only', async () => {
    const { run } = await scenarios.chat(agent);
    const file = sessionFile(run.home, words.NOTE);
    const logged = loggedMessages(file);
    const sent = JSON.stringify(run.requests[1].body.messages); // after the note's call ran
    expect(JSON.stringify(logged.slice(0, 3)), 'the log holds exactly what was sent').toBe(sent);
    expect(thinkingOf(logged[1]), 'the reply was logged with its thinking').toHaveLength(2);
    expect(statSync(file).mode & 0o777, 'a session holds secrets: yours only').toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777, 'and so is its folder').toBe(0o700);
  });

  it('a new session: a header naming it and its workspace, a way back, -c resends it', async () => {
    const { run } = await scenarios.chat(agent);
    const { other, next } = await scenarios.continued(agent);
    const file = sessionFile(run.home, words.OTHER);
    const id = basename(file, '.jsonl');
    expect(other.stderr, 'the run says which session, and how to come back').toContain(
      `-r ${id.slice(0, 8)}`,
    );
    const header = logLines(file)[0];
    expect(header).toMatchObject({ type: 'session', version: 1, id, title: words.OTHER });
    expect(header.workspace, 'and the workspace it belongs to').toBe(realpathSync(run.workspace));
    // The turn before is over, so its thinking is left out; the rest goes byte for byte.
    const logged = loggedMessages(file);
    const resent = JSON.stringify(next.requests[0].body.messages.slice(0, 2));
    expect(resent, '-c sends the log').toBe(JSON.stringify(withoutThinking(logged.slice(0, 2))));
    expect(logged, '-c appended to the same file').toHaveLength(4);
    const lock = file.replace(/\.jsonl$/, '.lock');
    expect(existsSync(lock), 'no lock is left after a clean exit').toBe(false);
  });

  it('Ctrl+C in a turn: its call answered, the interruption logged; -r resends it', async () => {
    const w = await scenarios.writers(agent);
    const logged = loggedMessages(sessionFile(w.chat.home, words.NOTE));
    const at = logged.findIndex((m) => m.content === words.BUILD);
    const [, call, results, note] = logged.slice(at, at + 4);
    expect(ids(call, 'tool_use', 'id')).toEqual([words.BUILD_ID]);
    expect(ids(results, 'tool_result', 'tool_use_id'), 'the call has its result').toEqual([
      words.BUILD_ID,
    ]);
    expect(note.content).toBe('[interrupted by the user]');
    const before = logged.slice(
      0,
      logged.findIndex((m) => m.content === words.BACK),
    );
    const sent = w.holder!.requests[0].body.messages.slice(0, -1);
    // As logged, minus the thinking of the turns before: nothing needed repair.
    expect(sent).toEqual(withoutThinking(before));
  });

  it('a second agent on an open session: exit 2, naming the process that has it', async () => {
    const { second } = await scenarios.writers(agent);
    expect(second?.code).toBe(2);
    expect(second?.stderr).toMatch(/open in another process \(pid \d+\)/);
  });

  it('a crash’s tail: the call answered, the torn line told, nothing logged', async () => {
    const r = await scenarios.repaired(agent);
    const run = r.resumed!;
    const sent = run.requests[0].body.messages as any[];
    const [answer] = sent[2].content;
    const result = { type: 'tool_result', tool_use_id: words.NOTE_ID, is_error: true };
    expect(answer).toMatchObject(result);
    expect(answer.content).toMatch(/interrupted.*may have partly run/);
    const prompt = { type: 'text', text: words.WHAT };
    expect(sent[2].content.at(-1), 'the new prompt follows the answer').toEqual(prompt);
    expect(sent.flatMap(thinkingOf), 'that turn is over: its thinking is not sent').toEqual([]);
    const torn = r.before!.split('\n').length; // the torn line's number
    expect(run.stderr).toMatch(new RegExp(`skipped 1 damaged line.*: line ${torn}$`, 'm'));
    const lines = readFileSync(r.file!, 'utf8').trimEnd().split('\n');
    expect(lines[torn - 1], 'the torn line is kept, on its own').toBe(r.before!.split('\n').at(-1));
    for (const [i, line] of lines.entries()) {
      if (i !== torn - 1) expect(() => JSON.parse(line)).not.toThrow();
    }
    expect(lines.join('\n'), 'the repair is not logged').not.toContain('may have partly run');
  });

  // Its own run, on a copy of the REPL's HOME (the first session as the REPL left it).
  it('a garbled line in the middle is skipped and counted; nothing else is lost', async () => {
    const { run: chat, home } = await sparedHome(agent);
    const file = sessionFile(home, words.NOTE);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.splice(3, 1, 'this is not JSON'); // the note's tool results
    writeFileSync(file, lines.join('\n'));
    const run = await runChapter('s04', {
      folders: { workspace: chat.workspace, home },
      args: ['-c', '-p', 'three'],
      replies: [reply(text('Four.'))],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/skipped 1 damaged line.*line 4$/m);
    const sent = run.requests[0].body.messages;
    const [answer] = sent[2].content; // the call lost its result line: it is answered
    expect(answer).toMatchObject({ tool_use_id: words.NOTE_ID, is_error: true });
    const said = JSON.stringify(sent.slice(3));
    for (const part of ['Noted.', words.BUILD, words.THERE, 'Still here.', 'three']) {
      expect(said, 'and the rest is there').toContain(part);
    }
  });
});
