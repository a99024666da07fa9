import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse } from '../shared/fake-anthropic.ts';
import { loopBehaviours } from './behaviours/loop.ts';
import { runChapter, runRepl, type RunResult } from './helpers/run-chapter.ts';
import { once } from './helpers/shared.ts';
import { addSessions, logLines, loggedMessages, sessionFiles, sessionFolder, withHomeCopy } from './helpers/sessions.ts';

loopBehaviours('s04', {
  offlineCommands: ['run', 'read', 'list', 'search', 'write', 'edit', 'delegate', 'history'],
  ctrlC: 'cancels the turn',
  ctrlCUnderTsx: true, // Ctrl+C changes here: it cancels the turn
});
// The tool behaviours run on s02 and s06; tests/layout.test.ts proves that s04's bash.ts, workspace.ts,
// files.ts and search.ts are s02's, byte for byte (the loop behaviours cover tools.ts's dispatch).
// The grader's stages (tests/grade-s04.test.ts) check the log a line a message as each is complete,
// Ctrl+C in a turn, -c and -r, a second writer refused and a crash's tail mended; that file also
// checks, on the stages' runs, what this one did with runs of its own: the log byte for byte as
// sent, its header, modes and lock, the interrupted call's answer and the torn line's report; and a
// garbled line in the middle of the REPL's session, on a copy of its HOME.

/** A log's lines as text: a torn one does not parse. */
const lines = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n');
const again = (first: RunResult) => ({ folders: { workspace: first.workspace, home: first.home } });

/**
 * A REPL session made once by a real run: "hello", answered "Hi.", then Ctrl+C at the prompt. One
 * test looks at what that exit left. The others start from the session it logged (a header and
 * those two messages) and change it: each gets a HOME of its own holding a copy, and runs in the
 * one workspace (sessions are kept in HOME, and these runs write nothing in the workspace). A
 * chapter process less each.
 */
const chattedThenCtrlC = once(() =>
  runRepl('s04', ['hello', { after: /Hi\.[\s\S]*s04 >> $/, keys: '\x03' }], {
    replies: [reply(text('Hi.'))],
  }),
);
async function helloSession(): Promise<RunResult> {
  const first = await chattedThenCtrlC();
  // Under a terminal, the chapter's stderr comes out with its stdout.
  expect(first.code, `the run that makes the session to resume failed:\n${first.stdout}`).toBe(130);
  return withHomeCopy(first);
}

/** `-c` after a session ("hello", "Hi.") whose fourth line is torn: skipped, kept on its own line. */
async function expectResumesPastTornLine(first: RunResult, file: string) {
  const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'still there?'], replies: [reply(text('Yes.'))] });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/skipped 1 damaged line.*line 4/);
  expect(run.requests[0].body.messages.map((m: any) => m.content)).toEqual(['hello', [expect.objectContaining({ text: 'Hi.' })], 'still there?']);
  const all = lines(file);
  expect(all, 'header, 2 messages, the torn line (kept, on its own), 2 new messages').toHaveLength(6);
  for (const line of [...all.slice(0, 3), ...all.slice(4)]) expect(() => JSON.parse(line)).not.toThrow();
}

/**
 * Two sessions in one workspace: "fix the\nfailing test" (a -p run), then a REPL session of two
 * prompts, "write the docs" and "and the readme", in which /sessions is typed before exit. Made
 * once, for three tests: `a` is the first run (its folders are the workspace's), `repl` the REPL.
 */
const twoSessions = once(async () => {
  const a = await runChapter('s04', { args: ['-p', 'fix the\nfailing test'], replies: [reply(text('Fixed.'))] });
  const repl = await runRepl('s04', ['write the docs', 'and the readme', '/sessions', 'exit'], {
    ...again(a),
    replies: [reply(text('Written.')), reply(text('Done.'))],
  });
  return { a, repl };
});

describe.concurrent('s04: the session log', () => {
  it('-r takes a unique prefix of an id; an ambiguous or unknown one is an error that creates nothing', async () => {
    const a = withHomeCopy((await twoSessions()).a); // the test below lists them as they were made
    const ids = sessionFiles(a).map((f) => f.split('/').at(-1)!.slice(0, 36));
    expect(ids).toHaveLength(2);
    const resumed = await runChapter('s04', { ...again(a), args: ['-r', ids[0].slice(0, 6), '-p', 'more'], replies: [reply(text('C.'))] });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.requests[0].body.messages[0].content, 'the session asked for, not the newest').toBe('fix the\nfailing test');

    const before = readdirSync(sessionFolder(a)).sort();
    const unknown = await runChapter('s04', { ...again(a), args: ['-r', 'zzzz', '-p', 'x'] });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no session zzzz/);
    expect(unknown.requests).toHaveLength(0);
    expect(readdirSync(sessionFolder(a)).sort(), 'nothing was created').toEqual(before);
    // A third session whose id starts like the first one's.
    const twin = join(sessionFolder(a), `${ids[0].slice(0, 4)}0000-0000-4000-8000-000000000000.jsonl`);
    writeFileSync(twin, readFileSync(sessionFiles(a)[0]));
    const ambiguous = await runChapter('s04', { ...again(a), args: ['-r', ids[0].slice(0, 4), '-p', 'x'] });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr, 'the matches are listed').toMatch(/could be any of 2 sessions/);
    expect(ambiguous.requests).toHaveLength(0);
  });

  it('a prompt the API refuses as too long is not kept: the log says so, and -c goes on without it', async () => {
    const first = await helloSession(); // "hello", "Hi."
    const [file] = sessionFiles(first);
    // A window of 3,000 tokens: the session and "and now?" fit; 20,000 characters do not.
    const fake = { contextWindow: 3_000 };
    const huge = 'lorem ipsum '.repeat(1_700);
    const refused = await runChapter('s04', { ...again(first), args: ['-c', '-p', huge], fake, expectRefused: true });
    expect(refused.code, 'the API refused it: exit 1').toBe(1);
    expect(refused.stderr).toMatch(/prompt is too long.*not kept/);
    expect(loggedMessages(file).map((m) => m.content), 'the log keeps it: it is only appended to').toHaveLength(3);
    // …and says it was taken back, ending as every line with a count does (--sessions reads it).
    expect(logLines(file).at(-1), 'a dropped line, with the number of the last message left').toMatchObject({ type: 'dropped', n: 2 });
    const next = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'and now?'], fake, replies: [reply(text('Ok.'))] });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr, 'resumed without the refused prompt').toMatch(/resumed with 2 messages/);
    expect(JSON.stringify(next.requests[0].body.messages), 'and it is not sent again').not.toContain('lorem');
    expect(next.stdout).toContain('Ok.');
  });

  it('-c with no session yet: one clear line, exit 2, nothing created', async () => {
    const run = await runChapter('s04', { args: ['-c', '-p', 'hello'] });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n'), 'one line').toHaveLength(1);
    expect(run.stderr).toMatch(/no session to continue/);
    expect(existsSync(join(run.home, '.learn-agent-harness')), 'nothing created in HOME').toBe(false);
  });

  it('--sessions lists this workspace’s sessions, newest first, with their size and first prompt', async () => {
    const { a } = await twoSessions();
    const list = await runChapter('s04', { ...again(a), args: ['--sessions'] });
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[0], 'newest first, with its message count').toMatch(/^[0-9a-f]{8} .* 4 messages +write the docs$/);
    expect(rows[1], 'a prompt over several lines is shown on one').toMatch(/ 2 messages +fix the failing test$/);
    expect(list.requests).toHaveLength(0);
  });

  it('--sessions | head -1 ends quietly when the reader stops reading mid-list', async () => {
    const first = await helloSession();
    await addSessions(first, 3000); // about 300 KB of list: more than a pipe holds
    // Through tsx, as readers run it: there the late EPIPE crashed; a plain-node run did not show it.
    const list = await runChapter('s04', { ...again(first), args: ['--sessions'], closeStdoutAfter: 1, viaTsx: true });
    expect(list.stdout.split('\n').length, 'the pipe closed before the list was out').toBeLessThan(3000);
    expect(list.stderr, 'no EPIPE stack trace: see parseFlags in shared/cli.ts').not.toMatch(/EPIPE|\n\s+at /);
    expect(list.code, 'the reader chose to stop reading: not a failure').toBe(0);
  });
});

describe.concurrent('s04: what a crash leaves behind', () => {
  it('a session an older version saved with half a character in it resumes: sent mended, stored as it was', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    // A result cut inside an emoji, as versions before the surrogate-safe cut stored it.
    const half = `${'a'.repeat(5)}${'\u{1F600}'.slice(0, 1)}`;
    const line = { type: 'message', at: '2026-11-21T10:00:00.000Z', message: { role: 'user', content: half }, n: 3 };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'and now?'], replies: [reply(text('Fine.'))] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.requests[0].body.messages[2].content, 'sent with U+FFFD for the half').toBe('aaaaa\ufffd');
    expect(readFileSync(file, 'utf8'), 'the log still holds what was stored').toContain('"aaaaa\\ud83d"');
  });

  it('a session an older version saved with odd tool calls resumes: sent valid, stored as it was', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    // As versions before validCalls stored another vendor's reply: an input that is not an object,
    // and two calls sharing one id (each answered under that id).
    const calls = [
      { type: 'tool_use', id: 'toolu_d', name: 'bash', input: [] },
      { type: 'tool_use', id: 'toolu_d', name: 'bash', input: { command: 'echo b' } },
      { type: 'tool_use', id: 'toolu_e', name: 'bash', input: null },
    ];
    const result = (id: string, content: string) => ({ type: 'tool_result', tool_use_id: id, content });
    const results = [result('toolu_d', 'one'), result('toolu_d', 'two'), result('toolu_e', 'three')];
    const stored = [
      { role: 'assistant', content: calls },
      { role: 'user', content: results },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ];
    const at = '2026-11-21T10:00:00.000Z';
    const lines = stored.map((message, i) => JSON.stringify({ type: 'message', at, message, n: i + 3 }));
    appendFileSync(file, `${lines.join('\n')}\n`);
    const before = readFileSync(file, 'utf8');
    const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'and now?'], replies: [reply(text('Fine.'))] });
    expect(run.code, run.stderr).toBe(0);
    const [sentCalls, sentResults] = run.requests[0].body.messages.slice(2, 4).map((m: any) => m.content);
    expect(sentCalls.map((c: any) => [c.id, c.input]), 'unique ids, object inputs').toEqual([
      ['toolu_d', {}],
      ['toolu_d_2', { command: 'echo b' }],
      ['toolu_e', {}],
    ]);
    const answered = sentResults.map((r: any) => [r.tool_use_id, r.content]);
    expect(answered, 'each result goes with its own call').toEqual([['toolu_d', 'one'], ['toolu_d_2', 'two'], ['toolu_e', 'three']]);
    expect(readFileSync(file, 'utf8').startsWith(before), 'the log still holds what was stored').toBe(true);
  });

  it('a damaged first line: refused with a clear message, and the file is left byte for byte', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    const damaged = readFileSync(file, 'utf8').replace('"type":"session"', '"type":"sess');
    writeFileSync(file, damaged);
    const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'x'] });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/does not start with a session header.*left untouched/);
    expect(run.requests).toHaveLength(0);
    expect(readFileSync(file, 'utf8')).toBe(damaged);
  });

  // A session open in a live process is refused: the grader's stage 4 (tests/stages/s04.ts).
  it('one writer: a lock left by a process that died is taken over', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    const lockFile = file.replace(/\.jsonl$/, '.lock');
    const dead = spawnSync('true').pid!; // a process that has exited
    writeFileSync(lockFile, String(dead));
    const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'y'], replies: [reply(text('Ok.'))] });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(lockFile), 'and released when it exits').toBe(false);
  });
});

describe.concurrent('s04: a disk, a home and a folder that are not what they should be', () => {
  it('a full disk: told once, the conversation goes on, and the next run finds every line whole', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    // ulimit -f: a write past this size fails partway (EFBIG), as one does on a full disk (ENOSPC).
    // The prompt's line (over 4 KB) is torn; every later line of the run fails too.
    const limitKb = Math.ceil(statSync(file).size / 1024) + 1;
    const full = await runChapter('s04', {
      ...again(first),
      args: ['-c', '-p', `remember this: ${'x'.repeat(4096)}`],
      replies: [reply(toolUse('bash', { command: 'echo noted' })), reply(text('Noted.'))],
      fileSizeLimitKb: limitKb,
    });
    expect(full.code, `${full.stderr}\n(a failed append must not end the turn)`).toBe(0);
    expect(full.stdout).toContain('Noted.');
    expect(full.stderr.match(/could not be saved \(EFBIG\)/g), 'told once, not once a line').toHaveLength(1);
    expect(full.stderr, 'no stack trace').not.toMatch(/^\s+at /m);
    expect(readFileSync(file, 'utf8').endsWith('\n'), 'the prompt’s line was torn').toBe(false);

    await expectResumesPastTornLine(first, file);
  });

  it('no usable home: one line, exit 2, before anything is sent', async () => {
    // HOME under a file: no one can make a folder there, root included (HOME=/nonexistent can).
    const run = await runChapter('s04', { args: ['-p', 'hello'], env: { HOME: '/dev/null' } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trim().split('\n'), 'one line, no stack trace').toHaveLength(1);
    expect(run.stderr).toMatch(/sessions cannot be saved in \/dev\/null\/\.learn-agent-harness\/sessions\/\S+ \(ENOTDIR\)/);
    expect(run.requests).toHaveLength(0);
  });

  it('a folder, a dangling link and a FIFO named *.jsonl are not sessions: /sessions and -c skip them', async () => {
    const first = await helloSession();
    const folder = sessionFolder(first);
    mkdirSync(join(folder, 'a-folder.jsonl'));
    symlinkSync(join(folder, 'gone'), join(folder, 'dangling.jsonl'));
    expect(spawnSync('mkfifo', [join(folder, 'fifo.jsonl')]).status, 'mkfifo').toBe(0);
    // One REPL: -c resumes, /sessions lists (printSessions, as --sessions does), then a prompt.
    const run = await runRepl('s04', ['/sessions', 'again', 'exit'], {
      ...again(first),
      args: ['-c'],
      replies: [reply(text('Ok.'))],
      timeoutMs: 30_000,
    });
    expect(run.code, run.stdout).toBe(0);
    const list = run.stdout.split('s04 >> /sessions\n')[1]?.split('s04 >> ')[0] ?? '';
    expect(list.trim().split('\n')).toEqual([expect.stringMatching(/ 2 messages +hello$/)]);
    expect(run.requests[0].body.messages[0].content).toBe('hello');
  });

  it('a 600 MB log is refused in one line, not read into a string too long for Node', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    truncateSync(file, 600 * 1024 ** 2); // sparse: no disk is filled
    const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'x'] });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trim().split('\n'), 'one line, no stack trace').toHaveLength(1);
    expect(run.stderr).toMatch(/is 600 MB, more than this chapter loads \(256 MB\); it was left untouched/);
    expect(run.requests).toHaveLength(0);
  });

  it('lines that parse but are no message the API takes are skipped and counted, like damaged ones', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    const odd = [{ role: 'user', content: null }, { role: 'system', content: 'obey' }, { role: 'user', content: '' }, { role: 'assistant' }, { role: 'user', content: [] }];
    for (const [i, message] of odd.entries()) {
      appendFileSync(file, `${JSON.stringify({ type: 'message', at: '2026-11-21T10:00:00.000Z', message, n: 3 + i })}\n`);
    }
    const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'next'], replies: [reply(text('Ok.'))] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/skipped 5 damaged line\(s\) of .*: line 4, 5, 6, 7, 8/);
    expect(run.requests[0].body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('-r "" is wrong usage, not the newest session', async () => {
    const first = await helloSession();
    const run = await runChapter('s04', { ...again(first), args: ['-r', '', '-p', 'x'] });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^-r needs a value\./);
    expect(run.requests).toHaveLength(0);
  });

  it('a session a later chapter wrote: its compaction line is reported as such, not as damage', async () => {
    let turns = 0;
    const s05 = await runChapter('s05', {
      args: ['-p', 'tidy up'],
      respond: (body) => {
        if (body.tools === undefined) return reply(text('SUMMARY.')); // the summary request
        return ++turns === 1 ? reply(toolUse('compact', {}, 'toolu_c')) : reply(text('Tidied.'));
      },
    });
    expect(s05.code, s05.stderr).toBe(0);
    const [file] = sessionFiles(s05);
    const at = logLines(file).findIndex((l) => l.type === 'compaction') + 1;
    expect(at, 's05 logged a compaction').toBeGreaterThan(0);
    const run = await runChapter('s04', { ...again(s05), args: ['-c', '-p', 'and now?'], replies: [reply(text('Ok.'))] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`skipped 1 line\\(s\\) a later chapter wrote, of .*: line ${at}\\b`));
    expect(run.stderr).not.toMatch(/damaged/);
    expect(run.requests[0].body.messages[0].content, 's04 resumes the whole history, uncompacted').toBe('tidy up');
  });
});

describe.concurrent('s04: the lock', () => {
  it('a lock file that names no process yet is not taken for stale; a writer never removes a lock it no longer holds', async () => {
    const first = await helloSession();
    const [file] = sessionFiles(first);
    const lockFile = file.replace(/\.jsonl$/, '.lock');
    writeFileSync(lockFile, ''); // what a lock looked like while its pid was still being written
    const refused = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'x'] });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/is locked by .*\.lock, which names no process/);
    expect(readFileSync(lockFile, 'utf8'), 'and the lock is left as it was').toBe('');
    rmSync(lockFile);

    // While the run works, another process takes its lock over: the run's exit must leave it.
    const run = await runChapter('s04', {
      ...again(first),
      args: ['-c', '-p', 'y'],
      respond: () => {
        writeFileSync(lockFile, String(process.pid));
        return reply(text('Ok.'));
      },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(lockFile) && readFileSync(lockFile, 'utf8'), 'the other process’s lock is still there').toBe(String(process.pid));
  });

  it('Ctrl+C at the prompt leaves with 130 and no lock, in a new session and in one with messages', async () => {
    const empty = await runRepl('s04', [{ after: /s04 >> $/, keys: '\x03' }]);
    expect(empty.code).toBe(130);
    // Its id is announced, but nothing of it is written before a prompt: the line says so.
    const announced = /session [0-9a-f]{8} \(new: saved from your first prompt on\); to come back/;
    expect(empty.stdout, 'a new session says when it is saved').toMatch(announced);
    expect(readdirSync(sessionFolder(empty)), 'nothing typed, nothing left: no file, no lock').toEqual([]);

    const chatted = await chattedThenCtrlC();
    expect(chatted.code).toBe(130);
    // (A lock left by a process killed outright is taken over: see "one writer" above.)
    const files = readdirSync(sessionFolder(chatted));
    expect(files.filter((name) => name.endsWith('.lock')), 'the exit removed its lock').toEqual([]);
    expect(files.filter((name) => name.endsWith('.jsonl')), 'and kept the session').toHaveLength(1);
  });
});

describe.concurrent('s04: Ctrl+C in a one-shot run', () => {
  it('-p: Ctrl+C stops the turn, logs the interruption with every call answered, and exits 130', async () => {
    const first = await runChapter('s04', {
      args: ['-p', 'build it'],
      replies: [reply(toolUse('bash', { command: 'sleep 30' }, 'toolu_a'), toolUse('write_file', { file_path: 'x', content: 'y' }))],
      signalWhen: { after: /\$ sleep 30/, signal: 'SIGINT' },
    });
    expect(first.code, first.stderr).toBe(130);
    expect(existsSync(join(first.workspace, 'x')), 'nothing more runs after Ctrl+C').toBe(false);
    const [file] = sessionFiles(first);
    const logged = loggedMessages(file);
    expect(logged.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user']);
    expect(logged[2].content.map((r: any) => r.is_error), 'the killed command, and the call that never ran').toEqual([undefined, true]);
    expect(logged[3].content).toBe('[interrupted by the user]');
    // That such a log resumes as it is (nothing to repair): tests/grade-s04.test.ts, on the REPL's.
  });

  it('/sessions in the REPL lists the sessions, this one included', async () => {
    // The REPL of the two sessions above: /sessions typed after its two prompts were answered.
    const { repl: run } = await twoSessions();
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout, 'this one').toMatch(/[0-9a-f]{8} .* 4 messages +write the docs/);
    const before = /[0-9a-f]{8} .* 2 messages +fix the failing test/;
    expect(run.stdout, 'and the one before it').toMatch(before);
    const sent = '/sessions is not sent to the model: a request for each prompt only';
    expect(run.requests, sent).toHaveLength(2);
  });
});

describe.concurrent('s04: sub-agents and sessions', () => {
  it('keeps a sub-agent’s messages in their own file, linked from the session, and out of a resumed context', async () => {
    const TASK = 'Count the files in src/ and report the number.';
    const respond = (body: any) => {
      if (body.messages[0].content === TASK) {
        return body.messages.length === 1 ? reply(toolUse('bash', { command: 'echo CHILD-SECRET' })) : reply(text('3 files'));
      }
      return body.messages.length === 1 ? reply(toolUse('agent', { task: TASK }, 'toolu_agent')) : reply(text('There are 3.'));
    };
    const first = await runChapter('s04', { args: ['-p', 'how many files?'], respond });
    expect(first.code, first.stderr).toBe(0);
    const [file] = sessionFiles(first);
    const link = logLines(file).find((l) => l.type === 'subagent');
    expect(link, 'the session links the sub-agent’s file').toMatchObject({ task: TASK });
    const childFile = join(sessionFolder(first), link.file);
    expect(readFileSync(childFile, 'utf8'), 'the child’s own conversation is kept').toContain('CHILD-SECRET');
    expect(readFileSync(file, 'utf8'), 'but not in the parent’s log').not.toContain('CHILD-SECRET');

    const run = await runChapter('s04', { ...again(first), args: ['-c', '-p', 'thanks'], replies: [reply(text('Welcome.'))] });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(run.requests[0].body), 'a resumed session loads the parent’s messages only').not.toContain('CHILD-SECRET');
    expect(run.requests[0].body.messages).toHaveLength(5);
  });

  it('Ctrl+C while a sub-agent waits for its reply: its call is answered "interrupted", not "failed"', async () => {
    const TASK = 'Count the files in src/ and report the number.';
    // The child's reply streams slowly: Ctrl+C aborts the child's request, as a reader's would.
    const respond = (body: any) => body.messages[0].content === TASK
      ? { ...reply(text('3 files')), eventDelayMs: 5_000 }
      : reply(toolUse('agent', { task: TASK }, 'toolu_agent'));
    const signalWhen = { after: /┌ sub-agent/, signal: 'SIGINT' as const };
    const run = await runChapter('s04', { args: ['-p', 'how many files?'], respond, signalWhen });
    expect(run.code, run.stderr).toBe(130);
    const [file] = sessionFiles(run);
    const [result] = loggedMessages(file)[2].content;
    expect(result.content, 'what the model reads after -c').toMatch(/^Error: the sub-agent was interrupted/);
    expect(result.content).not.toMatch(/failed|aborted/);
  });
});
