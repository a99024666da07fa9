/**
 * Every exercise check must fail on the chapter as shipped (or it checks nothing) and pass once
 * the exercise's reference solution is applied (or it asks for something impossible).
 *
 * These are maintainer checks on the committed chapter: where one of a chapter's .ts files has
 * uncommitted changes, or a new one is there (a reader's solutions, most likely), they are skipped
 * and say so; `CI=1` forces them.
 */
import { existsSync } from 'node:fs';
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
