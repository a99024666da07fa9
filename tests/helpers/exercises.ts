/**
 * Exercise checks. Each chapter's `exercises/checks.ts` exports a list of checks; a check runs the
 * reader's code.ts (or any file given) as a subprocess against the fake and throws a message that
 * tells the reader what is still missing. `npm run check s01` runs them on the chapter as it is now.
 *
 * Each exercise also ships a reference solution as a patch (`exercises/NN-name.patch`, a unified
 * diff of one or more of the chapter's files, named from the repo root, so that `git apply
 * s02_tools/exercises/01-list-dir.patch` works there: `--- a/s02_tools/tools.ts`);
 * `tests/exercises.test.ts` proves every check fails on the chapter as shipped and passes once its
 * solution is applied (on the committed chapter: see committed.ts), and `npm run test:solved` that
 * `npm test` still passes with every solution applied.
 */
import { applyPatch, parsePatch } from 'diff';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from '../../scripts/chapters.ts';

export interface ExerciseCheck {
  /** File stem of the solution patch, e.g. '01-tool-timing'. */
  id: string;
  title: string;
  /** Throws (with a message for the reader) if the exercise is not done in the code at `codePath`. */
  run(codePath: string): Promise<void>;
}

/** The checks of the chapter whose code.ts is at `codePath` (from its exercises/checks.ts). */
export async function loadChecks(codePath: string): Promise<ExerciseCheck[]> {
  return (await import(pathToFileURL(join(dirname(codePath), 'exercises', 'checks.ts')).href)).checks;
}

/** Fail a check with a message for the reader. */
export function need(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** A chapter file's text after a solution; null where the solution deletes the file. */
export type SolvedFiles = Map<string, string | null>;

/**
 * The files a solution patch touches, with the patch applied: one entry per file section of the
 * patch (`--- a/s02_tools/tools.ts` / `+++ b/s02_tools/tools.ts`; `/dev/null` on one side for a
 * new or deleted file). `patchName` starts with the chapter's folder, whose files alone a patch
 * may change; `files` holds them as shipped, by name. Exactly as the patch was made (no fuzz): a
 * section that does not apply throws, naming the patch and the file.
 *
 *   applySolution('s02_tools/exercises/01-list-dir.patch', patchText, files)
 *   // → Map { 'tools.ts' → '…', … }
 */
export function applySolution(patchName: string, patch: string, files: Map<string, string>) {
  const solved: SolvedFiles = new Map();
  const sections = parsePatch(patch);
  if (sections.every((s) => s.hunks.length === 0)) throw new Error(`${patchName} changes no file`);
  const chapter = patchName.split('/')[0];
  for (const section of sections) {
    // 'a/s02_tools/tools.ts' or 'b/s02_tools/tools.ts' → 'tools.ts'; '/dev/null' stays as it is.
    const strip = (fileName?: string) => {
      const path = fileName?.replace(/^[ab]\//, '');
      return path?.startsWith(`${chapter}/`) ? path.slice(chapter.length + 1) : path;
    };
    const [from, to] = [strip(section.oldFileName), strip(section.newFileName)];
    const name = to === '/dev/null' ? from : to;
    if (!name || name.includes('/')) {
      const own = `a solution changes only the files of its chapter, ${chapter}/`;
      throw new Error(`${patchName} changes "${name}": ${own}`);
    }
    const current = solved.has(name) ? solved.get(name) : files.get(name);
    if (from === '/dev/null' && typeof current === 'string') {
      throw new Error(`${patchName} creates ${name}, which the chapter has already: regenerate it`);
    }
    const source = from === '/dev/null' ? '' : current;
    if (typeof source !== 'string') {
      const missing = `${name}, which the chapter does not have`;
      throw new Error(`${patchName} changes ${missing}: regenerate it`);
    }
    const result = applyPatch(source, section);
    if (result === false) {
      throw new Error(
        `${patchName} no longer applies to ${name} (its section for that file): regenerate it ` +
          'with scripts/refresh-patches.sh',
      );
    }
    solved.set(name, to === '/dev/null' ? null : result);
  }
  return solved;
}

/** The chapter's .ts files (not exercises/, not dotfiles), by name. */
export function chapterSources(chapterDir: string): Map<string, string> {
  const names = readdirSync(chapterDir).filter((f) => f.endsWith('.ts') && !f.startsWith('.'));
  return new Map(names.sort().map((name) => [name, readFileSync(join(chapterDir, name), 'utf8')]));
}

/**
 * The chapter of `codePath` with one solution applied, as a folder beside the chapter's (so its
 * `../shared/` imports still resolve): `<repo>/.solution-s02_tools-01-list-dir/`. The name is
 * fixed, so the bundle cache (bundle.ts, keyed by file names and contents) serves the next run
 * too; one exercise is checked by one test at a time. Returns its code.ts, and a function that
 * removes the folder.
 */
export function withSolution(codePath: string, id: string): { path: string; remove(): void } {
  const chapterDir = dirname(codePath);
  const patchName = `${basename(chapterDir)}/exercises/${id}.patch`;
  const shipped = chapterSources(chapterDir);
  const patch = readFileSync(join(chapterDir, 'exercises', `${id}.patch`), 'utf8');
  const solved = applySolution(patchName, patch, shipped);
  const files = new Map<string, string>(); // the shipped files, as the solution leaves them
  for (const [name, text] of new Map([...shipped, ...solved])) {
    if (text !== null) files.set(name, text);
  }
  const { code, remove } = besideChapters(`.solution-${basename(chapterDir)}-${id}`, files);
  return { path: code, remove };
}

/**
 * A folder beside the chapters (so its ../shared/ imports resolve), made afresh with `files`
 * (name → text): `<repo>/<name>/`. Returns its code.ts and a remover.
 */
export function besideChapters(name: string, files: Map<string, string>) {
  const folder = join(REPO, name);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder);
  for (const [file, text] of files) writeFileSync(join(folder, file), text);
  const remove = () => rmSync(folder, { recursive: true, force: true });
  return { code: join(folder, 'code.ts'), remove };
}

