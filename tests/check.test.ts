/**
 * `npm run check sNN` as a reader runs it on a chapter they have changed: a type error is reported
 * as one, with its file, line and code, before any exercise check runs (esbuild, which runs the
 * chapter, only strips types); a file that does not compile is named, whichever of the chapter's
 * files it is. The reader's repo is a copy here, so the real chapter stays as it is.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { checkArgs } from '../scripts/check.ts';
import { REPO } from './helpers/run-chapter.ts';

it('npm run check reports a type error in the chapter (file, line, the code), and runs no check', () => {
  const copy = mkdtempSync(join(tmpdir(), 'lah-check-'));
  for (const name of ['package.json', 'tsconfig.json', 'scripts', 'tests', 's05_context_compact']) {
    cpSync(join(REPO, name), join(copy, name), { recursive: true });
  }
  for (const name of ['node_modules', 'shared']) symlinkSync(join(REPO, name), join(copy, name));
  // The reader's change: a string where a number is declared. It compiles with esbuild.
  const code = join(copy, 's05_context_compact', 'code.ts');
  const changed = readFileSync(code, 'utf8').replace(/^const MAX_ROUNDS = 30;/m, "const MAX_ROUNDS: number = '30';");
  expect(changed, 'the test found the line to change').toContain("MAX_ROUNDS: number = '30'");
  writeFileSync(code, changed);

  const run = spawnSync(join(REPO, 'node_modules', '.bin', 'tsx'), ['scripts/check.ts', 's05'], { cwd: copy, encoding: 'utf8' });
  expect(run.status, 'a type error fails the check').toBe(1);
  const line = changed.split('\n').findIndex((l) => l.includes("MAX_ROUNDS: number = '30'")) + 1;
  expect(run.stderr, 'where it is, and what is wrong').toContain(`s05_context_compact/code.ts:${line}:7: error TS2322: Type 'string' is not assignable to type 'number'.`);
  expect(run.stderr, 'and the line itself').toContain(`${line} │ const MAX_ROUNDS: number = '30';`);
  expect(run.stdout, 'no exercise check ran').not.toMatch(/passed|failed/);
});

it('npm run check names the file that does not compile, whichever of the chapter’s files it is', () => {
  const copy = mkdtempSync(join(tmpdir(), 'lah-check-'));
  for (const name of ['package.json', 'tsconfig.json', 'scripts', 'tests', 's03_subagent']) {
    cpSync(join(REPO, name), join(copy, name), { recursive: true });
  }
  for (const name of ['node_modules', 'shared']) symlinkSync(join(REPO, name), join(copy, name));
  const check = () => spawnSync(join(REPO, 'node_modules', '.bin', 'tsx'), ['scripts/check.ts', 's03'], { cwd: copy, encoding: 'utf8' });

  // s03's exercises are in subagent.ts and tools.ts: the reader's typo there is not in code.ts.
  const tools = join(copy, 's03_subagent', 'tools.ts');
  const shipped = readFileSync(tools, 'utf8');
  writeFileSync(tools, shipped.replace(/^export const TOOLS/m, 'export const TOOLS TOOLS'));
  const broken = check();
  expect(broken.status, 'a file that does not compile fails the check').toBe(1);
  expect(broken.stderr, 'the file that does not compile, by name').toMatch(/^s03_subagent\/tools\.ts does not compile:/);
  expect(broken.stderr, 'not code.ts, which is fine').not.toContain('code.ts');
  expect(broken.stderr, 'what to do, naming the file').toContain('until s03_subagent/tools.ts compiles');
});

it('npm run check --help prints the usage and exits 0; a wrong chapter or option, 2', () => {
  const help = checkArgs(['--help']);
  expect(help, '--help is not a chapter').toMatchObject({ exit: 0, err: '' });
  expect('out' in help && help.out, 'the usage, on stdout').toMatch(/^Usage: npm run check </);
  expect(checkArgs(['-h']), '-h too').toEqual(help);
  for (const args of [[], ['s99'], ['--fast'], ['s01', 's02']]) {
    const wrong = checkArgs(args);
    expect(wrong, `${args.join(' ')}: usage on stderr, exit 2`).toMatchObject({ exit: 2, out: '' });
    expect('err' in wrong && wrong.err, args.join(' ')).toContain('Usage: npm run check <chapter>');
  }
  expect(checkArgs(['s01']), 'a chapter with exercises: its folder and code.ts')
    .toEqual({ folder: 's01_agent_loop', code: join(REPO, 's01_agent_loop', 'code.ts') });
});
