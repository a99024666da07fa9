/**
 * Every README.md that has a Chinese twin has a Japanese one, README.ja.md, kept in step the same
 * way (tests/helpers/translations.ts): the same sections in the same order, and in each the same
 * ```ts and ```sh blocks, offline examples and figures, and as many other code blocks and
 * <details> blocks. A maintainer check on the committed files; `CI=1` forces it.
 *
 * And every README.ja.md speaks one Japanese: it links the glossary (docs/glossary.ja.md) beside
 * its language links, and its prose (code and inline code aside) uses none of the words the
 * glossary's 使わない column refuses, is written in です・ます, and puts full-width punctuation
 * after Japanese text.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowedWords, folders, glossaryOwnWords, inStep, languageLine, prose }
  from './helpers/translations.ts';
import { refusedIn, refusedWords } from './helpers/translations.ts';
import { REPO } from './helpers/run-chapter.ts';

describe.each(folders)('%s: README.ja.md is in step with README.md', (folder) => {
  it('has a Japanese version', () => {
    expect(existsSync(join(REPO, folder, 'README.ja.md')), `${folder}/README.ja.md`).toBe(true);
  });
  inStep(folder, 'README.ja.md');
});

const GLOSSARY = join(REPO, 'docs', 'glossary.ja.md');

// A Japanese character: kana, kanji, the long-vowel mark.
const JA = '[\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff]';

/**
 * Where the prose leaves です・ます (a sentence that ends in である, だ or a plain ない), or puts
 * ASCII punctuation after Japanese text (、。：（） are the full-width ones). Headings, table rows,
 * bold and italic phrases are titles, and quotes (「…」) may be in any form: their words are not
 * sentences of the prose.
 */
export function styleMisses(markdown: string): string[] {
  const misses: string[] = [];
  prose(markdown).forEach((line, i) => {
    if (/^\s*(#|\|)/.test(line)) return;
    const text = line.replace(/「[^」]*」|\*\*[^*]+\*\*|\*[^*]+\*/g, '「」');
    const plain = text.match(new RegExp(`(である|${JA}だ|${JA}ない)(?=[。．]|$)`, 'u'));
    if (plain) misses.push(`line ${i + 1}: "${plain[0]}" (です・ます throughout)`);
    const ascii = text.match(new RegExp(`${JA}[,.:;](?=\\s|$)|${JA} ?\\((?!\\s)`, 'u'));
    if (ascii) misses.push(`line ${i + 1}: "${ascii[0]}" (full-width 、。：（）)`);
  });
  return misses;
}

describe('the Japanese READMEs use the glossary (docs/glossary.ja.md)', () => {
  const glossary = existsSync(GLOSSARY) ? readFileSync(GLOSSARY, 'utf8') : '';
  const refused = refusedWords(glossary);
  const allowed = allowedWords(glossary);
  const present = folders.filter((f) => existsSync(join(REPO, f, 'README.ja.md')));

  it('the glossary exists and refuses the variants', () => {
    expect(existsSync(GLOSSARY), 'docs/glossary.ja.md is missing').toBe(true);
    const words = refused.map((r) => r.word);
    expect(words, 'the 使わない column of its table of concepts').toEqual(
      expect.arrayContaining(['子エージェント', 'コンテクストウィンドウ', 'ハンドラ', 'フォルダ']),
    );
    expect(allowed).toEqual(
      expect.arrayContaining([
        'エージェント',
        'サブエージェント',
        'コンテキストウィンドウ',
        'プロンプトキャッシュ',
        'ツール呼び出し',
      ]),
    );
  });

  it('finds a refused word in prose, not in code, and not inside an allowed one', () => {
    const text =
      'ハンドラーは `ハンドラ` を呼びます。\n```sh\nls フォルダ\n```\nハンドラとフォルダー';
    expect(refusedIn(text, refused, allowed).sort()).toEqual([
      'line 5: ハンドラ (use ハンドラー)',
      'line 5: フォルダ (use ディレクトリ)',
      'line 5: フォルダー (use ディレクトリ)',
    ]);
  });

  it('finds a sentence out of です・ます, and ASCII punctuation after Japanese', () => {
    const text =
      'これはループである。\n`x` を返します。\n「直して」と頼むだけです。\n次に,\n' +
      '**書き換えない。** 追記します。\n*書き換えない。*';
    expect(styleMisses(text)).toEqual([
      'line 1: "である" (です・ます throughout)',
      'line 4: "に," (full-width 、。：（）)',
    ]);
  });

  it.each(present)('%s/README.ja.md links the glossary once, beside its language links', (f) => {
    const text = readFileSync(join(REPO, f, 'README.ja.md'), 'utf8');
    const line = languageLine.ja(`${f === '.' ? '' : '../'}docs/glossary.ja.md`);
    expect(text.split('\n')[2], `the language links: ${line}`).toBe(line);
    expect(text.split('glossary.ja.md').length - 1, 'one link to the glossary').toBe(1);
  });

  it.each(present)('%s/README.ja.md uses the glossary’s words', (f) => {
    const text = readFileSync(join(REPO, f, 'README.ja.md'), 'utf8');
    expect(refusedIn(text, refused, allowed), 'words docs/glossary.ja.md refuses').toEqual([]);
  });

  it.each(present)('%s/README.ja.md is written in です・ます, with full-width punctuation', (f) => {
    const text = readFileSync(join(REPO, f, 'README.ja.md'), 'utf8');
    expect(styleMisses(text)).toEqual([]);
  });

  it('the glossary itself uses its words (its 使わない column aside)', () => {
    const own = glossaryOwnWords(glossary);
    expect(refusedIn(own, refused, allowed)).toEqual([]);
    expect(styleMisses(own)).toEqual([]);
  });
});
