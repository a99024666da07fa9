/**
 * npm run test:solved [-- --keep] — prove that doing the exercises does not break `npm test`.
 *
 * Copies the repo's files (tracked and new ones, as they are on disk, without ignored files) to a
 * temporary folder, records them there as a git commit of their own, and applies every exercise's
 * reference solution to its chapter's code.ts, uncommitted, as a reader who did all the exercises
 * would have it. Then it runs the test suite there without CI set, where the maintainer checks on
 * the committed chapter must skip themselves, and every chapter's `npm run check`, where all the
 * solutions of a chapter, applied together, must pass all its checks.
 *
 * The solutions of one chapter are independent answers to different exercises; they are applied one
 * after the other with some fuzz, and a pair that cannot both apply is reported as a conflict.
 * Exit code 0 only if everything applied and passed. --keep leaves the copy for a look.
 */
import { spawnSync, type SpawnSyncOptionsWithStringEncoding } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO, chapters } from '../tests/helpers/run-chapter.ts';

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

// 2. Every solution, on top of the others of its chapter.
const conflicts: string[] = [];
const notApplied = new Map<string, string[]>(); // chapter → its patches that did not apply
for (const chapter of chapters()) {
  const dir = join(copy, chapter, 'exercises');
  const patches = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.patch')).sort() : [];
  const applied: string[] = [];
  for (const patch of patches) {
    // Default fuzz (2 lines of context may differ): each patch was made against the chapter alone.
    // A dry run first, so a patch that half applies leaves code.ts as it was. -N: never in reverse.
    const patchArgs = ['-N', '--no-backup-if-mismatch', '-r', '-', 'code.ts', join('exercises', patch)];
    const dry = run('patch', ['--dry-run', ...patchArgs], { cwd: join(copy, chapter) });
    if (dry.status === 0 && run('patch', ['-s', ...patchArgs], { cwd: join(copy, chapter) }).status === 0) {
      applied.push(patch);
      const moved = /fuzz|offset/i.test(dry.stdout) ? ' (with offset or fuzz)' : '';
      console.log(`  applied   ${chapter}/exercises/${patch}${moved}`);
    } else {
      const onto = applied.length ? `on top of ${applied.join(', ')}` : 'to the chapter as shipped';
      const why = dry.stdout.trim().replace(/\n/g, '\n      ');
      conflicts.push(`${chapter}/exercises/${patch} does not apply ${onto}:\n      ${why}`);
      notApplied.set(chapter, [...(notApplied.get(chapter) ?? []), patch]);
      console.log(`  CONFLICT  ${chapter}/exercises/${patch}`);
    }
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
