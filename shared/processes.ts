/**
 * Child processes that never outlive the agent (s01–s06; shared runtime, not a chapter's
 * mechanism). Each command runs in its own process group, kept until it is empty: a job the
 * command left in the background (`npm run dev > dev.log 2>&1 &`) is still in it. Whatever is left
 * is killed however the agent exits. (`setsid` makes a session of its own, out of reach.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';

const MAX_COLLECT = 10_000_000; // characters; `yes` would otherwise fill the memory

const groups = new Set<number>(); // the process groups the commands made, until they are empty
process.on('exit', killCommands);

// The system gives no new process a group's id while any process is left in that group. So a
// group is forgotten within a second of emptying, long before its id could be handed out again,
// and a kill never reaches someone else's processes. (unref: the program need not wait for it.)
function forgetEmptyGroups(): void {
  for (const pgid of groups) if (isEmpty(pgid)) groups.delete(pgid);
}
setInterval(forgetEmptyGroups, 1000).unref();

function isEmpty(pgid: number): boolean {
  try {
    process.kill(-pgid, 0); // signal 0: nothing is sent, it is only checked
    return false;
  } catch {
    return true;
  }
}

// Is a process of this group still at work? An ended one not reaped yet (a zombie) is not: where
// nothing reaps orphans (a container without an init), it would otherwise look alive for good.
function isRunning(pgid: number): boolean {
  if (isEmpty(pgid)) return false;
  const ps = spawnSync('ps', ['-A', '-o', 'pgid=,stat='], { encoding: 'utf8' });
  if (ps.status !== 0) return true; // no ps: take the system's word
  return ps.stdout.split('\n').some((row) => {
    const [group, state] = row.trim().split(/\s+/);
    return Number(group) === pgid && !state.startsWith('Z');
  });
}

/** Kill a group: every process in it, however it was started. */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {} // it was empty already
  groups.delete(pgid);
}

/** Kill every command still running, and every job one left behind, with all they started. */
export function killCommands(): void {
  groups.forEach(killGroup);
}

interface CommandOptions {
  cwd: string;
  timeoutSeconds: number;
}

/**
 * Run `command` with bash in `cwd`. The output is stdout and stderr together, as text; the status
 * reads `exit code 0`, or why it was killed: `timed out after 120s; killed`. If the command left
 * a job running, the status says so, and names the group it is in.
 */
export async function runCommand(command: string, options: CommandOptions) {
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  const child = spawn('bash', ['-c', command], { cwd: options.cwd, detached: true, stdio });
  const pgid = child.pid!; // detached: bash leads a new group, whose id is its pid
  groups.add(pgid);
  let output = '';
  let killed = ''; // why we killed it, if we did
  const kill = (why: string) => {
    killed ||= why;
    killGroup(pgid);
  };
  const timeout = options.timeoutSeconds;
  const timer = setTimeout(() => kill(`timed out after ${timeout}s`), timeout * 1000);
  const collect = (chunk: string) => {
    output += chunk;
    if (output.length > MAX_COLLECT) kill('more than 10 MB of output');
  };
  child.stdout.setEncoding('utf8').on('data', collect); // decode as text, so a character split
  child.stderr.setEncoding('utf8').on('data', collect); // between two chunks stays whole
  const [code, signal] = await once(child, 'close');
  clearTimeout(timer);
  if (killed) return { output, status: `${killed}; killed` };
  let status = `exit code ${code ?? signal}`;
  // bash has exited, and its output is closed; a job with its output sent elsewhere may live on.
  if (isRunning(pgid)) {
    status += `; still running in the background: process group ${pgid}`;
    status += ` (kill -- -${pgid} stops it; the agent stops it on Ctrl+C and when it exits)`;
  } else groups.delete(pgid);
  return { output, status };
}

/**
 * Run `job`; meanwhile these signals end the program as if killed by them (exit code 128 + the
 * signal's number), and the exit kills the commands still running.
 */
export async function exitingOnSignals<T>(signals: NodeJS.Signals[], job: () => Promise<T>) {
  const quit = (signal: NodeJS.Signals) => process.exit(128 + os.constants.signals[signal]);
  for (const signal of signals) process.on(signal, quit);
  try {
    return await job();
  } finally {
    for (const signal of signals) process.off(signal, quit);
  }
}
