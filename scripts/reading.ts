/**
 * npm run reading — how long each README takes to read: the words on its first-read path (what a
 * reader reads top to bottom without opening anything), the words in its folds (`<details>`
 * blocks, opened by a click), and the path's reading time. Code quotes count as words too.
 *
 *   npm run reading -- --check   also name every README over its limit (exit 1 if any)
 *   npm run reading -- --write   put the reading times where the READMEs show them: each
 *                                README's "Reading time" line, and the top README's table of
 *                                chapters (its last column); and each chapter README's
 *                                stage list (scripts/stage-lists.ts)
 *
 * How words are counted: in English, as `wc -w` counts them. In Chinese, a word is about two
 * characters: each Han character counts half a word, and any other run of letters or digits a
 * word. In Japanese, words mean nothing: a reader reads about 500 characters (kana and kanji) of
 * technical prose a minute, so each counts 230/500 of a word, and code and Latin words count as
 * in English. Punctuation, markup and link targets are not counted. A `<summary>` line (a fold's
 * title) is on the path. Reading time: 230 words a minute, rounded up; the limits are the same
 * in every language. tests/readme-reading.test.ts keeps the figures true and the limits kept.
 */
import { accessSync, constants as fs, existsSync, readdirSync, readFileSync, realpathSync }
  from 'node:fs';
import { statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EDITIONS } from './chapters.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WORDS_A_MINUTE = 230;

/** The limits, in words: a chapter's path (s01's is shorter), any README with its folds. */
export const LIMITS = { path: 2_500, firstChapterPath: 2_000, topPath: 1_500, total: 8_000 };

const HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/g;
// Japanese: kanji, 々, hiragana, katakana (ー included) and half-width katakana.
const KANA_KANJI = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\u3040-\u30ff\uff66-\uff9f]/g;
const JAPANESE_CHARACTERS_A_MINUTE = 500;
// `*` or `**` before or after a Han, kana or CJK punctuation character.
const CJK_TEXT = '[\\u3000-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff\\uff00-\\uffef]';
const EMPHASIS_BY_WIDE = new RegExp(`\\*{1,2}(?=${CJK_TEXT})|(?<=${CJK_TEXT})\\*{1,2}`, 'g');

export type Language = 'en' | 'zh' | 'ja';

/** The language of a README, from its name: README.zh.md is Chinese, README.ja.md Japanese. */
export function languageOf(readme: string): Language {
  if (readme.endsWith('.zh.md')) return 'zh';
  if (readme.endsWith('.ja.md')) return 'ja';
  return 'en';
}

/**
 * Words in `text`: wc -w's count, where a Han character counts half a word; in Japanese, where
 * a kana or kanji counts 230/500 of a word (500 a minute).
 */
export function countWords(text: string, language: Language = 'en'): number {
  // A link's target is not read: `[Try it](#try-it)` is two words, `[試してみる](#試してみる)` five
  // characters.
  text = text.replace(/\[([^\]]*)\]\([^)\s]*\)/g, '$1');
  const wide = language === 'ja' ? KANA_KANJI : HAN;
  const characters = text.match(wide)?.length ?? 0;
  // What is left: runs of anything but white space and CJK punctuation, each a word.
  // Emphasis glued to Chinese or Japanese (`**加粗**`) is markup, as it is glued to a word in
  // English: it is not a word of its own.
  text = text.replace(EMPHASIS_BY_WIDE, '');
  const rest = text.replace(wide, ' ').split(/[\s\u3000-\u303f\uff00-\uffef]+/).filter(Boolean);
  const perWord = language === 'ja' ? JAPANESE_CHARACTERS_A_MINUTE / WORDS_A_MINUTE : 2;
  return rest.length + Math.round(characters / perWord);
}

/** A README split into what is on the path and what is in folds (nested folds included). */
export function splitPath(markdown: string): { path: string; folds: string } {
  const text = markdown.replace(/<!--[\s\S]*?-->/g, ' ');
  let path = '';
  let folds = '';
  let depth = 0;
  // Tags on their own or inside a line; a <summary> stays on the path.
  for (const part of text.split(/(<details\b[^>]*>|<\/details>|<summary>[\s\S]*?<\/summary>)/)) {
    if (/^<details\b/.test(part)) depth++;
    else if (part === '</details>') depth = Math.max(0, depth - 1);
    else if (part.startsWith('<summary>')) path += ` ${part.replace(/<\/?summary>/g, ' ')} `;
    else if (depth > 0) folds += part;
    else path += part;
  }
  return { path, folds };
}

export interface Reading {
  readme: string; // s01_agent_loop/README.md
  path: number; // words on the path
  folds: number; // words in folds
  minutes: number; // reading time of the path
  pathLimit: number;
}

/** The figures for one README. */
export function measure(root: string, readme: string): Reading {
  const { path, folds } = splitPath(readFileSync(join(root, readme), 'utf8'));
  const language = languageOf(readme);
  const words = countWords(path, language);
  const chapter = dirname(readme);
  let pathLimit = LIMITS.path;
  if (chapter === '.') pathLimit = LIMITS.topPath;
  else if (chapter.startsWith('s01_')) pathLimit = LIMITS.firstChapterPath;
  const minutes = Math.ceil(words / WORDS_A_MINUTE);
  return { readme, path: words, folds: countWords(folds, language), minutes, pathLimit };
}

/**
 * Every README a reader meets, whether it is there or not: the top one, shared/'s, each
 * chapter's; English, Chinese and Japanese.
 */
export function readmes(root: string): string[] {
  const chapters = readdirSync(root).filter((d) => /^s\d\d_/.test(d)).sort();
  const folders = ['.', 'shared', ...chapters];
  return folders.flatMap((f) => EDITIONS.map((n) => join(f, n)));
}

/** Why `readme` cannot be measured, in a few words; undefined if it can be. */
function unreadable(root: string, readme: string): string | undefined {
  const info = statSync(join(root, readme), { throwIfNoEntry: false });
  if (!info) return 'missing';
  if (info.isDirectory()) return 'a directory, not a file';
  if (!info.isFile()) return 'not a regular file';
  try {
    accessSync(join(root, readme), fs.R_OK);
  } catch (err) {
    return `cannot be read (${(err as NodeJS.ErrnoException).code})`;
  }
  return undefined;
}

/** What is over a limit, in words a reader can act on. */
export function overLimits(r: Reading): string[] {
  const problems: string[] = [];
  if (r.path > r.pathLimit) problems.push(`${r.readme}: ${r.path} words on the path (at most ${r.pathLimit})`);
  const total = r.path + r.folds;
  if (total > LIMITS.total) problems.push(`${r.readme}: ${total} words in all (at most ${LIMITS.total})`);
  return problems;
}

// ── Where the READMEs show the figures ───────────────────────────────────────────────────────
// A chapter README: a line that starts "*Reading time: about N minutes" (English) or
// "*阅读时间：约 N 分钟" (Chinese) or "*読了時間：約 N 分" (Japanese), under its title.
export const TIME_LINE =
  /(\*(?:Reading time: about|阅读时间：约|読了時間：約) )(\d+)( (?:minutes?|分钟|分))/;

/**
 * A row of the top README's table of chapters that ends with the chapter's reading time:
 *   | [s01_agent_loop](s01_agent_loop/) | The loop: … | 9 min |
 * (Chinese: `| 9 分钟 |`, Japanese: `| 9 分 |`)
 */
export const CHAPTER_ROW = /^(\| \[(s\d\d_\w+)\]\(.*\| )(\d+)( (?:min|分钟|分) \|)$/gm;

/** The README with every reading time it shows set to what `measure` says. */
export function withReadingTimes(root: string, readme: string, text: string): string {
  const minutesOf = (chapter: string) => measure(root, join(chapter, basename(readme))).minutes;
  return text
    .replace(TIME_LINE, (_, a, _n, c) => `${a}${measure(root, readme).minutes}${c}`)
    .replace(CHAPTER_ROW, (row, a, chapter, _n, c) => {
      const chapterReadme = join(root, chapter, basename(readme));
      return existsSync(chapterReadme) ? `${a}${minutesOf(chapter)}${c}` : row;
    });
}

/** The READMEs whose reading times are out of date, written again; what it wrote. */
function write(root: string): string[] {
  const wrote: string[] = [];
  for (const readme of readmes(root)) {
    const file = join(root, readme);
    const text = readFileSync(file, 'utf8');
    const next = withReadingTimes(root, readme, text);
    if (next !== text) {
      writeFileSync(file, next);
      wrote.push(`Wrote the reading times into ${readme}.`);
    }
  }
  return wrote;
}

export interface Outcome {
  code: number; // 0 done; 1 a README missing or unreadable, or (--check) over a limit; 2 usage
  stdout: string;
  stderr: string;
}

/** The command, as a function of its arguments and the repo's folder. */
export function reading(args: string[], root: string): Outcome {
  const unknown = args.find((a) => a !== '--check' && a !== '--write');
  if (unknown) {
    const stderr = `Unknown argument: ${unknown}\nUsage: npm run reading [-- --check | --write]`;
    return { code: 2, stdout: '', stderr };
  }
  // A README that is not there, or not a file, is named in one line; the others are measured.
  const missing = readmes(root).flatMap((readme) => {
    const why = unreadable(root, readme);
    return why ? [`${readme}: ${why}`] : [];
  });
  const notes: string[] = [];
  // Not with one missing: a chapter row of the top README would need it.
  if (args.includes('--write') && missing.length === 0) notes.push(...write(root));
  const readable = readmes(root).filter((readme) => !unreadable(root, readme));
  const figures = readable.map((readme) => measure(root, readme));
  const table = [
    '| README | Path (words) | Folds (words) | Reading the path |',
    '| :-- | --: | --: | --: |',
    ...figures.map((r) => `| ${r.readme} | ${r.path} | ${r.folds} | ${r.minutes} min |`),
  ];
  const problems = args.includes('--check') ? figures.flatMap(overLimits) : [];
  const list = (lines: string[]) => lines.map((line) => `  ${line}`).join('\n');
  if (missing.length) {
    const how = args.includes('--write') ? ' (nothing written)' : '';
    notes.push(`\n${missing.length} README(s) missing or unreadable${how}:\n${list(missing)}`);
  }
  if (problems.length) notes.push(`\n${problems.length} limit(s) broken:\n${list(problems)}`);
  else if (args.includes('--check') && !missing.length) {
    notes.push('\nEvery README is within its limits.');
  }
  const code = missing.length || problems.length ? 1 : 0;
  return { code, stdout: table.join('\n'), stderr: notes.join('\n') };
}

async function main() {
  // --write also writes each chapter README's stage list (scripts/stage-lists.ts): it imports
  // the grader's stage files, so it stays out of reading(), which the tests call on copies.
  if (process.argv.includes('--write')) {
    const { writeStageLists } = await import('./stage-lists.ts');
    const { wrote, notes } = await writeStageLists(ROOT);
    for (const line of [...wrote, ...notes]) console.error(line);
  }
  const outcome = reading(process.argv.slice(2), ROOT);
  if (outcome.stdout) console.log(outcome.stdout);
  if (outcome.stderr) console.error(outcome.stderr);
  process.exitCode = outcome.code;
}

// Run only as a script: tests import the functions.
const self = realpathSync(fileURLToPath(import.meta.url));
if (process.argv[1] && realpathSync(process.argv[1]) === self) await main();
