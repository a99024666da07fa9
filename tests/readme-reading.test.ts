/**
 * Each README's first-read path stays short, and the reading times the READMEs show are what
 * `npm run reading` measures (scripts/reading.ts): a chapter's path at most 2,500 words (s01's
 * 2,000, the top README's 1,500), and any README, folds included, at most 8,000.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countWords, languageOf, measure, overLimits, reading, readmes, splitPath, TIME_LINE }
  from '../scripts/reading.ts';
import { withReadingTimes } from '../scripts/reading.ts';
import { EDITIONS } from '../scripts/chapters.ts';
import { REPO, chapters } from './helpers/run-chapter.ts';

describe('how npm run reading counts', () => {
  it('counts words as wc -w does, and a Han character as half a word', () => {
    expect(countWords('Send the   conversation,\nthen `run()`.')).toBe(5);
    expect(countWords('每一章只讲一个机制 (one mechanism)', 'zh')).toBe(Math.round(9 / 2) + 2);
  });

  it('counts Japanese by its characters, 500 a minute, punctuation aside, code as words', () => {
    // 15 kana and kanji, then two words of code.
    const text = 'エージェントは、ループを回します。 `run()` (once)';
    expect(countWords(text, 'ja')).toBe(Math.round((15 * 230) / 500) + 2);
    // 1,000 characters are two minutes: 460 words at 230 a minute.
    expect(countWords('あ'.repeat(1000), 'ja')).toBe(460);
    expect(languageOf('s01_agent_loop/README.ja.md')).toBe('ja');
  });

  it('does not count a link’s target: a reader reads its text', () => {
    expect(countWords('[Try it](#try-it) and [`client.ts`](../shared/README.md#clientts)')).toBe(4);
    expect(countWords('[试试](#试试)', 'zh')).toBe(1);
    expect(countWords('[試してみる](#試してみる)', 'ja')).toBe(Math.round((5 * 230) / 500));
  });

  it('does not count the markup around Chinese or Japanese text', () => {
    expect(countWords('**加粗** 和 *斜体*', 'zh')).toBe(3);
    expect(countWords('**太字**', 'ja')).toBe(1);
    expect(countWords('a **bold** word — here')).toBe(5);
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

  if (!/^README\.(\w\w\.)?md$/.test(readme)) {
    it('says under its title how long its path takes to read', () => {
      const line = 'a line "*Reading time: about N minutes …*" (中文: "*阅读时间：约 N 分钟…*", '
        + '日本語: "*読了時間：約 N 分…*")';
      expect(text, line).toMatch(TIME_LINE);
    });
  }
});

it('the top README’s table shows every chapter’s reading time', () => {
  for (const name of EDITIONS) {
    const text = readFileSync(join(REPO, name), 'utf8');
    for (const chapter of chapters()) {
      const row = new RegExp(`^\\| \\[${chapter}\\]\\(.*\\| \\d+ (min|分钟|分) \\|$`, 'm');
      expect(text, `${name}: a row for ${chapter} that ends with its reading time`).toMatch(row);
    }
  }
});

describe('npm run reading when a README is missing or is not a file', () => {
  // A copy of the layout, made small: the top README, shared/'s and one chapter's, in English,
  // Chinese and Japanese; the chapter's English one a folder, its Chinese one deleted, its
  // Japanese one there.
  const root = mkdtempSync(join(tmpdir(), 'lah-reading-'));
  const present = ['.', 'shared'].flatMap((f) => EDITIONS.map((n) => join(f, n)));
  for (const readme of [...present, 's01_loop/README.ja.md']) {
    mkdirSync(join(root, dirname(readme)), { recursive: true });
    writeFileSync(join(root, readme), 'A short README.\n');
  }
  mkdirSync(join(root, 's01_loop', 'README.md'), { recursive: true });

  it('expects every chapter’s README in the three languages, the top ones and shared/’s', () => {
    expect(readmes(root)).toEqual([...present, 's01_loop/README.md', 's01_loop/README.zh.md',
      's01_loop/README.ja.md']);
  });

  it('names each in one line, no stack trace, exit 1; --check and --write too', () => {
    for (const args of [[], ['--check'], ['--write']]) {
      const run = reading(args, root);
      expect(run.code, `${args}: ${run.stderr}`).toBe(1);
      expect(run.stderr).not.toMatch(/EISDIR|\n\s+at /);
      expect(run.stderr).toContain('s01_loop/README.md: a directory, not a file');
      expect(run.stderr).toContain('s01_loop/README.zh.md: missing');
      expect(run.stdout, 'the others are measured').toContain('| shared/README.zh.md | 3 | 0 |');
    }
    expect(reading(['--check'], REPO).code, 'the repo itself passes').toBe(0);
  });
});
