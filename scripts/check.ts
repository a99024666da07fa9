/**
 * npm run check s01 — check your exercise solutions for one chapter.
 * Runs each exercise's check against that chapter's code.ts, as you have changed it.
 */
import { relative } from 'node:path';
import { loadChecks } from '../tests/helpers/exercises.ts';
import { REPO, chapterCode, cleanupTemp } from '../tests/helpers/run-chapter.ts';

const chapter = process.argv[2];
if (!chapter) {
  console.error('Usage: npm run check <chapter>   e.g. npm run check s01');
  process.exit(2);
}
const code = chapterCode(chapter);
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
