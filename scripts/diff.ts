/**
 * npm run diff s01 s02 — show what one chapter adds to the previous one: the --stat, then the
 * patch of every .ts file of the two chapter folders (not the READMEs, not exercises/), a new
 * file in full, a removed one as deleted. A folder with a code.ts works in place of a chapter:
 * `npm run diff mine/s02_tools s02` compares your build (npm run begin) with the chapter.
 * Chapters keep every file the new mechanism does not need byte-identical, so this is the lesson.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseFileList } from '../tests/helpers/layout.ts';
import { chapterCode, chapters, REPO } from './chapters.ts';

const [a, b] = process.argv.slice(2);
function usage(problem?: string): never {
  if (problem) console.error(problem);
  console.error('Usage: npm run diff <chapter or folder> <chapter or folder>');
  console.error('  e.g. npm run diff s01 s02, npm run diff mine/s02_tools s02');
  console.error(`Chapters: ${chapters().join(', ')}`);
  process.exit(2);
}
if (!a || !b) usage();
const isChapter = (c: string) => chapters().some((d) => d === c || d.startsWith(`${c}_`));
// Else a folder with a code.ts (mine/s02_tools), named from where npm run diff was typed.
const folderOf = (c: string) => resolve(process.env.INIT_CWD ?? process.cwd(), c);
const isFolder = (c: string) => existsSync(join(folderOf(c), 'code.ts'));
const missing = [a, b].find((c) => !isChapter(c) && !isFolder(c));
if (missing) usage(`There is no chapter "${missing}", nor a folder of that name with a code.ts.`);
const [from, to] = [a, b].map((c) => (isChapter(c) ? dirname(chapterCode(c)) : folderOf(c)));
if (from === to) process.exit(0); // a chapter does not differ from itself

// Copies of just the .ts files, in folders named after the chapters, so that git names the files
// the way the reader knows them: a/s02_tools/tools.ts → b/s03_subagent/tools.ts. A folder in the
// repo keeps its path there (a/mine/s02_tools/…: not the same name as the chapter's).
const temp = mkdtempSync(join(tmpdir(), 'lah-diff-'));
const inRepo = (folder: string) => !relative(REPO, folder).startsWith('..');
const [nameFrom, nameTo] = [from, to].map((f) => (inRepo(f) ? relative(REPO, f) : basename(f)));
const names = nameFrom === nameTo ? [`${nameFrom}-a`, `${nameTo}-b`] : [nameFrom, nameTo];
for (const [i, folder] of [from, to].entries()) {
  const copy = join(temp, names[i]);
  mkdirSync(copy, { recursive: true });
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.ts') && !f.startsWith('.'))) {
    cpSync(join(folder, file), join(copy, file));
  }
}
// The files in the order the later chapter's code.ts lists them for reading, code.ts first.
const listed = parseFileList(readFileSync(join(to, 'code.ts'), 'utf8'))?.files ?? [];
const order = ['code.ts', ...listed.map((f) => f.name)];
writeFileSync(join(temp, 'order'), order.map((name) => `*/${name}\n`).join(''));
// --no-renames: a file the new chapter drops shows as deleted, not as renamed to a new one.
const options = ['--no-index', '--no-renames', '-O', 'order', '--color=auto', '--stat', '--patch'];
const args = ['diff', ...options, ...names];
const r = spawnSync('git', args, { cwd: temp, stdio: 'inherit' });
rmSync(temp, { recursive: true, force: true });
// git diff --no-index exits 1 when the folders differ; that is the expected case here.
process.exit(r.status === 1 ? 0 : (r.status ?? 1));
