/**
 * Some tests are for the maintainers: every exercise check fails on the chapter as shipped, every
 * reference solution still applies, every README quote is in the chapter's files, each file the
 * chapter does not change is a copy of the previous chapter's. They hold for the chapters as
 * committed, and a reader who does the exercises edits the chapter's files, which is the point of
 * exercises. So on a machine where the chapter has uncommitted changes these tests are skipped,
 * with a note that says why; in CI (a fresh clone, `CI` set) they always run, so a maintainer who
 * breaks them still gets a red build.
 */
import { spawnSync } from 'node:child_process';
import { posix } from 'node:path';
import { REPO } from './run-chapter.ts';

/** `CI=1 npm test` runs the maintainer checks whatever the work tree holds. */
export const FORCED = !!process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase());

const git = (args: string[]) => spawnSync('git', args, { cwd: REPO, encoding: 'utf8' });

/**
 * The files matching `patterns` (git pathspecs relative to REPO, where `*` stays inside one folder)
 * that differ from git HEAD, or are new and not ignored: a new file is a change too. No git, no
 * repo, or no commit yet: nothing to compare with, so none.
 */
function changedFiles(patterns: string[]): string[] {
  const specs = patterns.map((p) => `:(glob)${p}`);
  const diff = git(['diff', '--name-only', 'HEAD', '--', ...specs]);
  if (diff.status !== 0) return []; // 128 or an error: not a git work tree
  const added = git(['ls-files', '--others', '--exclude-standard', '--', ...specs]);
  const lines = (text: string | null) => (text ?? '').split('\n').filter(Boolean);
  const fresh = added.status === 0 ? lines(added.stdout).map((f) => `${f} (new)`) : [];
  return [...lines(diff.stdout), ...fresh];
}

/**
 * Why the maintainer checks of `folder` that read `files` are skipped here, or undefined if they
 * run. `files` are relative to the folder and may be globs, where `*` matches within the folder
 * only: `*.ts` is every .ts file at the top of a chapter (its exercises/ are not included).
 *
 *   maintainerSkip('s01_agent_loop', ['*.ts', 'README.md'])
 *   // → 'skipped: s01_agent_loop/code.ts has uncommitted changes (your exercise solutions?); …'
 */
export function maintainerSkip(folder: string, files: string[]): string | undefined {
  if (FORCED) return undefined;
  const changed = changedFiles(files.map((f) => posix.join(folder, f)));
  if (changed.length === 0) return undefined;
  const named =
    changed.length > 1 ? `${changed.slice(0, -1).join(', ')} and ${changed.at(-1)}` : changed[0];
  return (
    `skipped: ${named} ${changed.length > 1 ? 'have' : 'has'} uncommitted changes ` +
    '(your exercise solutions?); ' +
    'these maintainer checks run on the committed chapter — run `CI=1 npm test` to force them'
  );
}
