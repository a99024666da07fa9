/**
 * What the translated READMEs' tests share (tests/readme-zh.test.ts, tests/readme-ja.test.ts):
 * a README cut into sections with the code, examples and figures each holds; the suite that
 * keeps a translation in step with README.md; a glossary's refused words and the prose they are
 * looked for in.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { maintainerSkip } from './committed.ts';
import { REPO, chapters } from './run-chapter.ts';

/** The top README, the runtime's tour in shared/, and every chapter's. */
export const folders = [
  '.',
  ...(existsSync(join(REPO, 'shared', 'README.md')) ? ['shared'] : []),
  ...chapters(),
];

export interface Section {
  heading: string; // as written, in its own language
  level: number;
  code: string[]; // ```ts and ```sh blocks, whole
  offline: string[]; // the <!-- offline examples --> block
  figures: string[]; // sorted
  otherBlocks: number;
  other: string[]; // the other code blocks (diagrams, file lists, transcripts), whole
  details: number;
  web: string[]; // the targets of its links to the web, sorted
  links: number; // its other links (to a heading, a file, a README), the glossary's aside
}

/** A README cut at its ## and ### headings (ignoring headings inside code blocks). */
export function sections(markdown: string): Section[] {
  const out: Section[] = [];
  const section = (heading: string, level: number): Section => {
    return {
      heading,
      level,
      code: [],
      offline: [],
      figures: [],
      otherBlocks: 0,
      other: [],
      details: 0,
      web: [],
      links: 0,
    };
  };
  let current = section('(top)', 1);
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*```(\w*)/);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i]);
      const block = body.join('\n');
      const before = lines.slice(0, i - body.length - 1).join('\n');
      if (/<!-- offline examples -->\s*$/.test(before)) current.offline.push(block);
      else if (fence[1] === 'ts' || fence[1] === 'sh') current.code.push(block);
      else {
        current.otherBlocks++;
        current.other.push(block);
      }
      current.figures.push(...figures(block));
      continue;
    }
    const heading = line.match(/^(#{2,3}) (.+)/);
    if (heading) {
      out.push(current);
      current = section(heading[2], heading[1].length);
      continue;
    }
    if (/<details>/.test(line)) current.details++;
    for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]*)\)/g)) {
      if (/^https?:/.test(target)) current.web.push(target);
      else if (!/glossary\.\w\w\.md$/.test(target)) current.links++;
    }
    // Link targets hold issue numbers.
    current.figures.push(...figures(line.replace(/\]\([^)]*\)/g, ']')));
  }
  out.push(current);
  for (const s of out) {
    s.figures.sort();
    s.web.sort();
  }
  return out;
}

// Chinese or Japanese text: Han, kana.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]/;

const count = (list: string[], item: string) => list.filter((x) => x === item).length;

/** The numbers a text states: three digits or more (1,326, 2026), or a decimal point (14.3). */
function figures(text: string): string[] {
  return text.match(/\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+|\d{3,}/g) ?? [];
}

/** The language line of each edition, under the title (`glossary` is the path to it). */
export const languageLine = {
  en: 'English · [中文](README.zh.md) · [日本語](README.ja.md)',
  zh: (glossary: string) =>
    `[English](README.md) · 中文 · [日本語](README.ja.md) · [术语表](${glossary})`,
  ja: (glossary: string) =>
    `[English](README.md) · [中文](README.zh.md) · 日本語 · [用語集](${glossary})`,
};

/**
 * The tests that keep `name` (README.zh.md, README.ja.md) in `folder` in step with README.md:
 * the same sections in the same order, and in each the same ```ts and ```sh blocks, the same
 * offline examples, the same figures and web links, as many other code blocks, <details> blocks
 * and other links (a contents line's, a README's: their targets are translated); an
 * other block left in English (a transcript, say) is the English one. Prose, and the diagrams and
 * file lists a translation translates, are free to differ; a failure names the section.
 *
 * A maintainer check on the committed files: skipped (with a note) where either README, or one of
 * the chapter's .ts files they quote, has uncommitted changes; `CI=1` forces it.
 */
export function inStep(folder: string, name: string) {
  const english = join(REPO, folder, 'README.md');
  const translated = join(REPO, folder, name);
  // A chapter's READMEs quote its .ts files (the top-level README quotes none).
  const quoted = folder === '.' ? [] : ['*.ts'];
  const skip = maintainerSkip(folder, ['README.md', name, ...quoted]);
  if (skip || !existsSync(translated)) {
    it.skip(`the same sections, code, examples and figures — ${skip ?? `no ${name}`}`);
    return;
  }
  const en = sections(readFileSync(english, 'utf8'));
  const other = sections(readFileSync(translated, 'utf8'));

  it('has the same sections in the same order', () => {
    const shape = (list: Section[]) => list.map((s) => s.level);
    const title = (s: Section | undefined) =>
      s ? `${'#'.repeat(s.level)} ${s.heading}` : '(none)';
    const outline = en.map((s, i) => `${title(s)}  ↔  ${title(other[i])}`).join('\n');
    const why = `the outline of ${name} should match README.md's, heading for heading:\n${outline}`;
    expect(shape(other), why).toEqual(shape(en));
  });

  const each = it.each(en.map((s, i) => [s.heading, i] as const));
  each('section "%s": the same code, examples, figures and blocks', (heading, i) => {
    const a = en[i];
    const b = other[i];
    if (!b) return expect.fail(`${name} has no section where README.md has "${heading}"`);
    const where = `in the section "${heading}" (${name}: "${b.heading}")`;
    expect(b.code, `the \`\`\`ts and \`\`\`sh blocks ${where} must be the same`).toEqual(a.code);
    expect(b.offline, `the offline examples ${where} must be the same`).toEqual(a.offline);
    const only = (x: string[], y: string[]) => {
      return x.filter((f, k) => x.indexOf(f) === k && count(x, f) > count(y, f));
    };
    const alone = (x: string[], y: string[]) => only(x, y).join(', ') || 'none';
    const differ =
      `README.md alone has ${alone(a.figures, b.figures)}; ` +
      `${name} alone has ${alone(b.figures, a.figures)}`;
    expect(b.figures, `the figures ${where} must be the same: ${differ}`).toEqual(a.figures);
    expect(b.otherBlocks, `the number of other code blocks ${where}`).toBe(a.otherBlocks);
    b.other.forEach((block, k) => {
      if (CJK.test(block)) return; // a diagram or a file list, translated
      expect(block, `other code block ${k + 1} ${where}, left in English`).toBe(a.other[k]);
    });
    expect(b.details, `the number of <details> blocks ${where}`).toBe(a.details);
    expect(b.web, `the links to the web ${where}`).toEqual(a.web);
    expect(b.links, `the number of links to a heading, a file or a README ${where}`).toBe(a.links);
  });
}

export interface Refused {
  word: string; // 子 agent
  use: string; // 子代理
}

/** A glossary's table of concepts (English | use | refused), a row a concept; — refuses nothing. */
export function glossaryRows(glossary: string): { use: string; refused: string[] }[] {
  const rows = glossary.split('\n').filter((line) => /^\|.*\|\s*$/.test(line));
  return rows.flatMap((row) => {
    const cells = row
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.length !== 3 || /^:?-+:?$/.test(cells[0]) || cells[0] === 'English') return [];
    return [{ use: cells[1], refused: cells[2].split('、').filter((w) => w && w !== '—') }];
  });
}

/** A glossary as its own prose: every table row without its last column (the refused words). */
export function glossaryOwnWords(glossary: string): string {
  const lines = glossary.split('\n').map((line) => {
    return /^\|.*\|\s*$/.test(line) ? line.replace(/\|[^|]*\|\s*$/, '|') : line;
  });
  return lines.join('\n');
}

/** A glossary's refused words: the third column of its table of concepts, split at 、. */
export function refusedWords(glossary: string): Refused[] {
  return glossaryRows(glossary).flatMap(({ use, refused }) => {
    return refused.map((word) => ({ word, use }));
  });
}

/**
 * The prose of a markdown text, line for line: code blocks emptied, inline code and link targets
 * taken out (they quote code, commands and paths as they are).
 */
export function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    if (fenced) return '';
    return line.replace(/`[^`]*`/g, ' ').replace(/\]\([^)]*\)/g, ']');
  });
}

/** A pattern for `word` where its spaces may be any white space or none: "子 agent", 子Agent. */
export function wordPattern(word: string, flags = 'i'): RegExp {
  const parts = word.split(/\s+/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('\\s*'), flags);
}

/** Every term a glossary's second column allows, split at 、. */
export function allowedWords(glossary: string): string[] {
  return glossaryRows(glossary).flatMap((row) => row.use.split('、').filter(Boolean));
}

/**
 * Each refused word used in `markdown`'s prose, as "line N: word (use …)". "子 agent" also finds
 * 子agent and 子 Agent. A refused word that is part of an allowed one (ハンドラ in ハンドラー, サーバ
 * in サーバー) is looked for with the allowed ones blanked out first.
 */
export function refusedIn(markdown: string, refused: Refused[], allowed: string[]): string[] {
  const lines = prose(markdown);
  const misses: string[] = [];
  for (const { word, use } of refused) {
    const pattern = wordPattern(word);
    const longer = allowed.filter((a) => a !== word && pattern.test(a));
    lines.forEach((line, i) => {
      const blanked = longer.reduce((text, a) => text.replace(wordPattern(a, 'gi'), ' '), line);
      if (pattern.test(blanked)) misses.push(`line ${i + 1}: ${word} (use ${use})`);
    });
  }
  return misses;
}
