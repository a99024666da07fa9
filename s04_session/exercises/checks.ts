/**
 * Checks for the s04 exercises. Run them with: npm run check s04
 */
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { reply, text } from '../../shared/fake-anthropic.ts';
import { need, type ExerciseCheck } from '../../tests/helpers/exercises.ts';
import { runChapter, runRepl, type RunResult } from '../../tests/helpers/run-chapter.ts';
import { loggedMessages, sessionFiles } from '../../tests/helpers/sessions.ts';

/** This workspace's session files, as { id, file }. */
const sessions = (run: RunResult) =>
  sessionFiles(run).map((file) => ({ id: basename(file, '.jsonl'), file }));
/** The `content` of every message a session file holds. */
const contents = (file: string) => loggedMessages(file).map((message) => message.content);

/** A session with one prompt and one answer, made by the chapter itself. */
async function oneSession(codePath: string, prompt: string, folders?: RunResult) {
  const run = await runChapter('s04', {
    codePath,
    args: ['-p', prompt],
    replies: [reply(text(`Answer to ${prompt}.`))],
    folders: folders && { workspace: folders.workspace, home: folders.home },
  });
  need(
    run.code === 0,
    `The chapter should still run a prompt and exit 0 (it exited ${run.code}). ` +
      `stderr:\n${run.stderr}`,
  );
  return run;
}

export const checks: ExerciseCheck[] = [
  {
    id: '01-fork',
    title: '1. /fork: go on in a copy of this session, and leave the original as it was',
    async run(codePath) {
      const first = await oneSession(codePath, 'plan the release');
      const [original] = sessions(first);
      const before = readFileSync(original.file, 'utf8');
      const run = await runRepl('s04', ['/fork', 'after the fork', 'exit'], {
        codePath,
        args: ['-c'],
        replies: [reply(text('Forked answer.'))],
        folders: { workspace: first.workspace, home: first.home },
      });
      need(
        run.code === 0,
        `The REPL should leave on "exit" with code 0 (it exited ${run.code}). ` +
          `Output:\n${run.stdout}`,
      );
      need(
        run.requests.length === 1,
        '"/fork" is a command for the REPL (next to /sessions in main, code.ts), not a ' +
          'prompt: only "after the fork" should reach the model.',
      );
      const all = sessions(first);
      need(
        all.length === 2,
        `After /fork there should be two session files in the folder; there are ${all.length}.`,
      );
      const fork = all.find((s) => s.id !== original.id)!;
      need(
        readFileSync(original.file, 'utf8') === before,
        'The original session must stay exactly as it was: what comes after /fork goes to the ' +
          "new one (the agent's log).",
      );
      const forked = contents(fork.file);
      need(
        forked.length === 4 && forked[0] === 'plan the release' && forked[2] === 'after the fork',
        'The new session should hold the conversation so far (2 messages), then the new prompt ' +
          `and its answer; it holds:\n${JSON.stringify(forked, null, 1)}`,
      );
      need(
        run.stdout.includes(fork.id.slice(0, 8)),
        'Say which session the fork is, so the reader can come back to it (-r <id>).',
      );
    },
  },
  {
    id: '02-keep-days',
    title: '2. --keep-days <n>: delete sessions not used for n days, never one in use',
    async run(codePath) {
      const titles = ['old and resumed', 'old and forgotten', 'old and open elsewhere', 'recent'];
      const first = await oneSession(codePath, titles[0]);
      for (const title of titles.slice(1)) await oneSession(codePath, title, first);
      const [resumed, forgotten, openElsewhere, recent] = titles.map(
        (title) => sessions(first).find((s) => contents(s.file)[0] === title)!,
      );
      const longAgo = new Date(Date.now() - 40 * 24 * 3600_000);
      for (const s of [resumed, forgotten, openElsewhere]) utimesSync(s.file, longAgo, longAgo);
      // Another process has it open: its lock file (session.ts) names a process that is alive.
      writeFileSync(openElsewhere.file.replace(/\.jsonl$/, '.lock'), String(process.pid));

      const run = await runChapter('s04', {
        codePath,
        args: ['-r', resumed.id.slice(0, 8), '--keep-days', '30', '-p', 'still here?'],
        replies: [reply(text('Yes.'))],
        folders: { workspace: first.workspace, home: first.home },
      });
      need(
        run.code === 0,
        `-r … --keep-days 30 -p … should exit 0 (it exited ${run.code}). stderr:\n${run.stderr}`,
      );
      need(
        !existsSync(forgotten.file),
        'A session not used for 40 days should be deleted with --keep-days 30.',
      );
      need(existsSync(recent.file), 'A session used today must be kept.');
      need(
        existsSync(resumed.file),
        'Never delete the session in use, however old it was: this run resumed it.',
      );
      need(
        contents(resumed.file).includes('still here?'),
        'The resumed session should still get the new prompt.',
      );
      need(
        existsSync(openElsewhere.file),
        'Never delete a session another process has open, however old: its .lock file names a ' +
          'process that is alive (see lock and isAlive in session.ts).',
      );
    },
  },
];
