/**
 * s01 · The agent loop — the whole idea of a coding agent in one file.
 *
 * Send the conversation and the tools, stream the reply, run the tool calls it asks for, send the
 * results back, and repeat until the model answers without calling a tool.
 *
 *   npx tsx s01_agent_loop/code.ts              a REPL (type `exit` or press Ctrl+D to leave)
 *   npx tsx s01_agent_loop/code.ts -p "..."     one prompt, then exit
 */
import Anthropic, { type Middleware } from '@anthropic-ai/sdk';
import type { Message, MessageCreateParams, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { realpathSync } from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import 'dotenv/config';
import readlineSync from 'readline-sync';
import { startOfflineModel } from '../shared/offline-model.ts';

// ── Config ──────────────────────────────────────────────────────────────────────────────────────
const API_KEY = process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN;
const BASE_URL = process.env.ANTHROPIC_BASE_URL || undefined;
export const MODEL = process.env.MODEL_ID || 'claude-sonnet-5-5';
const MAX_TOKENS = 8000; // the longest reply we accept in one call
const MAX_ROUNDS = 30; // model calls per prompt, so a confused model cannot loop forever
const WORKDIR = process.cwd(); // the agent works in the folder you start it from
const SYSTEM =
  `You are a coding agent working in ${WORKDIR}. Use the bash tool to look around and to make changes. Be brief.`;

// The model's answer goes to stdout; everything about the run (banner, tool calls, token counts,
// errors) goes to stderr, so `code.ts -p "…" > answer.txt` keeps just the answer.
// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
const COLOR = process.stderr.isTTY && !process.env.NO_COLOR;
const [DIM, YELLOW, CYAN] = [2, 33, 36];
const paint = (color: number, text: string) => (COLOR ? `\x1b[${color}m${text}\x1b[0m` : text);

// The SDK retries a 429 or 5xx by itself, waiting as long as the API's retry-after header asks, with
// no upper bound. Say when it waits; and rather than sit silent for an hour, give up with an error.
const MAX_RETRY_WAIT = 60; // seconds

/** How long a response asks us to wait before retrying, in seconds (0 if it does not say). */
function retryAfter(headers: Headers): number {
  const ms = Number(headers.get('retry-after-ms'));
  if (ms > 0) return ms / 1000;
  const after = headers.get('retry-after') ?? ''; // seconds, or an HTTP date
  const seconds = Number(after) || (Date.parse(after) - Date.now()) / 1000;
  return seconds > 0 ? Math.ceil(seconds) : 0;
}

const announceRetries: Middleware = async (request, next) => {
  const response = await next(request);
  const wait = retryAfter(response.headers);
  const lastTry = Number(new Headers(request.headers).get('x-stainless-retry-count')) >= client.maxRetries;
  if (response.ok || wait === 0 || lastTry || response.headers.get('x-should-retry') === 'false') return response;
  if (wait <= MAX_RETRY_WAIT) {
    console.error(paint(DIM, `(API ${response.status}: it asks to wait ${wait} s; the SDK will retry)`));
    return response;
  }
  // x-should-retry: false makes the SDK throw this error now instead of waiting; describeError says why.
  const headers = new Headers(response.headers);
  headers.set('x-should-retry', 'false');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
};

// No key? Talk to the offline demo model on 127.0.0.1 instead: same SDK, same requests.
const offline = API_KEY ? undefined : await startOfflineModel();
const client = new Anthropic({
  apiKey: API_KEY || offline!.apiKey, // ||, not ??: an empty key counts as no key
  baseURL: offline?.url ?? BASE_URL,
  // SDK 1.x authenticates with a Bearer header; some Anthropic-compatible vendors read only x-api-key.
  defaultHeaders: BASE_URL && API_KEY ? { 'x-api-key': API_KEY } : undefined,
  middleware: [announceRetries],
});

// ── The one tool: bash ──────────────────────────────────────────────────────────────────────────
// The model sees only this description: name, what it does, and a JSON Schema for its input.
export const TOOLS: Tool[] = [
  {
    name: 'bash',
    description: 'Run a shell command in the workspace. Returns stdout and stderr together, then the exit code.',
    input_schema: {
      type: 'object',
      properties: { command: { type: 'string', description: 'The command, e.g. "ls -la" or "cat package.json"' } },
      required: ['command'],
    },
  },
];

const MAX_OUTPUT = 20_000; // characters; a `cat` of a huge log must not flood the context
const TIMEOUT = 120; // seconds a command may run

// Each command runs in its own process group, so we can kill it together with everything it started.
// Remember the groups: however the agent exits, no command may outlive it.
const running = new Set<number>();
const killGroup = (pid: number) => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {} // it had already finished
};
process.on('exit', () => running.forEach(killGroup));

export async function runBash(command: string): Promise<string> {
  // No sandbox in s01: it runs whatever the model asks. Try it in a scratch folder (s02 adds a gate).
  const child = spawn('bash', ['-c', command], { cwd: WORKDIR, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child.pid!);
  let output = '';
  let killed = ''; // why we killed it, if we did
  const kill = (why: string) => {
    killed ||= why;
    killGroup(child.pid!);
  };
  const timer = setTimeout(() => kill(`timed out after ${TIMEOUT}s`), TIMEOUT * 1000);
  const collect = (chunk: string) => {
    output += chunk;
    if (output.length > 10_000_000) kill('more than 10 MB of output'); // `yes` would fill the memory
  };
  child.stdout.setEncoding('utf8').on('data', collect); // decode as text, so a character split
  child.stderr.setEncoding('utf8').on('data', collect); // between two chunks stays whole
  const [code, signal] = await once(child, 'close');
  clearTimeout(timer);
  running.delete(child.pid!);
  if (output.length > MAX_OUTPUT) {
    // Keep the head and the tail: errors and summaries tend to be at the ends.
    const cut = output.length - MAX_OUTPUT;
    output = `${output.slice(0, MAX_OUTPUT / 2)}\n… (${cut} characters cut) …\n${output.slice(-MAX_OUTPUT / 2)}`;
  }
  const status = killed ? `${killed}; killed` : `exit code ${code ?? signal}`;
  // trimEnd, not trim: the first line's indentation can matter (`cat -n` pads its numbers).
  return `${output.trimEnd() || '(no output)'}\n[${status}]`;
}

// ── The loop ────────────────────────────────────────────────────────────────────────────────────
// What each stop_reason means for the turn when it is not 'tool_use' (end_turn needs no remark).
const STOP_NOTES: Record<string, string> = {
  max_tokens: `(reply cut off at max_tokens=${MAX_TOKENS}; any tool call in it was not run)`,
  refusal: '(the model declined to continue)',
  model_context_window_exceeded: '(the context window is full; s05 shows how to make room)',
  pause_turn: '(the model paused its turn; say "continue" to resume)',
};
// The SDK's timeout covers the wait for a response to begin, not a stream that goes quiet halfway.
const STREAM_IDLE_SECONDS = Number(process.env.STREAM_IDLE_SECONDS) || 90;

/** Stream one reply, printing its text as it arrives; give up if the stream stalls. */
async function streamReply(params: MessageCreateParams): Promise<Message> {
  const stream = client.messages.stream(params);
  let printed = false;
  stream.on('text', (delta) => {
    printed = true;
    process.stdout.write(delta);
  });
  let idle: NodeJS.Timeout | undefined;
  const restartClock = () => {
    clearTimeout(idle);
    idle = setTimeout(() => stream.abort(), STREAM_IDLE_SECONDS * 1000);
  };
  stream.on('connect', restartClock); // the clock starts when the response does (not during retries)…
  stream.on('streamEvent', restartClock); // …and starts again with every event
  try {
    return await stream.finalMessage();
  } catch (err) {
    if (stream.aborted) throw new Error(`the API sent nothing for ${STREAM_IDLE_SECONDS} s; gave up on this reply`);
    throw err;
  } finally {
    clearTimeout(idle);
    if (printed) process.stdout.write('\n'); // what comes next, an error included, starts on its own line
  }
}

export async function agentLoop(messages: MessageParam[]): Promise<void> {
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    // Stream so text appears as it is written; the SDK reassembles the tool-call JSON for us.
    const reply = await streamReply({ model: MODEL, max_tokens: MAX_TOKENS, system: SYSTEM, tools: TOOLS, messages });
    // The input grows every round: the whole conversation is sent each time.
    const { input_tokens, output_tokens } = reply.usage;
    console.error(paint(DIM, `[round ${round} · tokens in ${input_tokens} · out ${output_tokens}]`));

    // Keep the reply for the next round, minus what the API would refuse to take back: text that is
    // only whitespace (models send "\n\n" now and then); tool calls from a reply that did not stop to
    // have them run (cut off at max_tokens, a refusal…), which would never get their results; and
    // block types this loop does not know.
    const content = reply.content.filter((block) => {
      if (block.type === 'text') return block.text.trim() !== '';
      return block.type === 'tool_use' && reply.stop_reason === 'tool_use';
    });
    if (content.length > 0) messages.push({ role: 'assistant', content });
    const calls = content.filter((block) => block.type === 'tool_use');
    if (calls.length === 0) {
      const note = STOP_NOTES[reply.stop_reason ?? ''];
      if (note) console.error(note);
      return;
    }

    // Run every tool call, in order, and answer them all in ONE user message.
    // → { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_…', content: '…' }, …] }
    const results: ToolResultBlockParam[] = [];
    for (const call of calls) {
      const { command } = call.input as { command?: unknown };
      if (typeof command !== 'string') {
        const error = 'Error: bash needs a "command" string';
        results.push({ type: 'tool_result', tool_use_id: call.id, content: error, is_error: true });
        continue;
      }
      console.error(paint(YELLOW, `$ ${command}`));
      results.push({ type: 'tool_result', tool_use_id: call.id, content: await runBash(command) });
    }
    messages.push({ role: 'user', content: results });
  }
  console.error(`(stopped after ${MAX_ROUNDS} rounds without a final answer)`);
}

// ── The CLI ─────────────────────────────────────────────────────────────────────────────────────
/** One readable line for a failed API call; no stack trace for failures we expect. */
export function describeError(err: unknown): string {
  if (err instanceof Anthropic.APIConnectionError) {
    // fetch reports "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND…) is the cause of that.
    const reason = (err.cause as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const why = reason?.code ?? reason?.message ?? err.message;
    return `API error: could not reach ${client.baseURL} (${why}). Check ANTHROPIC_BASE_URL and your network.`;
  }
  if (err instanceof Anthropic.APIError) {
    const apiMessage = (err.error as { error?: { message?: string } } | undefined)?.error?.message ?? err.message;
    const wait = err.headers ? retryAfter(err.headers) : 0;
    let hint = '';
    if (err.status === 401) hint = ' (check ANTHROPIC_API_KEY in your .env)';
    if (wait > MAX_RETRY_WAIT) hint = ` (the API asks to wait ${wait} s before trying again; try later)`;
    return `API error${err.status ? ` ${err.status}` : ''}: ${apiMessage}${hint}`;
  }
  return `Error: ${err instanceof Error ? err.message : String(err)}`;
}

const USAGE = `Usage: npx tsx s01_agent_loop/code.ts [options]
  (no options)         a REPL: type a prompt and press Enter; exit, quit or Ctrl+D leaves
  -p, --prompt <text>  run one prompt to completion, print the answer, and exit
  -h, --help           show this help
Exit codes: 0 done, 1 the API failed, 2 wrong usage.`;

/** Run one turn. Ctrl+C or SIGTERM meanwhile exits through process.exit, so no command outlives us. */
async function turn(messages: MessageParam[]): Promise<void> {
  // Only during a turn: at the prompt readline-sync blocks the event loop, and a listener would keep
  // Ctrl+C from ending the program. Nothing is running there anyway.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const quit = (signal: NodeJS.Signals) => process.exit(128 + os.constants.signals[signal]); // as if killed by it
  for (const signal of signals) process.on(signal, quit);
  try {
    await agentLoop(messages);
  } finally {
    for (const signal of signals) process.off(signal, quit);
  }
}

async function main(): Promise<void> {
  let options;
  try {
    const flags = {
      prompt: { type: 'string', short: 'p' },
      help: { type: 'boolean', short: 'h' },
    } as const;
    options = parseArgs({ options: flags }).values;
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`); // an unknown flag, or -p without its text
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  if (options.prompt !== undefined && !options.prompt.trim()) {
    console.error(`-p needs a prompt.\n${USAGE}`);
    process.exit(2);
  }
  if (options.prompt === undefined && !process.stdin.isTTY) {
    console.error('The REPL needs a terminal. Without one, use: code.ts -p "<prompt>"');
    process.exit(2);
  }
  // A reader of `-p … | head -1` has stopped listening: end quietly, and run nothing more.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
  });
  if (offline) console.error(offline.banner(TOOLS));

  if (options.prompt !== undefined) {
    // One-shot mode: run one prompt to completion; exit 1 if the API call failed.
    try {
      await turn([{ role: 'user', content: options.prompt }]);
    } catch (err) {
      console.error(describeError(err));
      process.exit(1);
    }
    return;
  }
  const history: MessageParam[] = []; // one conversation across prompts
  for (;;) {
    const query = readlineSync.question(paint(CYAN, 's01 >> ')).trim();
    if (readlineSync.getRawInput() === '\0') break; // Ctrl+D on an empty line: end of input
    if (['exit', 'quit', 'q', '/exit', '/quit'].includes(query.toLowerCase())) break;
    if (!query) continue;
    history.push({ role: 'user', content: query });
    try {
      await turn(history);
    } catch (err) {
      console.error(describeError(err)); // the REPL stays usable; the prompt stays in history
    }
  }
}

// Run the CLI only when this file is the program, so tests can import its pieces. (Node names a module
// by its real path, and the checkout may be reached through a symlink: compare real paths.)
const program = process.argv[1] ? realpathSync(process.argv[1]) : '';
if (import.meta.url === pathToFileURL(program).href) await main();
