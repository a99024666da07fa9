/**
 * Run a chapter the way a reader does: `sNN_name/code.ts …` as a subprocess, in a fresh temporary
 * workspace (its cwd) with HOME pointed at a temporary folder, talking over real HTTP through the
 * real SDK to a fresh strict fake of the Messages API.
 *
 *   const run = await runChapter('s01', {
 *     args: ['-p', 'list files'],
 *     replies: [reply(toolUse('bash', { command: 'ls' })), reply(text('done'))],
 *   });
 *   run.code, run.stdout, run.stderr, run.requests, run.workspace
 *
 * The chapter runs from a bundle compiled once per content (see bundle.ts), which starts in half
 * the time tsx takes; `viaTsx: true` runs it through the tsx CLI instead, exactly as `npx tsx` does.
 *
 * A request the fake refused fails the run loudly, unless the test says it expects one; so does a
 * run that has not exited after `timeoutMs`, unless the test says it expects that.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  startFakeAnthropic,
  type FakeOptions,
  type RecordedRequest,
  type Reply,
  type Respond,
} from '../../shared/fake-anthropic.ts';
import { chapterCode, REPO } from '../../scripts/chapters.ts';
import { BUNDLE_DIR, bundleChapter, originalPositions } from './bundle.ts';

// Where the repo is and which chapters it has: in a module of their own, which npm run demo
// loads without the fake API and esbuild that this one brings.
export { chapterCode, chapters, REPO } from '../../scripts/chapters.ts';
// What `npx tsx` runs: the CLI, which starts node with tsx's loader in a child process.
const TSX_CLI = join(REPO, 'node_modules/.bin/tsx');
export const TEST_KEY = 'sk-ant-test-key';
export const TEST_MODEL = 'claude-sonnet-5-5';
// A bound for a run that hangs, not a wait: a run ends when the chapter exits, long before this on
// an idle machine, and still before it with other work holding both cores (tests must pass there).
const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * How node runs a bundle: with V8's `--liftoff-only`, set by a preload once node's own modules are
 * loaded, which saves the WebAssembly's recompiling at exit without losing node's code cache
 * (liftoff.mjs says why). (Runs through tsx keep node's defaults.)
 */
const LIFTOFF = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'liftoff.mjs')).href;
export const NODE_FLAGS = [`--import=${LIFTOFF}`];
const TSX_TMPDIR = join(dirname(BUNDLE_DIR), 'lah-tsx');

export interface RunOptions {
  /** Command-line arguments, e.g. ['-p', 'hello']. */
  args?: string[];
  /** Replies for the fake, one per request… */
  replies?: Reply[];
  /** …or a function of the request. */
  respond?: Respond;
  /** Other fake options (contextWindow, maxOutputTokens, …). */
  fake?: Omit<FakeOptions, 'replies' | 'respond'>;
  /** Run with no key and no base URL: the chapter must fall back to its offline demo model. */
  offline?: boolean;
  /** Files to create in the workspace before the run (relative path → content). */
  files?: Record<string, string>;
  /** Anything else to prepare in the workspace (symlinks, say) before the run. */
  setup?: (workspace: string) => void;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Kill the run after this long (default 60 s). A run killed this way fails, unless `expectTimeout`. */
  timeoutMs?: number;
  /** The test expects the run to be killed at `timeoutMs` (it looks at `timedOut` itself). */
  expectTimeout?: boolean;
  /** The test expects the fake to refuse a request (otherwise a refusal fails the run). */
  expectRefused?: boolean;
  /** Run this file instead of the chapter's code.ts (an exercise solution, say). */
  codePath?: string;
  /**
   * Run through the tsx CLI (`node_modules/.bin/tsx sNN/code.ts`, what `npx tsx` runs) rather than
   * the cached bundle: slower, so one test per chapter, to prove the chapter runs as a reader runs it.
   */
  viaTsx?: boolean;
  /**
   * Start the chapter under this command, which then runs node: e.g. ['setpriv', …] to run it as
   * root without root's power to read any file.
   */
  wrapper?: string[];
  /**
   * Stop reading stdout after this many lines, as `… | head -N` does (runChapter only). Then the file
   * `stdout-closed` appears beside the workspace (`../stdout-closed` from it): what a test's command
   * can wait for, instead of a time it hopes is long enough.
   */
  closeStdoutAfter?: number;
  /**
   * Run in these folders instead of fresh ones: an earlier run's `{ workspace, home }`, so that a
   * second run sees what the first one left (a session to resume, say). No `files` or `setup` then.
   */
  folders?: { workspace: string; home: string };
  /** Run in this folder of the workspace (relative to it) instead of the workspace itself. */
  cwd?: string;
  /** Send `signal` to the chapter's process once its stderr matches `after` (runChapter only). */
  signalWhen?: { after: RegExp; signal: NodeJS.Signals };
  /** Called with all of stderr so far (colours stripped) after each chunk: to wait for what it says. */
  onStderr?: (stderr: string) => void;
  /**
   * Run under `ulimit -f` (in KB, through bash): a write past that size of any file fails with
   * EFBIG, partway, as one fails with ENOSPC when the disk fills up.
   */
  fileSizeLimitKb?: number;
}

export interface RunResult {
  code: number | null;
  /** Killed at `timeoutMs`; only ever true with `expectTimeout` (otherwise the run throws). */
  timedOut: boolean;
  /** Output with colours stripped and \r\n turned into \n. */
  stdout: string;
  stderr: string;
  requests: RecordedRequest[];
  workspace: string;
  home: string;
  /** The run's own temporary folder, holding `workspace` and `home` (removed after the test file). */
  tempDir: string;
}

const made: string[] = [];
const running = new Set<ChildProcess>();
/**
 * Remove the temporary folders made so far, and kill any run a timed-out test left behind
 * (the vitest setup calls this after each file).
 */
export function cleanupTemp(): void {
  for (const child of running) killTree(child.pid!);
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');

async function prepare(chapter: string, opts: RunOptions) {
  const code = opts.codePath ?? chapterCode(chapter);
  // Bundle first: code that does not compile fails here with esbuild's message, before anything starts.
  if (opts.viaTsx) mkdirSync(TSX_TMPDIR, { recursive: true });
  const command = opts.viaTsx ? [TSX_CLI, code] : [process.execPath, ...NODE_FLAGS, await bundleChapter(code)];
  // npm run bench:suite: each bundle run adds what it spent to <LAH_RUN_LOG>.cpu (cpu-at-exit.mjs).
  const runLog = process.env.LAH_RUN_LOG;
  if (runLog && !opts.viaTsx) {
    const preload = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'cpu-at-exit.mjs'));
    preload.searchParams.set('log', `${runLog}.cpu`);
    command.splice(1, 0, `--import=${preload.href}`);
  }
  command.push(...(opts.args ?? []));
  if (opts.fileSizeLimitKb !== undefined) {
    command.unshift('bash', '-c', `ulimit -f ${opts.fileSizeLimitKb} && exec "$@"`, 'bash');
  }
  command.unshift(...(opts.wrapper ?? []));

  // Workspace and home share one folder of their own, so a `..` from the workspace (a test that
  // tries to escape it, say) lands in this run's folder, not in the shared /tmp with other runs.
  let { workspace, home } = opts.folders ?? { workspace: '', home: '' };
  const tempDir = opts.folders ? dirname(workspace) : mkdtempSync(join(tmpdir(), 'lah-run-'));
  if (!opts.folders) {
    made.push(tempDir);
    workspace = join(tempDir, 'workspace');
    home = join(tempDir, 'home');
    mkdirSync(workspace);
    mkdirSync(home);
  }
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(workspace, rel)), { recursive: true });
    writeFileSync(join(workspace, rel), content);
  }
  opts.setup?.(workspace);
  const fake = opts.offline
    ? undefined
    : await startFakeAnthropic({ ...opts.fake, replies: opts.replies, respond: opts.respond });
  // Start from a clean slate: nothing from the developer's own shell may leak into a run.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('ANTHROPIC_') && !['MODEL_ID', 'LAH_RUN_LOG'].includes(k) && !k.startsWith('VITEST')) env[k] = v;
  }
  // TERM as on a reader's terminal: readline edits lines (history, arrows) only where TERM is not dumb.
  Object.assign(env, { HOME: home, NO_COLOR: '1', TERM: 'xterm-256color' });
  if (fake) Object.assign(env, { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: TEST_KEY, MODEL_ID: TEST_MODEL });
  // tsx keeps what it compiled in TMPDIR/tsx-<uid>/, by content: a reader's is warm after the first
  // run. The suite's TMPDIR is new each time (global-setup.ts), so give tsx one that lasts: a third
  // of a CPU-second less for each tsx run of a chapter not compiled yet. (No chapter uses TMPDIR.)
  if (opts.viaTsx) env.TMPDIR = TSX_TMPDIR;
  Object.assign(env, opts.env);
  return { workspace, home, tempDir, fake, env, command };
}

type Prepared = Awaited<ReturnType<typeof prepare>>;

/**
 * For `npm run bench:suite`, which sets LAH_RUN_LOG: one line a chapter process, naming the test
 * file that started it and whether it ran through tsx. These processes are most of what the suite
 * spends, so their number is the figure to watch.
 */
function noteRun(opts: RunOptions) {
  const log = process.env.LAH_RUN_LOG;
  if (!log) return;
  const file: string = (globalThis as any).__vitest_worker__?.filepath ?? ''; // vitest's, where it knows
  appendFileSync(log, `${JSON.stringify({ file: file && relative(REPO, file), tsx: !!opts.viaTsx })}\n`);
}

type Collected = {
  code: number | null;
  timedOut: boolean;
  /** On a timeout: the exit code if the chapter itself had exited already (its output was still held open). */
  exitedAt?: number | null;
  stdout: string;
  stderr: string;
};

const tail = (text: string, lines = 40) => {
  const all = text.trimEnd().split('\n');
  const shown = all.length > lines ? [`[… ${all.length - lines} earlier lines]`, ...all.slice(-lines)] : all;
  return shown.join('\n') || '(nothing)';
};

function finish(p: Prepared, opts: RunOptions, out: Collected, hint = ''): RunResult {
  noteRun(opts);
  const requests = p.fake ? [...p.fake.requests] : [];
  const result: RunResult = {
    code: out.code,
    timedOut: out.timedOut,
    // A stack trace should name code.ts and its lines, not the bundle's.
    stdout: originalPositions(plain(out.stdout)),
    stderr: originalPositions(plain(out.stderr)),
    requests,
    workspace: p.workspace,
    home: p.home,
    tempDir: p.tempDir,
  };
  const refused = requests.filter((r) => r.refused);
  if (refused.length && !opts.expectRefused) {
    const detail = refused
      .map((r) => `  ${r.refused!.status} ${r.refused!.message}\n  request body: ${JSON.stringify(r.body).slice(0, 1500)}`)
      .join('\n');
    throw new Error(
      `The real API would have refused ${refused.length} request(s) this chapter sent:\n${detail}\n` +
        `--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
    );
  }
  if (out.timedOut && !opts.expectTimeout) {
    const seconds = (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000;
    // A chapter that exited while something it started kept its output open is a different bug.
    const what =
      out.exitedAt === undefined
        ? `the chapter did not exit within ${seconds} s (timed out)`
        : `the chapter exited (code ${out.exitedAt}), but a process it started still held its output open ` +
          `after ${seconds} s (timed out)`;
    throw new Error(
      `${what}; last output:\n--- stdout ---\n${tail(result.stdout)}\n--- stderr ---\n${tail(result.stderr)}\n` +
        `(${requests.length} request(s) reached the fake${hint})`,
    );
  }
  return result;
}

/** Run a chapter non-interactively (use `-p` in args) and wait for it to exit. */
export async function runChapter(chapter: string, opts: RunOptions = {}): Promise<RunResult> {
  const p = await prepare(chapter, opts);
  try {
    const [file, ...args] = p.command;
    // detached: the chapter leads a process group of its own, so a timeout can kill all of it.
    const child = spawn(file, args, {
      cwd: join(p.workspace, opts.cwd ?? '.'),
      env: p.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const limit = opts.closeStdoutAfter;
    const onStdout =
      limit === undefined
        ? undefined
        : (stdout: string) => {
            if (child.stdout!.destroyed || stdout.split('\n').length <= limit) return;
            child.stdout!.destroy(); // the chapter's next write gets EPIPE
            writeFileSync(join(p.tempDir, 'stdout-closed'), '');
          };
    const signalWhen = opts.signalWhen;
    let signalled = false;
    const onStderr = (stderr: string) => {
      opts.onStderr?.(plain(stderr));
      if (!signalWhen || signalled || !signalWhen.after.test(plain(stderr))) return;
      signalled = true;
      child.kill(signalWhen.signal);
    };
    return finish(p, opts, await collect(child, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, onStdout, onStderr));
  } finally {
    await p.fake?.close();
  }
}

/** What to type into the REPL: a line (typed with Enter once the prompt appears again), or keys typed as
 * they are (no Enter) once the output matches `after` — e.g. `{ after: /\$ sleep 30/, keys: '\x03' }` for a
 * Ctrl+C while that command runs. `delayMs`: type them that long after `after` matched. Or keys
 * typed once `file` (in the workspace) exists: `{ file: 'started', keys: '\x03' }` after a command
 * `touch started; sleep 30`, whatever the agent prints (the grader's stages go by no wording). */
export type ReplInput =
  | string
  | { after: RegExp; keys: string; delayMs?: number }
  | { file: string; keys: string };

/**
 * Drive the REPL through a pseudo-terminal (it refuses piped stdin): each line is typed
 * when the prompt has appeared once more. End with 'exit' (or '\x04' for Ctrl+D), or the run times out.
 */
export async function runRepl(
  chapter: string,
  inputs: ReplInput[],
  opts: RunOptions & { prompt?: RegExp } = {},
): Promise<RunResult> {
  const p = await prepare(chapter, opts);
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const cmd = `exec ${p.command.map(q).join(' ')}`;
  try {
    const [pty, ptyArgs] = underPty(cmd);
    const child = spawn(pty, ptyArgs, {
      cwd: join(p.workspace, opts.cwd ?? '.'),
      env: p.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    // The prompt counts only at the start of a line: tool output that quotes "s03 >> " is not a prompt.
    const prompt = opts.prompt ?? /(?:^|\n)s\d\d >> /g;
    let typed = 0;
    let lines = 0; // lines typed so far, one per prompt seen
    let latest = '';
    const typeNext = (stdout: string) => {
      latest = stdout;
      const text = plain(stdout);
      const seen = (text.match(new RegExp(prompt.source, 'g')) ?? []).length;
      for (let input = inputs[typed]; input !== undefined; input = inputs[++typed]) {
        if (typeof input === 'string') {
          if (lines >= seen) return;
          child.stdin!.write(input + '\r');
          lines++;
        } else if ('file' in input) {
          if (!existsSync(join(p.workspace, input.file))) return;
          child.stdin!.write(input.keys);
        } else {
          if (!input.after.test(text)) return;
          const { keys, delayMs } = input;
          const press = () => child.stdin!.write(keys);
          if (delayMs === undefined) press();
          else setTimeout(press, delayMs);
        }
      }
    };
    // A file appears without a word printed: look for it now and then, while keys wait for one.
    const waitsForFile = inputs.some((input) => typeof input === 'object' && 'file' in input);
    const poll = waitsForFile ? setInterval(() => typeNext(latest), 50) : undefined;
    const out = await collect(child, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, typeNext);
    clearInterval(poll);
    const typing = `; ${typed} of ${inputs.length} inputs were typed, each once ${prompt.source} appeared again`;
    return finish(p, opts, out, typing);
  } finally {
    await p.fake?.close();
  }
}

/**
 * `script` running a shell command on a pseudo-terminal, discarding its typescript: util-linux's
 * on Linux (-e: exit with the command's code, -c: the command), BSD's on macOS, whose options
 * differ (it takes the file, then the command and its arguments, and exits with the command's code).
 */
function underPty(command: string): [string, string[]] {
  if (process.platform === 'darwin') return ['script', ['-q', '/dev/null', 'sh', '-c', command]];
  return ['script', ['-qec', command, '/dev/null']];
}

/** Wait for the child to exit, keeping its output; `onStdout` sees all of stdout so far after each chunk. */
function collect(
  child: ChildProcess,
  timeoutMs: number,
  onStdout?: (stdout: string) => void,
  onStderr?: (stderr: string) => void,
): Promise<Collected> {
  running.add(child);
  return new Promise((done) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let exitedAt: number | null | undefined;
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout);
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr);
    });
    // A stdout the test destroyed on purpose (closeStdoutAfter) may report the broken pipe.
    child.stdout!.on('error', () => {});
    child.stdin?.on('error', () => {});
    child.on('exit', (code) => (exitedAt = code));
    // Could not start at all (no `script` on this machine, say): 'close' still follows, with this in stderr.
    child.on('error', (err) => (stderr += `\n[harness] could not run ${child.spawnfile}: ${err.message}\n`));
    let exitedBeforeTimeout: number | null | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      exitedBeforeTimeout = exitedAt;
      killTree(child.pid!);
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      done({ code, timedOut, exitedAt: exitedBeforeTimeout, stdout, stderr });
    });
  });
}

/**
 * SIGKILL a process and everything below it. Its own process group is not enough: `script` starts
 * the chapter in a new session on the pseudo-terminal, and a chapter's tools may start groups of
 * their own. So kill the group of every descendant, then every descendant.
 */
function killTree(root: number): void {
  const ps = spawnSync('ps', ['-A', '-o', 'pid=,ppid=,pgid='], { encoding: 'utf8' });
  const rows = (ps.stdout ?? '').trim().split('\n').map((line) => line.trim().split(/\s+/).map(Number));
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of rows) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  const ownGroup = rows.find(([pid]) => pid === process.pid)?.[2];
  const groups = new Set(rows.filter(([pid]) => tree.includes(pid)).map(([, , pgid]) => pgid));
  groups.add(root); // the child leads its own group (detached), even if ps could not be run
  const targets = [...groups].filter((g) => g !== ownGroup && g > 1).map((g) => -g); // -pgid: the whole group
  for (const target of [...targets, ...tree]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** What you typed, from a user message: its content, or its first block (s06 adds a context block after it). */
export const promptOf = (message: any): string =>
  typeof message.content === 'string' ? message.content : (message.content[0]?.text ?? '');

/** The tool_result blocks of the last message of a recorded request body. */
export const toolResults = (body: any): any[] =>
  (body.messages.at(-1).content as any[]).filter((b) => b.type === 'tool_result');
