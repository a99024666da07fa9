/**
 * npm run bench:resume [-- <MB>] — how long s04 takes to resume a big session (default 50 MB).
 *
 * Has the chapter start a session in a temporary HOME, makes its log that size (rounds of a prompt, a
 * tool call, a 20 KB tool result and an answer), then times, each as a fresh process:
 *   --help        nothing at all: the start-up cost, to subtract (each run: node --import tsx code.ts)
 *   --sessions    listing it (reads only the first and last KB of each file)
 *   -c            resuming it: until it says "resumed with N messages", before any request (a 50 MB
 *                 conversation is more than the API takes in one request anyway: s05 compacts it)
 * and, in this process, loadSession() alone: reading and parsing the log.
 *
 * A measuring tool, not a test: it prints figures and asserts nothing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from './chapters.ts';
import { sessionFiles } from '../tests/helpers/sessions.ts';

const megabytes = Number(process.argv[2] ?? 50);
const dir = mkdtempSync(join(tmpdir(), 'lah-bench-resume-'));
const home = join(dir, 'home');
mkdirSync(join(dir, 'workspace'));
const workspace = realpathSync(join(dir, 'workspace')); // as the chapter sees it


// No key: the offline demo model answers, so nothing leaves the machine.
const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
env.ANTHROPIC_API_KEY = '';
env.ANTHROPIC_AUTH_TOKEN = '';
delete env.ANTHROPIC_BASE_URL;
const code = join(REPO, 's04_session/code.ts');
// Each run is `node --import <tsx's loader> code.ts`, which is what the tsx CLI starts, without the CLI's
// own process: then the process that holds the session's lock is our own child, reaped when we kill it.
const loader = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
function timed(args: string[]): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--import', loader, code, ...args], { cwd: workspace, env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`code.ts ${args.join(' ')} exited ${run.status}:\n${run.stderr}`);
  return ms;
}
// Let the chapter start the session (so the file is where s04 puts it), then make it big.
timed(['-p', 'run echo hello']);
const [file] = sessionFiles({ home });
const id = basename(file, '.jsonl');
const at = new Date().toISOString();
const lines = [JSON.stringify({ type: 'session', version: 1, id, workspace, created: at, title: 'a long session' })];
let n = 0;
let size = lines[0].length;
const output = 'x'.repeat(20_000);
const add = (message: object) => {
  const line = JSON.stringify({ type: 'message', at, message, n: ++n });
  lines.push(line);
  size += line.length + 1;
};
for (let round = 0; size < megabytes * 1e6; round++) {
  const toolId = `toolu_bench_${round}`;
  add({ role: 'user', content: `step ${round}: run the tests` });
  add({ role: 'assistant', content: [{ type: 'tool_use', id: toolId, name: 'bash', input: { command: 'npm test' } }] });
  add({ role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content: output }] });
  add({ role: 'assistant', content: [{ type: 'text', text: `Round ${round}: all tests pass.` }] });
}
writeFileSync(file, `${lines.join('\n')}\n`);
console.log(`session log: ${(statSync(file).size / 1e6).toFixed(1)} MB, ${n} messages`);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const runs = (args: string[], times = 3) => median(Array.from({ length: times }, () => timed(args)));

/** Milliseconds until `-c` has loaded the session and says so (before any request), in a fresh process. */
function timeToResumed(): Promise<number> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', loader, code, '-c', '-p', 'and now?'], { cwd: workspace, env });
    let stderr = '';
    let resumed: number | undefined;
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (resumed !== undefined || !/resumed with \d+ messages/.test(stderr)) return;
      resumed = performance.now() - started;
      child.kill('SIGKILL'); // the next run takes over the lock it leaves
    });
    child.on('close', () => {
      if (resumed === undefined) fail(new Error(`-c exited before it said it had resumed:\n${stderr}`));
      else done(resumed);
    });
  });
}

console.log(`start-up alone (--help), median of 3:    ${runs(['--help']).toFixed(0)} ms`);
console.log(`--sessions, median of 3:                 ${runs(['--sessions']).toFixed(0)} ms`);
const resumes: number[] = [];
for (let i = 0; i < 3; i++) resumes.push(await timeToResumed());
console.log(`-c until "resumed with …", median of 3:  ${median(resumes).toFixed(0)} ms`);
process.env.HOME = home;
process.chdir(workspace);
const { loadSession } = await import(join(REPO, 's04_session/session.ts'));
const loads = Array.from({ length: 5 }, () => {
  const started = performance.now();
  loadSession(file);
  return performance.now() - started;
});
console.log(`loadSession() alone, median of 5:        ${median(loads).toFixed(0)} ms`);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
