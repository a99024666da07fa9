/**
 * The bash gate and the home folder written out in full (`rm -rf /srv/people/reader` when that is
 * HOME), which the chapter's runs cannot type: their HOME is a temp folder made for the run. The
 * gate reads HOME when bash.ts loads, so it is set before the import. Every command starts with
 * `exit 0;`: if the gate let one through, bash would stop before it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO } from '../scripts/chapters.ts';

const HOME = '/srv/people/reader';
process.env.HOME = HOME;
const GATE = join(REPO, 's02_tools', 'bash.ts'); // s03–s06 have it byte for byte (layout.test.ts)
const { runBash } = await import(GATE);

it('refuses a recursive rm of the home folder written out in full, and allows one inside it', async () => {
  for (const target of [HOME, `${HOME}/`, `${HOME}/*`, `${HOME}/.`]) {
    await expect(runBash(`exit 0; rm -rf ${target}`), `rm -rf ${target}`).rejects.toThrow(/refused/);
  }
  expect(await runBash(`exit 0; rm -rf ${HOME}/project/build`), 'a folder inside it').toMatch(/exit code 0/);
  expect(await runBash(`exit 0; rm -rf ${HOME}-old`), 'a folder beside it').toMatch(/exit code 0/);
});

it('reads a run of dots after ~/ in linear time (a child process, killed after 20 s, must finish)', () => {
  // Before: every way to split the dots into /. and /.. was tried; 80 dots would take centuries.
  const command = `exit 0; rm -rf ~/${'.'.repeat(80)}x`;
  const code = `const { runBash } = await import(${JSON.stringify(GATE)});
    console.log(await runBash(${JSON.stringify(command)}));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(run.signal, 'the gate was still matching after 20 s').toBeNull();
  expect(run.stdout, run.stderr).toMatch(/exit code 0/);
});
