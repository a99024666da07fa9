/**
 * The rules of a chapter folder (see the style guide), as functions of a repo root, so that
 * tests/layout.test.ts checks the repo and `npm run lines -- --check` reports the size limits:
 *
 * - each code.ts opens with the list of the chapter's files, and says which are new and which
 *   changed; any other is a byte-identical copy of the previous chapter's (copies must not drift);
 * - a chapter imports only its own folder and ../shared/ (and packages);
 * - no line over 100 characters, no module-level `let` or `var`;
 * - code.ts at most 300 lines (the first chapter's 170), any other file 400, and the shared
 *   runtime 465 in all;
 * - outside the chapter folders, no code file over 600 lines.
 *
 * Each check returns a list of problems, written for the maintainer who has to fix them: empty
 * when all is well.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

export const LIMITS = {
  width: 100, // characters in a line
  codeLines: 300, // lines in a chapter's code.ts
  firstCodeLines: 170, // the first chapter's code.ts: the whole loop on a couple of screens
  fileLines: 400, // lines in any other file of a chapter
  // lines in the shared runtime, all files together (450 until jobs left in the background,
  // Ctrl+Z where nothing can suspend, and hidden passwords came in: a few lines each)
  runtimeLines: 465,
  // lines in any code file outside the chapter folders (shared/, tests/, scripts/, …): the files a
  // maintainer opens first when something breaks (issue 35 split the three that were towers)
  otherFileLines: 600,
};

// shared/ also holds the fake API and the offline model (test and demo machinery) and the --trace
// recorder (inspection machinery): none of them is needed to run a chapter, so none is the runtime.
const NOT_RUNTIME = ['fake-anthropic.ts', 'offline-model.ts', 'trace.ts'];

/** Lines as `wc -l` counts them: newline characters. */
export const countLines = (text: string) => text.split('\n').length - 1;

const read = (root: string, ...path: string[]) => readFileSync(join(root, ...path), 'utf8');

/** The chapter folders under `root` (`s01_agent_loop`, …): those with a code.ts, in order. */
export function chapterFolders(root: string): string[] {
  const folders = readdirSync(root).filter((d) => /^s\d\d_/.test(d));
  return folders.filter((d) => existsSync(join(root, d, 'code.ts'))).sort();
}

/** The .ts files at the top of a chapter folder (not exercises/, not dotfiles), sorted. */
export function chapterFiles(root: string, chapter: string): string[] {
  const names = readdirSync(join(root, chapter)).filter((f) => f.endsWith('.ts'));
  const visible = names.filter((f) => !f.startsWith('.'));
  return visible.filter((f) => statSync(join(root, chapter, f)).isFile()).sort();
}

/** The files of the shared runtime: shared/*.ts without the fake API, offline model and tracer. */
export function runtimeFiles(root: string): string[] {
  const names = readdirSync(join(root, 'shared')).filter((f) => f.endsWith('.ts'));
  return names.filter((f) => !NOT_RUNTIME.includes(f)).sort();
}

// ── The file list in code.ts's header ─────────────────────────────────────────────────────────

/** One entry of the list: ` *   subagent.ts   who runs a loop, …` → { name, mark: '+', … }. */
export interface ListedFile {
  name: string;
  mark: '+' | '~' | '';
  description: string;
}

export const HEADER_FORMAT = `code.ts should open with a doc comment listing the chapter's files,
like this one of s03's:
 * Files, in reading order. New in s03: subagent.ts. Changed to wire it in: code.ts, tools.ts.
 * The others are s02's, unchanged. The lesson: npm run diff s02 s03
 *   code.ts          the loop and the REPL
 *   subagent.ts      who runs a loop, and the agent tool: a fresh loop for one task
 *   bash.ts          the bash tool, and the gate in front of it
 *   ../shared/       the runtime no chapter teaches: client, terminal, CLI, processes, stream
(in the first chapter: "Files, in reading order. New in s01: code.ts.")`;

const LIST_START = /^ \* Files, in reading order\./;
const ENTRY = /^ \*   ([\w.-]+\.ts) +(\S.*)$/;
const SHARED_ENTRY = /^ \*   \.\.\/shared\/ /;
const NAMES = String.raw`[\w.-]+\.ts(?:, [\w.-]+\.ts)*`;
const NEW_FILES = new RegExp(String.raw`New in (s\d\d): (${NAMES})`);
const CHANGED_FILES = new RegExp(String.raw`Changed to wire it in: (${NAMES})`);

/**
 * The file list of a code.ts's header: the chapter its summary says files are new in (`s03`), the
 * files it names as new or changed, and the entries, each marked from the summary ('+' new, '~'
 * changed, '' a copy); undefined where there is no list. The summary runs from the heading to the
 * first entry; the entries (and the ../shared/ line, which names no file of the chapter) follow,
 * and the first other line ends them.
 */
export function parseFileList(code: string) {
  const lines = code.split('\n');
  const start = lines.findIndex((line) => LIST_START.test(line));
  if (start === -1) return undefined;
  let i = start;
  let summary = '';
  const isEntry = (line: string) => ENTRY.test(line) || SHARED_ENTRY.test(line);
  while (i < lines.length && /^ \* /.test(lines[i]) && !isEntry(lines[i])) {
    summary += ` ${lines[i].slice(3)}`;
    i++;
  }
  const found = NEW_FILES.exec(summary);
  const newIn = found?.[1];
  const newFiles = found ? found[2].split(', ') : [];
  const changed = CHANGED_FILES.exec(summary)?.[1].split(', ') ?? [];
  const files: ListedFile[] = [];
  for (const line of lines.slice(i)) {
    if (SHARED_ENTRY.test(line)) continue;
    const entry = ENTRY.exec(line);
    if (!entry) break;
    const name = entry[1];
    const mark = newFiles.includes(name) ? '+' : changed.includes(name) ? '~' : '';
    files.push({ name, mark, description: entry[2] });
  }
  return { newIn, named: [...newFiles, ...changed], files };
}

/** Where two different texts first differ, by line, quoting both lines. */
function firstDifference(before: string, after: string, names: [string, string]): string {
  // 'a\nb\n' → ['a', 'b']: the newline ends the last line, it does not start another.
  const lines = (text: string) => text.replace(/\n$/, '').split('\n');
  const [a, b] = [lines(before), lines(after)];
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i === a.length && i === b.length) return 'only the newline at the end differs';
  const show = (lines: string[]) => {
    return i < lines.length ? JSON.stringify(lines[i]) : '(the file has ended)';
  };
  return `line ${i + 1} differs:\n    ${names[0]}: ${show(a)}\n    ${names[1]}: ${show(b)}`;
}

/**
 * The header's file list against the folder: every file listed and every listed file there; a
 * file the summary calls new is not in `previous` (the previous chapter's folder), one it calls
 * changed is there and differs, and any other is a byte-identical copy. In the first chapter every
 * file is new.
 */
export function checkFileList(root: string, chapter: string, previous?: string): string[] {
  const list = parseFileList(read(root, chapter, 'code.ts'));
  if (!list || list.files.length === 0) {
    const found = list ? 'a "Files, in reading order." line, no entries after it' : 'no list';
    return [`${chapter}/code.ts: found ${found}. ${HEADER_FORMAT}`];
  }
  const problems: string[] = [];
  const number = chapter.slice(0, 3);
  if (list.newIn !== number) {
    const said = list.newIn ? `"New in ${list.newIn}: …"` : 'no "New in sNN: …"';
    problems.push(`${chapter}/code.ts: the file list says ${said}; expected "New in ${number}: …"`);
  }
  const files = chapterFiles(root, chapter);
  const listed = list.files.map((f) => f.name);
  for (const name of list.named.filter((f) => !listed.includes(f))) {
    problems.push(`${chapter}/code.ts names ${name} as new or changed, but has no entry for it`);
  }
  for (const file of files.filter((f) => !listed.includes(f))) {
    problems.push(
      `${chapter}/${file} is not in the file list of ${chapter}/code.ts: add a line ` +
        `" *   ${file}   what it holds", and name it as new or changed if it is`,
    );
  }
  for (const [i, entry] of list.files.entries()) {
    const where = `${chapter}/code.ts lists ${entry.name}`;
    if (listed.indexOf(entry.name) !== i) {
      problems.push(`${where} twice`);
      continue;
    }
    if (!files.includes(entry.name)) {
      problems.push(`${where}, but there is no ${chapter}/${entry.name}`);
      continue;
    }
    const here = read(root, chapter, entry.name);
    const before = previous && existsSync(join(root, previous, entry.name));
    const copy = before ? read(root, previous, entry.name) : undefined;
    if (!previous) {
      if (entry.mark !== '+') {
        problems.push(`${where}, but not as new: in the first chapter every file is new`);
      }
    } else if (entry.mark === '+') {
      if (copy !== undefined) {
        const fix = 'name it as changed if it changed, or not at all';
        problems.push(`${where} as new, but ${previous} has one: ${fix}`);
      }
    } else if (copy === undefined) {
      const as = entry.mark === '~' ? 'as changed' : 'as a copy';
      problems.push(`${where} ${as}, but ${previous} has no ${entry.name}: name it as new`);
    } else if (entry.mark === '~' && copy === here) {
      const same = `it is byte-identical to ${previous}'s`;
      problems.push(`${where} as changed, but ${same}: leave it out of "Changed to wire it in"`);
    } else if (entry.mark === '' && copy !== here) {
      const names: [string, string] = [`${previous}/${entry.name}`, `${chapter}/${entry.name}`];
      problems.push(
        `${chapter}/${entry.name} is not named as changed, so it must be a byte-identical copy ` +
          `of ${previous}'s, but ${firstDifference(copy, here, names)}\n` +
          `  Copy the file over, or name it in "Changed to wire it in" in ${chapter}/code.ts.`,
      );
    }
  }
  return problems;
}

// ── Imports ───────────────────────────────────────────────────────────────────────────────────

/** A chapter's .ts files at any depth, but not exercises/ nor dotfiles (paths in the folder). */
export function chapterSources(root: string, chapter: string, under = ''): string[] {
  return readdirSync(join(root, chapter, under), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(under, entry.name);
    if (entry.name.startsWith('.') || path === 'exercises') return [];
    if (entry.isDirectory()) return chapterSources(root, chapter, path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

// `import … from '…'` and `export … from '…'` (across lines), `import '…'`, `import('…')`.
const SPECIFIERS = [
  /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** Files that import from outside their chapter folder and ../shared/ (packages are fine). */
export function checkImports(root: string, chapter: string): string[] {
  const problems: string[] = [];
  for (const file of chapterSources(root, chapter)) {
    const code = read(root, chapter, file);
    const specifiers = SPECIFIERS.flatMap((re) => [...code.matchAll(re)].map((m) => m[1]));
    for (const spec of new Set(specifiers)) {
      if (!spec.startsWith('.') && !spec.startsWith('/')) continue; // a package, or node:…
      const target = posix.normalize(posix.join(chapter, posix.dirname(file), spec));
      if (target.startsWith(`${chapter}/`) || target.startsWith('shared/')) continue;
      problems.push(
        `${chapter}/${file} imports '${spec}': a chapter imports only its own folder (./) and ` +
          `../shared/; copy what it needs into ${chapter}/ instead`,
      );
    }
  }
  return problems;
}

// ── Style and size ────────────────────────────────────────────────────────────────────────────

/** Lines over the width limit, one problem per file, naming the first few. */
function wideLines(path: string, text: string): string[] {
  const wide = text.split('\n').flatMap((line, i) => {
    const width = [...line].length;
    return width > LIMITS.width ? [`line ${i + 1} (${width})`] : [];
  });
  if (wide.length === 0) return [];
  const some = wide.length > 5 ? `${wide.slice(0, 5).join(', ')}, …` : wide.join(', ');
  const count = wide.length > 1 ? `${wide.length} lines are` : 'a line is';
  return [`${path}: ${count} over ${LIMITS.width} characters: ${some}`];
}

/** Lines too wide, and files too long, in a chapter (the first chapter's code.ts is shorter). */
export function checkSizes(root: string, chapter: string, options: { first: boolean }): string[] {
  const problems: string[] = [];
  for (const file of chapterSources(root, chapter)) {
    const text = read(root, chapter, file);
    problems.push(...wideLines(`${chapter}/${file}`, text));
    const isCode = file === 'code.ts';
    const codeLimit = options.first ? LIMITS.firstCodeLines : LIMITS.codeLines;
    const limit = isCode ? codeLimit : LIMITS.fileLines;
    const lines = countLines(text);
    if (lines > limit) {
      const whose = options.first ? "the first chapter's" : "a chapter's";
      const what = isCode ? `${whose} code.ts` : 'a chapter file';
      const advice = isCode ? 'move a mechanism into a file of its own' : 'split it by concern';
      problems.push(`${chapter}/${file}: ${lines} lines, over the ${limit} for ${what}; ${advice}`);
    }
  }
  return problems;
}

/** Module-level `let` and `var`: state belongs to an object its caller creates and passes. */
export function checkModuleState(root: string, chapter: string): string[] {
  return chapterSources(root, chapter).flatMap((file) => {
    const lines = read(root, chapter, file).split('\n');
    return lines.flatMap((line, i) => {
      if (!/^(?:export )?(?:let|var) /.test(line)) return [];
      return [
        `${chapter}/${file}:${i + 1}: module-level state: ${line.trim()}\n` +
          '  What a mechanism keeps between calls lives in an object its caller creates and ' +
          'passes.',
      ];
    });
  });
}

/** The shared runtime is small: every line of it is a line the reader does not get taught. */
export function checkRuntime(root: string): string[] {
  const files = runtimeFiles(root);
  const sizes = files.map((f) => [f, countLines(read(root, 'shared', f))] as const);
  const total = sizes.reduce((sum, [, lines]) => sum + lines, 0);
  const problems: string[] = [];
  if (total > LIMITS.runtimeLines) {
    const each = sizes.map(([f, lines]) => `${f} ${lines}`).join(', ');
    problems.push(
      `the shared runtime (shared/*.ts without ${NOT_RUNTIME.join(', ')}) has ${total} lines, ` +
        `over the ${LIMITS.runtimeLines} allowed (${each}): ` +
        'what a chapter teaches belongs in the chapter',
    );
  }
  return problems;
}

// ── Outside the chapters ──────────────────────────────────────────────────────────────────────

// Code, by its extension. Prose (READMEs: see readme-reading.test.ts) and data (recorded streams,
// package-lock.json) have limits of their own, or none.
const CODE = /\.(?:ts|js|mjs|cjs|css|sh)$/;

/**
 * The code files outside the chapter folders, node_modules/ and dotfolders: paths from `root`.
 * Not mine/ either: a reader's own build (npm run begin) is theirs, whatever its size.
 */
export function filesOutsideChapters(root: string, under = ''): string[] {
  return readdirSync(join(root, under), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(under, entry.name);
    if (entry.name.startsWith('.') || entry.name === 'node_modules') return [];
    if (under === '' && entry.name === 'mine') return [];
    if (under === '' && /^s\d\d_/.test(entry.name)) return []; // a chapter: its own limits
    if (entry.isDirectory()) return filesOutsideChapters(root, path);
    return entry.isFile() && CODE.test(entry.name) ? [path] : [];
  }).sort();
}

/** Code files outside the chapters over their limit: split along their sections, a file each. */
export function checkOtherFiles(root: string): string[] {
  return filesOutsideChapters(root).flatMap((path) => {
    const lines = countLines(read(root, path));
    if (lines <= LIMITS.otherFileLines) return [];
    return [
      `${path}: ${lines} lines, over the ${LIMITS.otherFileLines} for a file outside the ` +
        'chapters; split it along its sections, a file each (as shared/fake/ and ' +
        'scripts/inspector/ are), behind an entry file that says which holds what',
    ];
  });
}

/** Every rule for one chapter, by rule. `previous` is the chapter before it, if any. */
export function checkChapter(root: string, chapter: string, previous?: string) {
  return {
    files: checkFileList(root, chapter, previous),
    imports: checkImports(root, chapter),
    state: checkModuleState(root, chapter),
    sizes: checkSizes(root, chapter, { first: previous === undefined }),
  };
}

/** Every rule for every chapter under `root`, and for the shared runtime: the problems found. */
export function checkLayout(root: string): string[] {
  const chapters = chapterFolders(root);
  const problems = chapters.flatMap((chapter, i) => {
    return Object.values(checkChapter(root, chapter, chapters[i - 1])).flat();
  });
  return [...problems, ...checkRuntime(root)];
}

/**
 * The size limits only (width, lines per file, the runtime's total, the files outside the
 * chapters): `npm run lines -- --check`
 */
export function checkLimits(root: string): string[] {
  const chapters = chapterFolders(root);
  const problems = chapters.flatMap((chapter, i) => checkSizes(root, chapter, { first: i === 0 }));
  return [...problems, ...checkRuntime(root), ...checkOtherFiles(root)];
}
