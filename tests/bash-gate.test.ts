/**
 * The bash gate and the home folder written out in full (`rm -rf /srv/people/reader` when that is
 * HOME), which the chapter's runs cannot type: their HOME is a temp folder made for the run. The
 * gate reads HOME when bash.ts loads, so it runs in a child process of its own with that HOME
 * (test files share their worker, where bash.ts may be loaded already, and HOME is everyone's).
 * Every command starts with `exit 0;`: if the gate let one through, bash would stop before it.
 * The same child reads a run of dots after ~/, which must take linear time: it is killed after
 * 20 s (before, every way to split the dots into /. and /.. was tried; 80 would take centuries).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO } from '../scripts/chapters.ts';
import { bundleChapter } from './helpers/bundle.ts';

const HOME = '/srv/people/reader';
const GATE = join(REPO, 's02_tools', 'bash.ts'); // s03–s06 have it byte for byte (layout.test.ts)
const COMMANDS = [
  ...[HOME, `${HOME}/`, `${HOME}/*`, `${HOME}/.`].map((target) => `exit 0; rm -rf ${target}`),
  `exit 0; rm -rf ${HOME}/project/build`, // a folder inside it
  `exit 0; rm -rf ${HOME}-old`, // a folder beside it
  `exit 0; rm -rf ~/${'.'.repeat(80)}x`, // the dots
];

it('refuses a recursive rm of the home folder written out in full, allows one inside it, and reads a run of dots at once', async () => {
  // bash.ts and what it imports in one file for node, as the chapters' runs are (helpers/bundle.ts).
  const code = `const { runBash } = await import(${JSON.stringify(await bundleChapter(GATE))});
    const said = [];
    for (const command of ${JSON.stringify(COMMANDS)}) {
      said.push(await runBash(command).catch((err) => 'refused: ' + err.message));
    }
    console.log(JSON.stringify(said));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, HOME },
  });
  expect(run.signal, 'the gate was still matching after 20 s').toBeNull();
  const said: string[] = JSON.parse(run.stdout || 'null') ?? [];
  expect(said, run.stderr).toHaveLength(COMMANDS.length);
  for (const [i, command] of COMMANDS.entries()) {
    const allowed = i >= 4;
    expect(said[i], command).toMatch(allowed ? /exit code 0/ : /^refused: .*refused/s);
  }
});
