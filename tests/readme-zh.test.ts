/**
 * Every README.md has a README.zh.md beside it, and the two stay in step: the same sections in the
 * same order, and in each section the same code (```ts quotes, ```sh commands), the same offline
 * examples, the same figures (every number of three digits or more, or with a decimal point), and
 * the same number of other code blocks and <details> blocks (tests/helpers/translations.ts). Prose
 * and diagrams are free to differ. When a maintainer changes one version and not the other, the
 * failure names the section.
 *
 * A maintainer check on the committed files, like the README quote test: skipped (with a note) where
 * either README, or one of the chapter's .ts files they quote, has uncommitted changes; `CI=1`
 * forces it.
 *
 * And every README.zh.md speaks one Chinese: it links the glossary (docs/glossary.zh.md) next to
 * its language links, and its prose uses none of the words the glossary's 不用 column refuses
 * (code blocks and inline code are quoted as they are, so they are not checked); "handler" is
 * glossed as 处理函数（handler） where a README first uses it, and is 处理函数 after that.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowedWords, folders, glossaryOwnWords, inStep, languageLine, prose }
  from './helpers/translations.ts';
import { refusedIn, refusedWords } from './helpers/translations.ts';
import type { Refused } from './helpers/translations.ts';
import { REPO } from './helpers/run-chapter.ts';

describe.each(folders)('%s: README.zh.md is in step with README.md', (folder) => {
  const english = join(REPO, folder, 'README.md');
  const chinese = join(REPO, folder, 'README.zh.md');
  it('has a Chinese version, and each links to the others', () => {
    expect(existsSync(chinese), `${folder}/README.zh.md is missing`).toBe(true);
    const line = languageLine.en;
    const second = readFileSync(english, 'utf8').split('\n')[2];
    expect(second, `README.md's language links, under its title: ${line}`).toBe(line);
    // README.zh.md's, with the glossary, are checked below.
  });
  inStep(folder, 'README.zh.md');
});

const GLOSSARY = join(REPO, 'docs', 'glossary.zh.md');

/**
 * Each refused word used in `markdown`'s prose, as "line N: word (use …)", and each "handler" not
 * glossed where first used or not 处理函数 after.
 */
export function glossaryMisses(markdown: string, refused: Refused[], allowed: string[]): string[] {
  const misses = refusedIn(markdown, refused, allowed);
  const lines = prose(markdown);
  // handler: glossed once, where first used, then 处理函数.
  const uses = lines.flatMap((line, i) => {
    return [...line.matchAll(/(处理函数（)?handlers?(）)?/gi)].map((m) => ({ m: m[0], n: i + 1 }));
  });
  uses.forEach(({ m, n }, k) => {
    const glossed = m.startsWith('处理函数（') && m.endsWith('）');
    if (k === 0 && !glossed) misses.push(`line ${n}: the first "handler" is glossed 处理函数（handler）`);
    if (k > 0) misses.push(`line ${n}: "${m}" after the gloss is 处理函数`);
  });
  return misses;
}

describe('the Chinese READMEs use the glossary (docs/glossary.zh.md)', () => {
  const glossary = existsSync(GLOSSARY) ? readFileSync(GLOSSARY, 'utf8') : '';
  const refused = refusedWords(glossary);
  const allowed = allowedWords(glossary);

  it('the glossary exists and refuses the variants', () => {
    expect(existsSync(GLOSSARY), 'docs/glossary.zh.md is missing').toBe(true);
    const words = refused.map((r) => r.word);
    expect(words, 'the 不用 column of its table of concepts').toEqual(
      expect.arrayContaining(['子 agent', '子智能体', '游览', '三级', '种子文章', '文件夹', '家目录']),
    );
  });

  it('finds a refused word in prose, not in code, and a handler left unglossed', () => {
    const text = '子Agent 读了 `文件夹`\n```sh\nls 游览\n```\n处理函数（handler）和 handler';
    expect(glossaryMisses(text, refused, allowed)).toEqual([
      'line 1: 子 agent (use 子代理)',
      'line 5: "handler" after the gloss is 处理函数',
    ]);
  });

  it.each(folders)('%s/README.zh.md links the glossary once, next to its language links', (f) => {
    const text = readFileSync(join(REPO, f, 'README.zh.md'), 'utf8');
    const link = `${f === '.' ? '' : '../'}docs/glossary.zh.md`;
    const line = languageLine.zh(link);
    expect(text.split('\n')[2], `the language links: ${line}`).toBe(line);
    expect(text.split('glossary.zh.md').length - 1, 'one link to the glossary').toBe(1);
  });

  it.each(folders)('%s/README.zh.md uses the glossary’s words', (f) => {
    const text = readFileSync(join(REPO, f, 'README.zh.md'), 'utf8');
    expect(glossaryMisses(text, refused, allowed), 'words docs/glossary.zh.md refuses').toEqual([]);
  });

  it('the glossary itself uses its words (its 不用 column aside)', () => {
    const own = glossaryOwnWords(glossary);
    const handlerNote = (m: string) => !m.includes('handler');
    expect(glossaryMisses(own, refused, allowed).filter(handlerNote)).toEqual([]);
  });
});
