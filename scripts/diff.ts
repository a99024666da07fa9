/**
 * npm run diff s01 s02 — show what one chapter's code.ts adds to the previous one.
 * Chapters keep every line the new mechanism does not need byte-identical, so this is the lesson.
 */
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { REPO, chapterCode, chapters } from '../tests/helpers/run-chapter.ts';

const [a, b] = process.argv.slice(2);
function usage(problem?: string): never {
  if (problem) console.error(problem);
  console.error('Usage: npm run diff <chapter> <chapter>   e.g. npm run diff s01 s02');
  console.error(`Chapters: ${chapters().join(', ')}`);
  process.exit(2);
}
if (!a || !b) usage();
const missing = [a, b].find((c) => !chapters().some((d) => d === c || d.startsWith(`${c}_`)));
if (missing) usage(`There is no chapter "${missing}".`);
const files = [chapterCode(a), chapterCode(b)].map((f) => relative(REPO, f));
// git diff --no-index exits 1 when the files differ; that is the expected case here.
const r = spawnSync('git', ['diff', '--no-index', '--color=auto', '--stat', '--patch', ...files], {
  cwd: REPO,
  stdio: 'inherit',
});
process.exit(r.status === 1 ? 0 : (r.status ?? 1));
