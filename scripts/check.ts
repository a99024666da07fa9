/**
 * npm run check s01 — check your exercise solutions for one chapter.
 * Runs each exercise's check against that chapter's code.ts, as you have changed it.
 * Exit codes: 0 all pass, 1 a check fails, or the chapter does not compile or has a type error;
 * 2 usage.
 */
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { loadChecks } from '../tests/helpers/exercises.ts';
import { BundleError, bundleChapter } from '../tests/helpers/bundle.ts';
import { chapterCode, chapterFolder, chapters, REPO } from './chapters.ts';
import { cleanupTemp } from '../tests/helpers/run-chapter.ts';
import { typeErrors } from '../tests/helpers/typecheck.ts';

const chapter = process.argv[2];
const withExercises = chapters().filter((d) => existsSync(join(REPO, d, 'exercises', 'checks.ts')));
function usage(): never {
  console.error('Usage: npm run check <chapter>   e.g. npm run check s01');
  console.error(`Chapters with exercises: ${withExercises.join(', ')}`);
  process.exit(2);
}
if (!chapter) usage();
if (!chapterFolder(chapter)) {
  console.error(`There is no chapter "${chapter}".`);
  usage();
}
const code = chapterCode(chapter);
if (!existsSync(join(dirname(code), 'exercises', 'checks.ts'))) {
  console.error(`${relative(REPO, dirname(code))} has no exercises.`);
  usage();
}

// Compile first: a typo in code.ts should read as a typo (file, line, the code), not as the first
// check failing in some unrelated way.
try {
  await bundleChapter(code);
} catch (err) {
  if (!(err instanceof BundleError)) throw err;
  console.error(`${err.message}\n\nFix this first: no exercise check can run until ${relative(REPO, code)} compiles.`);
  process.exit(1);
}

// Then the types: esbuild only strips them, so a string where a number is declared would run, and
// fail later in some other way.
const typeProblems = typeErrors(dirname(code));
if (typeProblems) {
  const where = relative(REPO, dirname(code));
  const first = 'Fix this first: no exercise check runs until they are gone.';
  console.error(`${where} has type errors:\n\n${typeProblems}\n\n${first}`);
  process.exit(1);
}

const checks = await loadChecks(code);
console.log(`Checking the exercises of ${relative(REPO, code)}\n`);
let passed = 0;
for (const check of checks) {
  try {
    await check.run(code);
    passed++;
    console.log(`  ✓ ${check.title}`);
  } catch (err) {
    console.log(`  ✗ ${check.title}\n      ${(err as Error).message.split('\n').join('\n      ')}`);
  }
}
cleanupTemp();
console.log(`\n${passed} passed, ${checks.length - passed} failed`);
process.exit(passed === checks.length ? 0 : 1);
