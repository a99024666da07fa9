/**
 * Each chapter README's stage list (in its "Build it yourself" section, between the markers) is
 * the grader's: the names of tests/stages/sNN.ts, in order, in README.md, README.zh.md and
 * README.ja.md alike.
 * scripts/stage-lists.ts writes them (`npm run reading -- --write` runs it).
 */
import { describe, expect, it } from 'vitest';
import { END, START, stageList, stageLists, withStageList } from '../scripts/stage-lists.ts';
import { REPO } from './helpers/run-chapter.ts';

describe('how the stage lists are written', () => {
  it('numbers the names between the markers and leaves the rest alone', () => {
    const readme = `before\n${START}\n1. old\n${END}\nafter`;
    expect(withStageList(readme, ['one', 'two <three>'])).toBe(
      `before\n${START}\n1. one\n2. two \\<three>\n${END}\nafter`,
    );
  });

  it('leaves a README without markers as it is', () => {
    expect(withStageList('no list here', ['one'])).toBe('no list here');
    expect(stageList(['a *b*'])).toBe('1. a \\*b\\*');
  });
});

// Read before the tests are collected: the stage files are imported, not run.
const lists = await stageLists(REPO);

describe('each chapter README lists the stages npm run grade runs', () => {
  for (const { readme, names, broken, marked, text, fresh } of lists) {
    if (broken) {
      it(`${readme}`, () => expect.fail(`its chapter's stage file does not load: ${broken}`));
      continue;
    }
    if (!names) {
      it.skip(`${readme}: (no tests/stages file for this chapter yet)`);
      continue;
    }
    it(`${readme}`, () => {
      const where = `${readme}: its "Build it yourself" section needs ${START} and ${END}`;
      expect(marked, where).toBe(true);
      const file = `tests/stages/${readme.slice(0, 3)}.ts`;
      const stale = `${readme}: the stage list differs from ${file}; ` +
        'npx tsx scripts/stage-lists.ts --write';
      expect(text, stale).toBe(fresh);
    });
  }
});
