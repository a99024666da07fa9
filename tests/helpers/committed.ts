/**
 * Some tests are for the maintainers: every exercise check fails on the chapter as shipped, every
 * reference solution still applies, every README quote is in code.ts. They hold for the chapter as
 * committed, and a reader who does the exercises edits code.ts, which is the point of exercises. So
 * on a machine where the chapter has uncommitted changes these tests are skipped, with a note that
 * says why; in CI (a fresh clone, `CI` set) they always run, so a maintainer who breaks them still
 * gets a red build.
 */
import { spawnSync } from 'node:child_process';
import { REPO } from './run-chapter.ts';

/** `CI=1 npm test` runs the maintainer checks whatever the work tree holds. */
export const FORCED = !!process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase());

/** Does this file (relative to REPO) differ from git HEAD? No git, no repo, or no commit yet: no. */
function differsFromHead(file: string): boolean {
  const r = spawnSync('git', ['diff', '--quiet', 'HEAD', '--', file], { cwd: REPO, stdio: 'ignore' });
  return r.status === 1; // 0: same; 128 or an error: not a git work tree (nothing to compare with)
}

/**
 * Why the maintainer checks of `chapter` that read `files` (relative to the chapter folder) are
 * skipped here, or undefined if they run.
 *
 *   maintainerSkip('s01_agent_loop', ['code.ts'])
 *   // → 'skipped: s01_agent_loop/code.ts has uncommitted changes (your exercise solutions?); …'
 */
export function maintainerSkip(chapter: string, files: string[]): string | undefined {
  if (FORCED) return undefined;
  const changed = files.map((f) => `${chapter}/${f}`).filter(differsFromHead);
  if (changed.length === 0) return undefined;
  return (
    `skipped: ${changed.join(' and ')} ${changed.length > 1 ? 'have' : 'has'} uncommitted changes ` +
    '(your exercise solutions?); ' +
    'these maintainer checks run on the committed chapter — run `CI=1 npm test` to force them'
  );
}
