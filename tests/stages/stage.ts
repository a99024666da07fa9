/**
 * The stages of `npm run grade`: what a chapter's mechanism must do, judged from outside, the way
 * the chapters' own tests judge them. The grader scripts the model on the strict fake API (which
 * refuses what the real API refuses), runs the folder's code.ts as a subprocess, and looks only at
 * what the contract promises: the requests it sent, the answer on stdout, the exit code, the files
 * in the workspace and under HOME. Never the wording on stderr, colours, file layout or names.
 *
 * A stage's check throws a Miss (what the model asked, what the agent did, what was expected),
 * and its hint is a question, shown with --hint. `npm run grade` runs them on a reader's folder;
 * tests/grade.test.ts runs them on every chapter, on mutants of it and on the fixture solutions.
 *
 *   const agent = new Agent('s01', '/repo/mine/s01_agent_loop/code.ts');
 *   await stage.check(agent);     // passes, or throws a Miss
 *
 * Runs are shared: `agent.run('tools', opts)` runs once per key, so the stages that read one
 * scripted conversation (several calls in a reply, say) cost one process between them.
 */
import { isAbsolute, relative } from 'node:path';
import {
  REPO,
  runChapter,
  runRepl,
  type ReplInput,
  type RunOptions,
  type RunResult,
} from '../helpers/run-chapter.ts';
import type { RecordedRequest } from '../../shared/fake-anthropic.ts';

export interface Stage {
  /** What the stage checks, as a reader would say it: "a prompt gets an answer". */
  name: string;
  /** A question that points the way without giving the answer (shown with --hint). */
  hint: string;
  /** Resolves when the agent does it; throws a Miss (or another error: the grader's own) if not. */
  check(agent: Agent): Promise<void>;
}

export interface Said {
  /** What the scripted model asked for. */
  asked: string;
  /** What the agent did: the request it sent, the tool result, the file on disk, the exit code. */
  did: string;
  /** What a working agent does. */
  expected: string;
}

/** A stage the agent does not pass, with what to tell the reader (at most ten lines in all). */
export class Miss extends Error {
  constructor(readonly said: Said) {
    super(`asked: ${said.asked}\ndid: ${said.did}\nexpected: ${said.expected}`);
  }
}

export function miss(asked: string, did: string, expected: string): never {
  throw new Miss({ asked, did, expected });
}

/** The stage fails unless `condition` holds. */
export function need(
  condition: unknown,
  asked: string,
  did: string,
  expected: string,
): asserts condition {
  if (!condition) miss(asked, did, expected);
}

/** How long one run of the reader's agent may take before it counts as hung and is stopped. */
export const RUN_BOUND_MS = 20_000;

export class Agent {
  private made = new Map<string, Promise<unknown>>();
  /**
   * @param chapter the chapter whose stages are graded ('s01')
   * @param code the code.ts to run (a chapter's, a reader's, a mutant's)
   * @param boundMs a run still going after this long is stopped, and the stage says it hung
   */
  constructor(
    readonly chapter: string,
    readonly code: string,
    readonly boundMs = RUN_BOUND_MS,
  ) {}

  /** The folder graded, as the reader would name it: `mine/s01_agent_loop`. */
  get folder(): string {
    return relative(REPO, this.code).replace(/\/code\.ts$/, '');
  }

  /**
   * Run the agent (give `-p` in args), once per key: stages that ask for the same key share the
   * run. A request the API refuses, or a run that does not end in time, is in the result for the
   * stage to explain (`accepted()`, `ended()`), not an error.
   */
  run(key: string, opts: RunOptions): Promise<RunResult> {
    return this.once(`run ${key}`, () => runChapter(this.chapter, this.options(opts)));
  }

  /** The REPL, typed into through a pseudo-terminal (see runRepl), once per key. */
  repl(key: string, inputs: ReplInput[], opts: RunOptions = {}): Promise<RunResult> {
    // The prompt is what the REPL prints before the cursor: a line that starts with a word and
    // ends in "> " ("s01 >> ", "you> "). Not a line that starts with ">": the chapters show a tool
    // call that way on stderr, which the terminal shows too ("> read_file notes.txt").
    const prompt = /(?:^|\n)[^\s>][^\n>]*>+ /g;
    return this.once(`run ${key}`, () =>
      runRepl(this.chapter, inputs, { ...this.options(opts), prompt }),
    );
  }

  /**
   * `make()` once per key, for what several stages read and one run alone does not make: a run
   * and a copy of the HOME it left, two runs at once (s04). Keys of their own, apart from runs'.
   */
  once<T>(key: string, make: () => Promise<T>): Promise<T> {
    if (!this.made.has(key)) this.made.set(key, make());
    return this.made.get(key) as Promise<T>;
  }

  private options(opts: RunOptions): RunOptions {
    return {
      timeoutMs: this.boundMs,
      ...opts,
      codePath: this.code,
      expectRefused: true,
      expectTimeout: true,
    };
  }
}

/** A short, one-line JSON of a value, for a Miss: `{"command":"echo hi"}`. */
export function brief(value: unknown, max = 160): string {
  const json =
    typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return json.length > max ? `${json.slice(0, max - 1)}…` : json;
}

/** The last few lines of a text, for a Miss. */
export function lastLines(text: string, n = 3): string {
  const lines = text
    .trimEnd()
    .split('\n')
    .filter((line) => line.trim() !== '');
  return lines.slice(-n).join(' / ') || '(nothing)';
}

/**
 * Where the reader's code crashed, from a stack trace in stderr: "TypeError: x is not a function,
 * at mine/s01_agent_loop/code.ts:57:11". Undefined when stderr holds no stack trace.
 */
export function crashOf(run: RunResult): string | undefined {
  // Under the REPL's terminal, stderr comes out with stdout.
  return crashIn(`${run.stderr}\n${run.stdout}`);
}

/** The same, from a text that may hold a stack trace. */
export function crashIn(stderr: string): string | undefined {
  // `    at agentLoop (mine/s01_agent_loop/code.ts:57:11)`, or file:///… under tsx.
  const frame =
    /^\s+at (?:.*? \()?(?:file:\/\/)?((?:[^\s():]+\/)*[^\s():]+\.ts):(\d+)(?::(\d+))?\)?$/m;
  const frames = stderr.split('\n').filter((line) => frame.test(line));
  if (frames.length === 0) return undefined;
  // The first frame in a file outside shared/ and node_modules: the reader's own code.
  const own = frames.find((line) => !/\b(?:shared|node_modules)\//.test(line)) ?? frames[0];
  const [, file, line, column] = frame.exec(own)!;
  const lines = stderr.split('\n');
  const error = lines.find((l) =>
    /^(?:Uncaught )?[A-Z]\w*(?:Error|Exception)\b.*|^Error\b/.test(l.trim()),
  );
  // A bundle's positions come back relative to the repo (originalPositions); tsx names the file.
  const path = isAbsolute(file) ? relative(REPO, file) : file;
  const where = `${path}:${line}${column ? `:${column}` : ''}`;
  return `${(error ?? 'an error').trim()}, at ${where}`;
}

/** How a run ended, in words: "exited 1", "crashed: …", "was still running after 20 s". */
export function ending(run: RunResult, boundMs: number): string {
  if (run.timedOut) return `was still running after ${boundMs / 1000} s, so the grader stopped it`;
  const crash = run.code !== 0 ? crashOf(run) : undefined;
  if (crash) return `crashed: ${crash}`;
  const said = lastLines(run.stderr || run.stdout);
  const stderr = run.code === 0 ? '' : `; its last lines on stderr: ${said}`;
  return `exited with code ${run.code}${stderr}`;
}

/**
 * The run's request number `n` (1-based), which the API accepted. If there is none, the stage
 * fails and says why: the agent stopped before sending it (and how), or the API refused it.
 */
export function accepted(
  agent: Agent,
  run: RunResult,
  n: number,
  asked: string,
  expected: string,
): RecordedRequest {
  const request = run.requests[n - 1];
  if (request?.refused) {
    const { status, message } = request.refused;
    miss(asked, `sent request ${n}, which the API refuses: ${status} ${message}`, expected);
  }
  if (!request) {
    const sent = `sent ${run.requests.length} request${run.requests.length === 1 ? '' : 's'}`;
    miss(asked, `${sent}, then ${ending(run, agent.boundMs)}`, expected);
  }
  return request;
}

/** The run ended by itself with code 0 within the bound; otherwise the stage fails saying how. */
export function ended(agent: Agent, run: RunResult, asked: string, expected: string): void {
  const refused = run.requests.find((r) => r.refused);
  if (refused) {
    const n = run.requests.indexOf(refused) + 1;
    miss(
      asked,
      `sent request ${n}, which the API refuses: ` +
        `${refused.refused!.status} ${refused.refused!.message}`,
      expected,
    );
  }
  if (run.timedOut || run.code !== 0) miss(asked, `${ending(run, agent.boundMs)}`, expected);
}

/** A message's blocks of one type (the `tool_result` blocks of the last user message, say). */
export function blocks(message: any, type: string): any[] {
  if (!message || typeof message.content === 'string') return [];
  return (message.content as any[]).filter((b) => b?.type === type);
}

/** A tool_result's content as text (a string, or its text blocks joined). */
export function resultText(block: any): string {
  if (typeof block?.content === 'string') return block.content;
  if (Array.isArray(block?.content)) return block.content.map((b: any) => b.text ?? '').join('');
  return '';
}

/** What a message holds, in one line: "user: tool_result(toolu_1), text". */
export function shape(message: any): string {
  if (!message) return '(no message)';
  if (typeof message.content === 'string')
    return `${message.role}: text ${brief(message.content, 60)}`;
  const parts = (message.content as any[]).map((b) =>
    b.type === 'tool_result'
      ? `tool_result(${b.tool_use_id})`
      : b.type === 'tool_use'
        ? `tool_use(${b.name}, ${b.id})`
        : b.type,
  );
  return `${message.role}: ${parts.join(', ') || '(empty)'}`;
}
