/**
 * Child processes that never outlive the agent (s01–s06; shared runtime, not a chapter's
 * mechanism).
 *
 * Each command runs in its own process group, so it can be killed together with everything it
 * started; the groups still running are killed however the agent exits.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';

const MAX_COLLECT = 10_000_000; // characters; `yes` would otherwise fill the memory

const running = new Set<number>(); // the process groups of the commands still running
process.on('exit', killCommands);

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {} // it had already finished
}

/** Kill every command still running, with everything each one started. */
export function killCommands(): void {
  running.forEach(killGroup);
}

interface CommandOptions {
  cwd: string;
  timeoutSeconds: number;
}

/**
 * Run `command` with bash in `cwd`. The output is stdout and stderr together, as text; the status
 * reads `exit code 0`, or why it was killed: `timed out after 120s; killed`.
 */
export async function runCommand(command: string, options: CommandOptions) {
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  const child = spawn('bash', ['-c', command], { cwd: options.cwd, detached: true, stdio });
  running.add(child.pid!);
  let output = '';
  let killed = ''; // why we killed it, if we did
  const kill = (why: string) => {
    killed ||= why;
    killGroup(child.pid!);
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
  running.delete(child.pid!);
  const status = killed ? `${killed}; killed` : `exit code ${code ?? signal}`;
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
