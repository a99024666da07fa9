/**
 * npm run check s01 — check your exercise solutions for one chapter.
 * Runs each exercise's check against that chapter, as you have changed it (any of its files).
 * Exit codes: 0 all pass, 1 a check fails, or the chapter does not compile or has a type error;
 * 2 usage.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadChecks } from '../tests/helpers/exercises.ts';
import { BundleError, bundleChapter } from '../tests/helpers/bundle.ts';
import { chapterFolder, chapters, REPO } from './chapters.ts';
import { cleanupTemp } from '../tests/helpers/run-chapter.ts';
import { typeErrors } from '../tests/helpers/typecheck.ts';

type Said = { exit: number; out: string; err: string };

/**
 * What the arguments ask for: the code.ts of a chapter with exercises, or what to print (on
 * stdout or stderr) and the exit code.
 */
export function checkArgs(args: string[]): { folder: string; code: string } | Said {
  const withExercises = chapters()
    .filter((d) => existsSync(join(REPO, d, 'exercises', 'checks.ts')));
  const usage = 'Usage: npm run check <chapter>   e.g. npm run check s01\n' +
    `Chapters with exercises: ${withExercises.join(', ')}`;
  const wrong = (why: string) => ({ exit: 2, out: '', err: `${why}${why && '\n'}${usage}` });
  if (args.includes('-h') || args.includes('--help')) return { exit: 0, out: usage, err: '' };
  const [chapter] = args;
  if (args.length !== 1) return wrong(args.length ? 'One chapter at a time.' : '');
  if (chapter.startsWith('-')) return wrong(`There is no option ${chapter}.`);
  const folder = chapterFolder(chapter);
  if (!folder) return wrong(`There is no chapter "${chapter}".`);
  if (!withExercises.includes(folder)) return wrong(`${folder} has no exercises.`);
  return { folder, code: join(REPO, folder, 'code.ts') };
}

async function main(): Promise<void> {
  const asked = checkArgs(process.argv.slice(2));
  if (!('code' in asked)) {
    if (asked.out) console.log(asked.out);
    if (asked.err) console.error(asked.err);
    process.exit(asked.exit);
  }
  const { folder, code } = asked;

  // Compile first: a typo in one of the chapter's files should read as a typo (file, line, the
  // code), not as the first check failing in some unrelated way.
  try {
    await bundleChapter(code);
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    const files = err.files.join(' and ');
    const first = `Fix this first: no exercise check of ${folder} can run until ${files} ` +
      `${err.files.length > 1 ? 'compile' : 'compiles'}.`;
    console.error(`${err.message}\n\n${first}`);
    process.exit(1);
  }

  // Then the types: esbuild only strips them, so a string where a number is declared would run,
  // and fail later in some other way.
  const typeProblems = typeErrors(dirname(code));
  if (typeProblems) {
    const first = 'Fix this first: no exercise check runs until they are gone.';
    console.error(`${folder} has type errors:\n\n${typeProblems}\n\n${first}`);
    process.exit(1);
  }

  const checks = await loadChecks(code);
  console.log(`Checking the exercises of ${folder}\n`);
  let passed = 0;
  for (const check of checks) {
    try {
      await check.run(code);
      passed++;
      console.log(`  ✓ ${check.title}`);
    } catch (err) {
      const why = (err as Error).message.split('\n').join('\n      ');
      console.log(`  ✗ ${check.title}\n      ${why}`);
    }
  }
  cleanupTemp();
  console.log(`\n${passed} passed, ${checks.length - passed} failed`);
  process.exit(passed === checks.length ? 0 : 1);
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] && realpathSync(process.argv[1]) === self) await main();
