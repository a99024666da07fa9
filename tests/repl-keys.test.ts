/**
 * Keys at the REPL that are not a prompt (shared/cli.ts, every chapter): Ctrl+Z where nothing can
 * suspend the job, Ctrl+Z during a turn, and lines typed ahead with a partial one after them.
 * The REPL is the same code in every chapter; s01 runs it under plain node, s04 (where Ctrl+C
 * cancels the turn instead of ending the agent) runs the suspend under the tsx CLI, as readers run
 * it: Ctrl+Z stops the whole process group, tsx with it. The other two tests check how the REPL
 * reads keys, which tsx does not touch, so s04 runs them under node (a start through tsx costs
 * several of a bundle's).
 */
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse } from '../shared/fake-anthropic.ts';
import { promptOf, runRepl } from './helpers/run-chapter.ts';

// A shell in the chapter's process group that says so if the terminal sends the group a SIGINT, as
// it does when the REPL has left raw mode and Ctrl+C is a signal again.
const GROUP_SIGINT = '[the terminal sent the process group SIGINT]';
const watchGroup = ['sh', '-c', `trap 'echo "${GROUP_SIGINT}" >&2' INT; "$@"`, 'sh'];
// A shell with job control, as a reader's terminal has: the chapter runs as a job of its own, Ctrl+Z
// stops it, and the shell says so and resumes it at once with fg.
const STOPPED = '[job stopped]';
const jobControl = [
  'bash',
  '-c',
  `set -m; "$@"; while jobs %1 > /dev/null 2>&1; do echo "${STOPPED}"; fg %1 > /dev/null; done`,
  'bash',
];

/** The prompts the model was sent, in order. */
const typed = (run: { requests: { body: any }[] }) =>
  run.requests.at(-1)!.body.messages.filter((m: any) => m.role === 'user').map(promptOf).filter((p: string) => p && !p.startsWith('['));

describe.concurrent.each([
  ['s01', false],
  ['s04', true],
])('%s: keys at the REPL (the suspend through tsx: %s)', (chapter, viaTsx) => {
  const prompt = new RegExp(`${chapter} >> `);
  const twoPrompts = new RegExp(`${chapter} >> [\\s\\S]*${chapter} >> `);

  it('Ctrl+Z where nothing can suspend the job (under `script`) leaves the terminal raw: Ctrl+C stays a key', async () => {
    // `script` starts the chapter in a session of its own, with no shell to resume it: the system
    // drops the stop. The REPL must be raw again, or the next Ctrl+C is a signal to the whole group.
    const cancels = chapter === 's04';
    const run = await runRepl(
      chapter,
      [
        { after: prompt, keys: '\x1a' },
        { after: twoPrompts, keys: 'start it\r' },
        { after: /\$ sleep 30/, keys: '\x03' },
        ...(cancels ? [{ after: /\(interrupted/, keys: 'exit\r' }] : []),
      ],
      { wrapper: watchGroup, replies: [reply(toolUse('bash', { command: 'sleep 30' }))], timeoutMs: 15_000 },
    );
    expect(run.stdout + run.stderr, 'Ctrl+C after Ctrl+Z is still read as a key').not.toContain(GROUP_SIGINT);
    if (cancels) {
      expect(run.stdout, 'the press cancelled the turn').toContain('(interrupted');
      expect(run.code, 'and only the turn: the agent left on "exit"').toBe(0);
    } else expect(run.code, 'Ctrl+C during a turn ends s01 with 130').toBe(130);
  });

  it('Ctrl+Z during a turn is dropped; at the prompt it suspends the job, and fg resumes the REPL', async () => {
    const run = await runRepl(
      chapter,
      [
        'first',
        { after: /\$ sleep 1/, keys: '\x1a' },
        { after: /one\n/, keys: 'second\r' },
        { after: /two\n[\s\S]*>> /, keys: '\x1a' },
        { after: new RegExp(`${STOPPED.replace(/[[\]]/g, '\\$&')}[\\s\\S]*>> `), keys: 'third\r' },
        { after: /three\n/, keys: 'exit\r' },
      ],
      {
        viaTsx,
        wrapper: jobControl,
        replies: [reply(toolUse('bash', { command: 'sleep 1' })), reply(text('one')), reply(text('two')), reply(text('three'))],
        timeoutMs: 15_000,
      },
    );
    expect(run.code, run.stdout).toBe(0);
    const out = run.stdout;
    expect(out.split(STOPPED).length - 1, `stopped once, at the prompt; output:\n${out}`).toBe(1);
    expect(out.indexOf(STOPPED), 'not during the first turn, nor when it ended').toBeGreaterThan(out.indexOf('two'));
    expect(typed(run), 'every prompt arrived whole').toEqual(['first', 'second', 'third']);
  });

  // On Node 22 and later (CI runs 24), readline's prompt() put the cursor before a partial line.
  it('lines typed ahead come one at a prompt, and a partial one waits with the cursor after it', async () => {
    const run = await runRepl(
      chapter,
      [
        'first',
        { after: /\$ sleep 1/, keys: 'second\rpar' },
        { after: /two\n[\s\S]*>> par/, keys: 'tial\r' },
        { after: /three\n/, keys: 'exit\r' },
      ],
      { replies: [reply(toolUse('bash', { command: 'sleep 1' })), reply(text('one')), reply(text('two')), reply(text('three'))] },
    );
    expect(run.code, run.stdout).toBe(0);
    expect(typed(run), 'what was typed after "par" goes after it').toEqual(['first', 'second', 'partial']);
  });
});
