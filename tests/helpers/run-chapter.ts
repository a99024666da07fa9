/**
 * Run a chapter the way a reader does: `tsx sNN_name/code.ts …` as a subprocess, in a fresh
 * temporary workspace (its cwd) with HOME pointed at a temporary folder, talking over real HTTP
 * through the real SDK to a fresh strict fake of the Messages API.
 *
 *   const run = await runChapter('s01', { args: ['-p', 'list files'], replies: [reply(toolUse('bash', { command: 'ls' })), reply(text('done'))] });
 *   run.code, run.stdout, run.stderr, run.requests, run.workspace
 *
 * A request the fake refused fails the run loudly, unless the test says it expects one.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFakeAnthropic, type FakeOptions, type RecordedRequest, type Reply, type Respond } from '../../shared/fake-anthropic.ts';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// tsx's ESM entry: chapters are ES modules, and it skips the CommonJS hooks of the full loader
// (about 0.2 s less per run on Node 20, where every module load crosses to the hooks' thread).
const TSX_LOADER = pathToFileURL(join(REPO, 'node_modules/tsx/dist/esm/index.mjs')).href;
export const TEST_KEY = 'sk-ant-test-key';
export const TEST_MODEL = 'claude-sonnet-5-5';

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
  /** Kill the run after this long (default 20 s). */
  timeoutMs?: number;
  /** The test expects the fake to refuse a request (otherwise a refusal fails the run). */
  expectRefused?: boolean;
  /** Run this file instead of the chapter's code.ts (an exercise solution, say). */
  codePath?: string;
}

export interface RunResult {
  code: number | null;
  timedOut: boolean;
  /** Output with colours stripped and \r\n turned into \n. */
  stdout: string;
  stderr: string;
  requests: RecordedRequest[];
  workspace: string;
  home: string;
}

const made: string[] = [];
/** Remove the temporary folders made so far (the vitest setup calls this after each file). */
export function cleanupTemp(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** `s01` or `s01_agent_loop` → absolute path of that chapter's code.ts. */
export function chapterCode(chapter: string): string {
  const dir = readdirSync(REPO).find((d) => d === chapter || d.startsWith(`${chapter}_`));
  if (!dir || !existsSync(join(REPO, dir, 'code.ts'))) throw new Error(`No chapter folder with a code.ts matches "${chapter}"`);
  return join(REPO, dir, 'code.ts');
}

export const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');

async function prepare(chapter: string, opts: RunOptions) {
  const workspace = mkdtempSync(join(tmpdir(), 'lah-ws-'));
  const home = mkdtempSync(join(tmpdir(), 'lah-home-'));
  made.push(workspace, home);
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(workspace, rel)), { recursive: true });
    writeFileSync(join(workspace, rel), content);
  }
  opts.setup?.(workspace);
  const fake = opts.offline ? undefined : await startFakeAnthropic({ ...opts.fake, replies: opts.replies, respond: opts.respond });
  // Start from a clean slate: nothing from the developer's own shell may leak into a run.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('ANTHROPIC_') && k !== 'MODEL_ID' && !k.startsWith('VITEST')) env[k] = v;
  }
  Object.assign(env, { HOME: home, NO_COLOR: '1', TERM: 'dumb' });
  if (fake) Object.assign(env, { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: TEST_KEY, MODEL_ID: TEST_MODEL });
  Object.assign(env, opts.env);
  const code = opts.codePath ?? chapterCode(chapter);
  return { workspace, home, fake, env, code };
}

function finish(
  p: { workspace: string; home: string; fake?: Awaited<ReturnType<typeof startFakeAnthropic>> },
  opts: RunOptions,
  out: { code: number | null; timedOut: boolean; stdout: string; stderr: string },
): RunResult {
  const requests = p.fake ? [...p.fake.requests] : [];
  const result: RunResult = { ...out, stdout: plain(out.stdout), stderr: plain(out.stderr), requests, workspace: p.workspace, home: p.home };
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
  return result;
}

/** Run a chapter non-interactively (use `-p` in args) and wait for it to exit. */
export async function runChapter(chapter: string, opts: RunOptions = {}): Promise<RunResult> {
  const p = await prepare(chapter, opts);
  try {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, p.code, ...(opts.args ?? [])], {
      cwd: p.workspace,
      env: p.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    return finish(p, opts, await collect(child, opts.timeoutMs ?? 20_000));
  } finally {
    await p.fake?.close();
  }
}

/**
 * Drive the REPL through a pseudo-terminal (readline-sync refuses piped stdin): each input is typed
 * when the prompt has appeared once more. Type 'exit' last, or the run times out.
 */
export async function runRepl(chapter: string, inputs: string[], opts: RunOptions & { prompt?: RegExp } = {}): Promise<RunResult> {
  const p = await prepare(chapter, opts);
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const cmd = `exec ${[process.execPath, '--import', TSX_LOADER, p.code, ...(opts.args ?? [])].map(q).join(' ')}`;
  try {
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: p.workspace, env: p.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const prompt = opts.prompt ?? /s\d\d >> /g;
    let typed = 0;
    const typeNext = (stdout: string) => {
      const seen = (plain(stdout).match(new RegExp(prompt.source, 'g')) ?? []).length;
      while (typed < seen && typed < inputs.length) child.stdin!.write(inputs[typed++] + '\r');
    };
    return finish(p, opts, await collect(child, opts.timeoutMs ?? 20_000, typeNext));
  } finally {
    await p.fake?.close();
  }
}

/** Wait for the child to exit, keeping its output; `onStdout` sees all of stdout so far after each chunk. */
function collect(child: ReturnType<typeof spawn>, timeoutMs: number, onStdout?: (stdout: string) => void) {
  return new Promise<{ code: number | null; timedOut: boolean; stdout: string; stderr: string }>((done) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout);
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, timedOut, stdout, stderr });
    });
  });
}

/** The tool_result blocks of the last message of a recorded request body. */
export const toolResults = (body: any): any[] => (body.messages.at(-1).content as any[]).filter((b) => b.type === 'tool_result');
