/**
 * npm run test:solved [-- --keep] — prove that doing the exercises does not break `npm test`.
 *
 * Copies the repo's files (tracked and new ones, as they are on disk, without ignored files) to a
 * temporary folder, records them there as a git commit of their own, and applies every exercise's
 * reference solution to its chapter's files, uncommitted, as a reader who did all the exercises
 * would have it. Then it runs the test suite there without CI set, where the maintainer checks on
 * the committed chapter must skip themselves, and every chapter's `npm run check`, where all the
 * solutions of a chapter, applied together, must pass all its checks.
 *
 * The solutions of one chapter are independent answers to different exercises, each a patch against
 * the chapter as shipped (of one file or several), so they are combined as branches would be: each
 * patch is applied alone to the shipped files (as tests/exercises.test.ts does), and each file it
 * touches is 3-way merged into that file's solutions so far with `git merge-file`, the shipped file
 * as the common base. Where two solutions insert lines at the same place (a flag each in the same
 * options object), both insertions are kept, earlier patch first, as `git merge-file --union`
 * would. Where they change the same shipped lines, no merge is right: that solution is left out
 * (all of its files) and reported as a conflict.
 * Exit code 0 only if everything applied and passed. --keep leaves the copy for a look.
 */
import { spawnSync, type SpawnSyncOptionsWithStringEncoding } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { applySolution, chapterSources, type SolvedFiles } from '../tests/helpers/exercises.ts';
import { REPO, chapters } from './chapters.ts';

const keep = process.argv.includes('--keep');
const copy = mkdtempSync(join(tmpdir(), 'lah-solved-'));
const env = { ...process.env };
delete env.CI; // a reader's machine: the maintainer checks must see the edits and skip themselves
const run = (cmd: string, args: string[], opts: Partial<SpawnSyncOptionsWithStringEncoding> = {}) =>
  spawnSync(cmd, args, { cwd: copy, encoding: 'utf8', env, ...opts });

// 1. The repo as it is on disk: tracked files plus new ones git does not ignore.
const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO });
if (listed.status !== 0) throw new Error(`git ls-files failed in ${REPO}:\n${listed.stderr}`);
for (const file of new Set(listed.stdout.split('\0').filter(Boolean))) {
  // Deleted but not yet committed; or node_modules, linked below (git ignores only a folder of that name, not a link).
  if (!existsSync(join(REPO, file)) || file.split('/')[0] === 'node_modules') continue;
  mkdirSync(dirname(join(copy, file)), { recursive: true });
  cpSync(join(REPO, file), join(copy, file));
}
// A repository of its own: there, "uncommitted changes" are the solutions applied below, and the
// real repository's .git is left alone.
const who = ['-c', 'user.name=test-solved', '-c', 'user.email=test-solved@localhost', '-c', 'commit.gpgsign=false'];
for (const args of [['init', '-q'], ['add', '-A'], [...who, 'commit', '-q', '-m', 'the chapters as shipped']]) {
  const r = run('git', args);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed:\n${r.stderr}`);
}
symlinkSync(realpathSync(join(REPO, 'node_modules')), join(copy, 'node_modules'), 'dir');
console.log(`Copied the repo to ${copy}\n`);

// 2. Every solution, merged with the others of its chapter.
const MARK = 40; // conflict markers this long never occur in a chapter's files
const marker = (c: string) => c.repeat(MARK);
/**
 * Merge the change from `base` to `theirs` into `ours` (`git merge-file --diff3`). A conflict whose
 * base part is empty is two insertions at the same place: both are kept, ours first. Any other
 * conflict changes the same lines two ways; it is returned, with the shipped lines in question.
 */
function merge(ours: string, base: string, theirs: string): { text: string; together: number; conflicts: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'lah-merge-'));
  try {
    const files = { ours, base, theirs };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const args = ['merge-file', '-p', '--diff3', `--marker-size=${MARK}`, 'ours', 'base', 'theirs'];
    const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    if (r.status === null || r.status > 127) throw new Error(`git merge-file failed:\n${r.stderr}`);
    const out: string[] = [];
    const conflicts: string[] = [];
    let together = 0;
    let part: 'ours' | 'base' | 'theirs' | undefined;
    let hunk = { ours: [] as string[], base: [] as string[], theirs: [] as string[] };
    for (const line of r.stdout.split('\n')) {
      if (line.startsWith(`${marker('<')} `)) [part, hunk] = ['ours', { ours: [], base: [], theirs: [] }];
      else if (part && line.startsWith(`${marker('|')} `)) part = 'base';
      else if (part && line === marker('=')) part = 'theirs';
      else if (part && line.startsWith(`${marker('>')} `)) {
        part = undefined;
        if (hunk.base.length === 0) together++;
        else conflicts.push(hunk.base.map((l) => `| ${l}`).join('\n      '));
        out.push(...hunk.ours, ...(hunk.base.length === 0 ? hunk.theirs : []));
      } else if (part) hunk[part].push(line);
      else out.push(line);
    }
    return { text: out.join('\n'), together, conflicts };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const conflicts: string[] = [];
const notApplied = new Map<string, string[]>(); // chapter → its patches that did not apply
for (const chapter of chapters()) {
  const folder = join(copy, chapter);
  const dir = join(folder, 'exercises');
  const patches = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.patch')).sort() : [];
  const base = chapterSources(folder); // the chapter as shipped, file by file
  const solved: SolvedFiles = new Map(base); // with the solutions so far; null: a deleted file
  const applied: string[] = [];
  for (const patch of patches) {
    const fail = (why: string) => {
      conflicts.push(`${chapter}/exercises/${patch} ${why}`);
      notApplied.set(chapter, [...(notApplied.get(chapter) ?? []), patch]);
      console.log(`  CONFLICT  ${chapter}/exercises/${patch}`);
    };
    // The solution alone, exactly as it was made (no fuzz): what the reader who did only it would
    // have. Each file it touches is then merged into that file's solutions so far.
    let alone: SolvedFiles;
    const label = `${chapter}/exercises/${patch}`;
    try {
      alone = applySolution(label, readFileSync(join(dir, patch), 'utf8'), base);
    } catch (err) {
      fail((err as Error).message.replace(`${label} `, '')); // "no longer applies to tools.ts …"
      continue;
    }
    const merged = new Map<string, string | null>();
    const clashes: string[] = [];
    let together = 0;
    for (const [name, theirs] of alone) {
      const [ours, shipped] = [solved.get(name), base.get(name)];
      if (theirs === null || ours === null) {
        // A deletion merges only with a file no earlier solution changed (or one it deleted too).
        if (ours === shipped || ours === theirs) merged.set(name, theirs);
        else clashes.push(`${name}: one deletes it, the other changes it`);
        continue;
      }
      const result = merge(ours ?? '', shipped ?? '', theirs);
      together += result.together;
      clashes.push(...result.conflicts.map((c) => `${name}: both change these lines:\n      ${c}`));
      merged.set(name, result.text);
    }
    if (clashes.length > 0) {
      const onto = applied.length ? `with ${applied.join(', ')}` : 'with the chapter as shipped';
      const lines = clashes.join('\n      ');
      fail(`cannot be merged ${onto}:\n      ${lines}`);
      continue;
    }
    for (const [name, text] of merged) solved.set(name, text);
    applied.push(patch);
    const kept = `${together} insertion(s) beside an earlier solution's, both kept`;
    const beside = together ? ` (${kept})` : '';
    console.log(`  applied   ${chapter}/exercises/${patch}${beside}`);
  }
  for (const [name, text] of solved) {
    if (text === null) rmSync(join(folder, name));
    else if (text !== base.get(name)) writeFileSync(join(folder, name), text);
  }
}

// 3. The suite as a reader would run it, then each chapter's exercise checks.
console.log('\n$ npx vitest run   (CI not set)\n');
const suite = run('npx', ['vitest', 'run'], { stdio: 'inherit' });
const checks = chapters()
  .filter((chapter) => existsSync(join(copy, chapter, 'exercises', 'checks.ts')))
  .map((chapter) => {
    console.log(`\n$ npm run check ${chapter.slice(0, 3)}`);
    const r = run('npm', ['run', '--silent', 'check', chapter.slice(0, 3)], { stdio: 'inherit' });
    return { chapter, ok: r.status === 0 };
  });

console.log('\n── test:solved ───────────────────────────────────────────────');
for (const c of conflicts) console.log(`  CONFLICT  ${c}`);
console.log(`  npm test with every solution applied: ${suite.status === 0 ? 'passed' : 'FAILED (see above)'}`);
for (const c of checks) {
  const missing = notApplied.get(c.chapter);
  const why = missing ? `; not applied: ${missing.join(', ')}` : '';
  console.log(`  npm run check ${c.chapter.slice(0, 3)}: ${c.ok ? 'all checks pass' : `FAILED (see above${why})`}`);
}
const ok = conflicts.length === 0 && suite.status === 0 && checks.every((c) => c.ok);
if (keep) console.log(`\n  The solved copy is in ${copy}`);
else rmSync(copy, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
