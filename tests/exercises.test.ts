/**
 * Every exercise check must fail on the chapter as shipped (or it checks nothing) and pass once
 * the exercise's reference solution is applied (or it asks for something impossible).
 *
 * These are maintainer checks on the committed chapter: where one of a chapter's .ts files has
 * uncommitted changes, or a new one is there (a reader's solutions, most likely), they are skipped
 * and say so; `CI=1` forces them.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maintainerSkip } from './helpers/committed.ts';
import { loadChecks, withSolution } from './helpers/exercises.ts';
import { REPO, chapterCode, chapters as allChapters } from './helpers/run-chapter.ts';

const chapters = allChapters().filter((d) => existsSync(join(REPO, d, 'exercises', 'checks.ts')));

describe.each(chapters)('%s exercises', async (chapter) => {
  const code = chapterCode(chapter);
  const checks = await loadChecks(code);

  it('has two or three exercises, each with a reference solution', () => {
    expect(checks.length).toBeGreaterThanOrEqual(2);
    for (const c of checks) {
      expect(existsSync(join(dirname(code), 'exercises', `${c.id}.patch`)), `exercises/${c.id}.patch`).toBe(true);
    }
  });

  const skip = maintainerSkip(chapter, ['*.ts']);
  if (skip) {
    console.log(`${chapter} exercises: ${skip}`);
    it.skip(`checks fail as shipped and pass with their solutions — ${skip}`);
    return;
  }

  it('each solution applies from the repo root with the command the README gives', () => {
    // `git apply` resolves the patch's paths from where it runs: they must start at the chapter.
    const readme = readFileSync(join(REPO, chapter, 'README.md'), 'utf8');
    for (const c of checks) {
      const patch = `${chapter}/exercises/${c.id}.patch`;
      const r = spawnSync('git', ['apply', '--check', patch], { cwd: REPO, encoding: 'utf8' });
      expect(r.status, `git apply --check ${patch}, from the repo root:\n${r.stderr}`).toBe(0);
    }
    const first = `git apply ${chapter}/exercises/${checks[0].id}.patch`;
    expect(readme, 'the Exercises section says how to apply a solution').toContain(first);
    // Where the README says they apply one after another, they must: in order, in a copy.
    const section = readme.slice(readme.indexOf('## Exercises')).split(/\n## /)[0];
    if (!section.includes('one after another')) return;
    const copy = mkdtempSync(join(tmpdir(), 'lah-patches-'));
    try {
      cpSync(join(REPO, chapter), join(copy, chapter), { recursive: true });
      for (const c of checks) {
        const patch = `${chapter}/exercises/${c.id}.patch`;
        const r = spawnSync('git', ['apply', patch], { cwd: copy, encoding: 'utf8' });
        expect(r.status, `${patch}, after the ones before it:\n${r.stderr}`).toBe(0);
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  describe.concurrent.each(checks.map((c) => [c.id, c] as const))('%s', (_id, check) => {
    it('fails on the chapter as shipped', async () => {
      await expect(check.run(code), 'a check that passes before the exercise is done checks nothing').rejects.toThrow();
    });
    it('passes with the reference solution applied', async () => {
      const solution = withSolution(code, check.id);
      try {
        await check.run(solution.path);
      } finally {
        solution.remove();
      }
    });
  });
});
