/**
 * Background jobs a test's command starts, checked by their pids instead of by a file they would
 * write later: a check that waits for a timer is wrong on a busy machine, where a Ctrl+C can reach
 * the agent after the timer has run out (issue 25, item 2).
 *
 *   bash: `(sleep 30) > /dev/null 2>&1 & echo $! >> jobs.pid`   (the job writes where it started)
 *   await jobsLeft(run.workspace) → [] once every job listed there is gone
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A command's part that starts a job and notes its pid in jobs.pid (one a line). */
export const startJob = (redirected = false) =>
  `(sleep 30)${redirected ? ' > /dev/null 2>&1' : ''} & echo $! >> jobs.pid`;

/** The listed processes still at work: present, and not a zombie (ended, not reaped yet). */
function atWork(pids: number[]): number[] {
  if (pids.length === 0) return [];
  const ps = spawnSync('ps', ['-o', 'pid=,stat=', '-p', pids.join(',')], { encoding: 'utf8' });
  const rows = ps.stdout.trim().split('\n').filter(Boolean).map((row) => row.trim().split(/\s+/));
  return rows.filter(([, stat]) => !stat.startsWith('Z')).map(([pid]) => Number(pid));
}

/**
 * The jobs listed in `<workspace>/jobs.pid` that are still at work, after giving a kill that was
 * just sent up to `withinMs` to take effect. No file: no job got as far as noting its pid.
 */
export async function jobsLeft(workspace: string, withinMs = 10_000): Promise<number[]> {
  const file = join(workspace, 'jobs.pid');
  if (!existsSync(file)) return [];
  const pids = readFileSync(file, 'utf8').trim().split('\n').map(Number);
  const until = Date.now() + withinMs;
  let left = atWork(pids);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((done) => setTimeout(done, 50));
    left = atWork(pids);
  }
  for (const pid of left) process.kill(pid, 'SIGKILL'); // leave nothing behind for the next test
  return left;
}
