/**
 * Exercise checks. Each chapter's `exercises/checks.ts` exports a list of checks; a check runs the
 * reader's code.ts (or any file given) as a subprocess against the fake and throws a message that
 * tells the reader what is still missing. `npm run check s01` runs them on the chapter as it is now.
 *
 * Each exercise also ships a reference solution as a patch (`exercises/NN-name.patch`);
 * `tests/exercises.test.ts` proves every check fails on the chapter as shipped and passes once its
 * solution is applied (on the committed chapter: see committed.ts), and `npm run test:solved` that
 * `npm test` still passes with every solution applied.
 */
import { applyPatch } from 'diff';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

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

/**
 * Write code.ts with one solution patch applied next to the original (so relative imports still
 * resolve), and return its path plus a function that removes it.
 */
export function withSolution(codePath: string, id: string): { path: string; remove(): void } {
  const patch = readFileSync(join(dirname(codePath), 'exercises', `${id}.patch`), 'utf8');
  const patched = applyPatch(readFileSync(codePath, 'utf8'), patch);
  if (patched === false) throw new Error(`exercises/${id}.patch no longer applies to ${codePath}: regenerate it`);
  const path = join(dirname(codePath), `.solution-${id}-${process.pid}.ts`);
  writeFileSync(path, patched);
  return { path, remove: () => rmSync(path, { force: true }) };
}
