/**
 * Each README's first-read path stays short, and the reading times the READMEs show are what
 * `npm run reading` measures (scripts/reading.ts): a chapter's path at most 2,500 words (s01's
 * 2,000, the top README's 1,500), and any README, folds included, at most 8,000.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countWords, measure, overLimits, readmes, splitPath, TIME_LINE, withReadingTimes } from '../scripts/reading.ts';
import { REPO, chapters } from './helpers/run-chapter.ts';

describe('how npm run reading counts', () => {
  it('counts words as wc -w does, and a Han character as half a word', () => {
    expect(countWords('Send the   conversation,\nthen `run()`.')).toBe(5);
    expect(countWords('每一章只讲一个机制 (one mechanism)')).toBe(Math.round(9 / 2) + 2);
  });

  it('puts a fold’s body in the folds, nested ones too, and its title on the path', () => {
    const { path, folds } = splitPath(
      'one two\n<details><summary>Why three?</summary>\nfour <details>five</details> six\n</details>\nseven',
    );
    expect(countWords(path), 'one two, the title, seven').toBe(5);
    expect(countWords(folds)).toBe(3);
  });
});

describe.each(readmes(REPO))('%s', (readme) => {
  const text = readFileSync(join(REPO, readme), 'utf8');

  it('is within its limits', () => {
    const figures = measure(REPO, readme);
    expect(overLimits(figures), `npm run reading -- --check; what to shorten or fold`).toEqual([]);
  });

  it('shows the reading times npm run reading measures', () => {
    const fresh = withReadingTimes(REPO, readme, text);
    expect(fresh === text, 'a reading time in it is out of date: npm run reading -- --write').toBe(true);
  });

  if (readme !== 'README.md' && readme !== 'README.zh.md') {
    it('says under its title how long its path takes to read', () => {
      expect(text, 'a line "*Reading time: about N minutes …*" (中文: "*阅读时间：约 N 分钟…*")').toMatch(TIME_LINE);
    });
  }
});

it('the top README’s table shows every chapter’s reading time', () => {
  for (const name of ['README.md', 'README.zh.md']) {
    const text = readFileSync(join(REPO, name), 'utf8');
    for (const chapter of chapters()) {
      const row = new RegExp(`^\\| \\[${chapter}\\]\\(.*\\| \\d+ (min|分钟) \\|$`, 'm');
      expect(text, `${name}: a row for ${chapter} that ends with its reading time`).toMatch(row);
    }
  }
});
