/**
 * Every README.md has a README.zh.md beside it, and the two stay in step: the same sections in the
 * same order, and in each section the same code (```ts quotes, ```sh commands), the same offline
 * examples, the same figures (every number of three digits or more, or with a decimal point), and
 * the same number of other code blocks and <details> blocks. Prose and diagrams are free to differ.
 * When a maintainer changes one version and not the other, the failure names the section.
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
import { maintainerSkip } from './helpers/committed.ts';
import { REPO, chapters } from './helpers/run-chapter.ts';

// The top README, the runtime's tour in shared/, and every chapter's.
const folders = ['.', ...(existsSync(join(REPO, 'shared', 'README.md')) ? ['shared'] : []), ...chapters()];

interface Section {
  heading: string; // as written, in its own language
  level: number;
  code: string[]; // ```ts and ```sh blocks, whole
  offline: string[]; // the <!-- offline examples --> block
  figures: string[]; // sorted
  otherBlocks: number;
  details: number;
}

/** A README cut at its ## and ### headings (ignoring headings inside code blocks). */
export function sections(markdown: string): Section[] {
  const out: Section[] = [];
  const section = (heading: string, level: number): Section => {
    return { heading, level, code: [], offline: [], figures: [], otherBlocks: 0, details: 0 };
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
      const offline = /<!-- offline examples -->\s*$/.test(lines.slice(0, i - body.length - 1).join('\n'));
      if (offline) current.offline.push(block);
      else if (fence[1] === 'ts' || fence[1] === 'sh') current.code.push(block);
      else current.otherBlocks++;
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
    current.figures.push(...figures(line.replace(/\]\([^)]*\)/g, ']'))); // link targets hold issue numbers
  }
  out.push(current);
  for (const s of out) s.figures.sort();
  return out;
}

const count = (list: string[], item: string) => list.filter((x) => x === item).length;

/** The numbers a text states: three digits or more (1,326 or 2026), or with a decimal point (14.3). */
function figures(text: string): string[] {
  return text.match(/\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+|\d{3,}/g) ?? [];
}

describe.each(folders)('%s: README.zh.md is in step with README.md', (folder) => {
  const english = join(REPO, folder, 'README.md');
  const chinese = join(REPO, folder, 'README.zh.md');
  it('has a Chinese version, and each links to the other', () => {
    expect(existsSync(chinese), `${folder}/README.zh.md is missing`).toBe(true);
    expect(readFileSync(english, 'utf8'), 'README.md links to the Chinese version near the top').toMatch(
      /^# .*\n\nEnglish · \[中文\]\(README\.zh\.md\)\n/,
    );
    // (and to the glossary, checked below)
    const links = /^# .*\n\n\[English\]\(README\.md\) · 中文(?: · \[术语表\]\([^)]*\))?\n/;
    const zhLinks = 'README.zh.md links to the English version near the top';
    expect(readFileSync(chinese, 'utf8'), zhLinks).toMatch(links);
  });

  // A chapter's READMEs quote its .ts files (the top-level README quotes none).
  const quoted = folder === '.' ? [] : ['*.ts'];
  const skip = maintainerSkip(folder, ['README.md', 'README.zh.md', ...quoted]);
  if (skip || !existsSync(chinese)) {
    it.skip(`the same sections, code, examples and figures — ${skip ?? 'no README.zh.md'}`);
    return;
  }
  const en = sections(readFileSync(english, 'utf8'));
  const zh = sections(readFileSync(chinese, 'utf8'));

  it('has the same sections in the same order', () => {
    const shape = (list: Section[]) => list.map((s) => s.level);
    const title = (s: Section | undefined) => (s ? `${'#'.repeat(s.level)} ${s.heading}` : '(none)');
    const outline = en.map((s, i) => `${title(s)}  ↔  ${title(zh[i])}`).join('\n');
    expect(shape(zh), `the outline of README.zh.md should match README.md's, heading for heading:\n${outline}`).toEqual(shape(en));
  });

  const each = it.each(en.map((s, i) => [s.heading, i] as const));
  each('section "%s": the same code, examples, figures and blocks', (heading, i) => {
    const a = en[i];
    const b = zh[i];
    if (!b) return expect.fail(`README.zh.md has no section where README.md has "${heading}"`);
    const where = `in the section "${heading}" (README.zh.md: "${b.heading}")`;
    expect(b.code, `the \`\`\`ts and \`\`\`sh blocks ${where} must be the same`).toEqual(a.code);
    expect(b.offline, `the offline examples ${where} must be the same`).toEqual(a.offline);
    const only = (x: string[], y: string[]) => x.filter((f, k) => x.indexOf(f) === k && count(x, f) > count(y, f));
    const alone = (x: string[], y: string[]) => only(x, y).join(', ') || 'none';
    const figuresDiffer = `README.md alone has ${alone(a.figures, b.figures)}; README.zh.md alone has ${alone(b.figures, a.figures)}`;
    expect(b.figures, `the figures ${where} must be the same: ${figuresDiffer}`).toEqual(a.figures);
    expect(b.otherBlocks, `the number of other code blocks ${where}`).toBe(a.otherBlocks);
    expect(b.details, `the number of <details> blocks ${where}`).toBe(a.details);
  });
});

const GLOSSARY = join(REPO, 'docs', 'glossary.zh.md');

interface Refused {
  word: string; // 子 agent
  use: string; // 子代理
}

/** The glossary's refused words: the 不用 column of its table of concepts, split at 、. */
export function refusedWords(glossary: string): Refused[] {
  const rows = glossary.split('\n').filter((line) => /^\|.*\|\s*$/.test(line));
  return rows.flatMap((row) => {
    const cells = row.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length !== 3 || /^:?-+:?$/.test(cells[0]) || cells[2] === '不用') return [];
    return cells[2].split('、').filter(Boolean).map((word) => ({ word, use: cells[1] }));
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

/** Each refused word used in `markdown`'s prose, as "line N: word (use …)". */
export function glossaryMisses(markdown: string, refused: Refused[]): string[] {
  const lines = prose(markdown);
  const misses: string[] = [];
  for (const { word, use } of refused) {
    // "子 agent" also finds 子agent and 子 Agent.
    const parts = word.split(/\s+/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(parts.join('\\s*'), 'i');
    lines.forEach((line, i) => {
      if (pattern.test(line)) misses.push(`line ${i + 1}: ${word} (use ${use})`);
    });
  }
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

  it('the glossary exists and refuses the variants', () => {
    expect(existsSync(GLOSSARY), 'docs/glossary.zh.md is missing').toBe(true);
    const words = refused.map((r) => r.word);
    expect(words, 'the 不用 column of its table of concepts').toEqual(
      expect.arrayContaining(['子 agent', '子智能体', '游览', '三级', '种子文章', '文件夹', '家目录']),
    );
  });

  it('finds a refused word in prose, not in code, and a handler left unglossed', () => {
    const text = '子Agent 读了 `文件夹`\n```sh\nls 游览\n```\n处理函数（handler）和 handler';
    expect(glossaryMisses(text, refusedWords(glossary))).toEqual([
      'line 1: 子 agent (use 子代理)',
      'line 5: "handler" after the gloss is 处理函数',
    ]);
  });

  it.each(folders)('%s/README.zh.md links the glossary once, next to its language links', (f) => {
    const text = readFileSync(join(REPO, f, 'README.zh.md'), 'utf8');
    const link = `${f === '.' ? '' : '../'}docs/glossary.zh.md`;
    const line = `[English](README.md) · 中文 · [术语表](${link})`;
    expect(text.split('\n')[2], `the language links: ${line}`).toBe(line);
    expect(text.split('glossary.zh.md').length - 1, 'one link to the glossary').toBe(1);
  });

  it.each(folders)('%s/README.zh.md uses the glossary’s words', (f) => {
    const text = readFileSync(join(REPO, f, 'README.zh.md'), 'utf8');
    expect(glossaryMisses(text, refused), 'words docs/glossary.zh.md refuses').toEqual([]);
  });

  it('the glossary itself uses its words (its 不用 column aside)', () => {
    const own = glossary.split('\n').map((line) => {
      return /^\|.*\|\s*$/.test(line) ? line.replace(/\|[^|]*\|\s*$/, '|') : line;
    });
    const handlerNote = (m: string) => !m.includes('handler');
    expect(glossaryMisses(own.join('\n'), refused).filter(handlerNote)).toEqual([]);
  });
});
