/**
 * npm run lines — how long each chapter is, and how much a reader has to read to get from the
 * previous chapter to it. A markdown table, one row per chapter, then the shared runtime's size.
 * Lines are counted as `wc -l` counts them.
 *
 *   npm run lines -- --check   also name every size limit a chapter breaks, and any code file
 *                              outside the chapters over 600 lines (exit 1 if any)
 *   npm run lines -- --write   put the table in README.md (and in README.zh.md, README.ja.md)
 *                              between <!-- lines:start --> and <!-- lines:end -->, where they are
 *
 * tests/layout.test.ts checks that a README with the markers shows what this computes.
 */
import { diffLines } from 'diff';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EDITIONS } from './chapters.ts';
import { languageOf } from './reading.ts';
import { chapterFiles, chapterFolders, checkLimits, countLines } from '../tests/helpers/layout.ts';
import { runtimeFiles } from '../tests/helpers/layout.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface ChapterLines {
  chapter: string; // s02_tools
  code: number; // lines of code.ts
  largest?: { name: string; lines: number }; // the largest file other than code.ts
  files: number;
  // Against the previous chapter (the first chapter: against nothing, so all of it is added).
  added: number;
  removed: number;
  toRead: number; // the lines of its new files, plus the lines added to the files it changed
}

/** The sizes of every chapter under `root`, and the shared runtime's lines in all. */
export function countChapterLines(root: string): { chapters: ChapterLines[]; runtime: number } {
  const text = (chapter: string, file: string) => readFileSync(join(root, chapter, file), 'utf8');
  const folders = chapterFolders(root);
  const chapters = folders.map((chapter, i): ChapterLines => {
    const previous = folders[i - 1];
    const files = chapterFiles(root, chapter);
    const before = previous ? chapterFiles(root, previous) : [];
    const sizes = files.map((name) => ({ name, lines: countLines(text(chapter, name)) }));
    const others = sizes.filter((f) => f.name !== 'code.ts');
    const largest = others.reduce<ChapterLines['largest']>((a, b) => {
      return !a || b.lines > a.lines ? b : a;
    }, undefined);

    let added = 0;
    let removed = 0;
    let toRead = 0;
    for (const { name, lines } of sizes) {
      if (!before.includes(name)) {
        added += lines;
        toRead += lines;
        continue;
      }
      for (const change of diffLines(text(previous, name), text(chapter, name))) {
        if (change.added) {
          added += change.count;
          toRead += change.count;
        } else if (change.removed) removed += change.count;
      }
    }
    for (const name of before.filter((f) => !files.includes(f))) {
      removed += countLines(text(previous, name));
    }
    const code = sizes.find((f) => f.name === 'code.ts')?.lines ?? 0;
    return { chapter, code, largest, files: files.length, added, removed, toRead };
  });
  const runtime = runtimeFiles(root).reduce((sum, f) => {
    return sum + countLines(readFileSync(join(root, 'shared', f), 'utf8'));
  }, 0);
  return { chapters, runtime };
}

// The table's words in each README's language: README.zh.md gets a Chinese table, README.ja.md
// a Japanese one.
const WORDS = {
  en: {
    head: '| Chapter | code.ts | Largest other file | Files | To read | Removed |',
    notes: (runtime: number) => [
      'Against the previous chapter: *to read* is the lines of its new files plus the lines added '
        + 'to\nthe files it changed; *removed*, the lines taken out of the files it changed.',
      '',
      'The shared runtime (shared/*.ts, the fake API, offline model and tracer aside): '
        + `${runtime} lines.`,
    ],
  },
  zh: {
    head: '| 章节 | code.ts | 其他文件中最大的 | 文件数 | 要读 | 删去 |',
    notes: (runtime: number) => [
      '都和上一章比：*要读*是新文件的行数，加上改动过的文件里新增的行数；*删去*是从改动过的文件里',
      '删掉的行数。',
      '',
      `共享运行时（shared/*.ts，不算模拟 API、离线演示模型和 trace 记录器）：${runtime} 行。`,
    ],
  },
  ja: {
    head: '| 章 | code.ts | ほかで最大のファイル | ファイル数 | 読む行 | 削除 |',
    notes: (runtime: number) => [
      'どれも前の章との比較です。*読む行*は新しいファイルの行数と、変更したファイルに加わった行数の',
      '合計、*削除*は変更したファイルから消えた行数です。',
      '',
      '共有のランタイム（shared/*.ts。フェイク API、オフラインのデモモデル、トレースは除く）：'
        + `${runtime} 行。`,
    ],
  },
};

/** The table (and the runtime line under it) as markdown, in the language of `readme`. */
export function linesTable(root: string, readme = 'README.md'): string {
  const words = WORDS[languageOf(readme)];
  const { chapters, runtime } = countChapterLines(root);
  const rows = chapters.map((c) => {
    const largest = c.largest ? `${c.largest.name} (${c.largest.lines})` : '—';
    const cells = [c.chapter, c.code, largest, c.files, c.toRead, c.removed];
    return `| ${cells.join(' | ')} |`;
  });
  return [words.head, '| :-- | --: | :-- | --: | --: | --: |', ...rows, '', ...words.notes(runtime)]
    .join('\n');
}

export const START = '<!-- lines:start -->';
export const END = '<!-- lines:end -->';

/** What a README holds between the markers (trimmed), or undefined where it has no markers. */
export function tableInReadme(readme: string): string | undefined {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END, start);
  if (start === -1 || end === -1) return undefined;
  return readme.slice(start + START.length, end).trim();
}

/** The README with `table` between its markers (it must have them). */
function withTable(readme: string, table: string): string {
  const start = readme.indexOf(START) + START.length;
  return `${readme.slice(0, start)}\n${table}\n${readme.slice(readme.indexOf(END, start))}`;
}


function main() {
  const args = process.argv.slice(2);
  const unknown = args.find((a) => a !== '--check' && a !== '--write');
  if (unknown) {
    console.error(`Unknown argument: ${unknown}`);
    console.error('Usage: npm run lines [-- --check | --write]');
    process.exit(2);
  }
  console.log(linesTable(ROOT));

  if (args.includes('--write')) {
    const marked = EDITIONS.filter((name) => {
      const path = join(ROOT, name);
      return existsSync(path) && tableInReadme(readFileSync(path, 'utf8')) !== undefined;
    });
    for (const name of marked) {
      const path = join(ROOT, name);
      writeFileSync(path, withTable(readFileSync(path, 'utf8'), linesTable(ROOT, name)));
      console.error(`\nWrote the table into ${name}.`);
    }
    if (marked.length === 0) {
      console.error(`\nNo README has the ${START} … ${END} markers: nothing written.`);
    }
  }

  if (args.includes('--check')) {
    const problems = checkLimits(ROOT);
    if (problems.length === 0) {
      console.error('\nEvery chapter, and every file outside them, is within the size limits.');
      return;
    }
    console.error(`\n${problems.length} size limit(s) broken:\n`);
    for (const problem of problems) console.error(`  ${problem}`);
    process.exit(1);
  }
}

// Run only as a script: tests import countChapterLines and linesTable.
const self = realpathSync(fileURLToPath(import.meta.url));
if (process.argv[1] && realpathSync(process.argv[1]) === self) main();
