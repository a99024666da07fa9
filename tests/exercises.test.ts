/**
 * Every exercise check must fail on the chapter as shipped (or it checks nothing) and pass once
 * the exercise's reference solution is applied (or it asks for something impossible).
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadChecks, withSolution } from './helpers/exercises.ts';
import { REPO, chapterCode } from './helpers/run-chapter.ts';

const chapters = readdirSync(REPO).filter((d) => /^s\d\d_/.test(d) && existsSync(join(REPO, d, 'exercises', 'checks.ts')));

describe.each(chapters)('%s exercises', async (chapter) => {
  const code = chapterCode(chapter);
  const checks = await loadChecks(code);

  it('has two or three exercises, each with a reference solution', () => {
    expect(checks.length).toBeGreaterThanOrEqual(2);
    for (const c of checks) expect(existsSync(join(dirname(code), 'exercises', `${c.id}.patch`)), `exercises/${c.id}.patch`).toBe(true);
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
