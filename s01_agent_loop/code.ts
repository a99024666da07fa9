/**
 * s01 · The agent loop — the whole idea of a coding agent in one file.
 *
 * Send the conversation and the tools, stream the reply, run the tool calls it asks for, send the
 * results back, and repeat until the model answers without calling a tool.
 *
 *   npx tsx s01_agent_loop/code.ts              a REPL (type `exit` or `q` to leave)
 *   npx tsx s01_agent_loop/code.ts -p "..."     one prompt, then exit
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
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
const SYSTEM = `You are a coding agent working in ${WORKDIR}. Use the bash tool to look around and to make changes. Be brief.`;

// No key? Talk to the offline demo model on 127.0.0.1 instead: same SDK, same requests.
const offline = API_KEY ? undefined : await startOfflineModel();
const client = new Anthropic({
  apiKey: API_KEY ?? offline!.apiKey,
  baseURL: offline?.url ?? BASE_URL,
  // SDK 1.x authenticates with a Bearer header; some Anthropic-compatible vendors read only x-api-key.
  defaultHeaders: BASE_URL && API_KEY ? { 'x-api-key': API_KEY } : undefined,
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

export function runBash(command: string): string {
  // No sandbox in s01: it runs whatever the model asks. Try it in a scratch folder (s02 adds a gate).
  const r = spawnSync('bash', ['-c', command], { cwd: WORKDIR, encoding: 'utf8', timeout: 120_000, maxBuffer: 50_000_000 });
  let output = (r.stdout ?? '') + (r.stderr ?? '');
  if (output.length > MAX_OUTPUT) {
    // Keep the head and the tail: errors and summaries tend to be at the ends.
    const cut = output.length - MAX_OUTPUT;
    output = `${output.slice(0, MAX_OUTPUT / 2)}\n… (${cut} characters cut) …\n${output.slice(-MAX_OUTPUT / 2)}`;
  }
  const status = r.error ? `killed: ${r.error.message}` : `exit code ${r.status ?? r.signal}`;
  return `${output.trim() || '(no output)'}\n[${status}]`;
}

// ── The loop ────────────────────────────────────────────────────────────────────────────────────
// What each stop_reason means for the turn when it is not 'tool_use' (end_turn needs no remark).
const STOP_NOTES: Record<string, string> = {
  max_tokens: `(reply cut off at max_tokens=${MAX_TOKENS}; any tool call in it was not run)`,
  refusal: '(the model declined to continue)',
  model_context_window_exceeded: '(the context window is full; s05 shows how to make room)',
  pause_turn: '(the model paused its turn; say "continue" to resume)',
};

export async function agentLoop(messages: MessageParam[]): Promise<void> {
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    // Stream so text appears as it is written; the SDK reassembles the tool-call JSON for us.
    const stream = client.messages.stream({ model: MODEL, max_tokens: MAX_TOKENS, system: SYSTEM, tools: TOOLS, messages });
    stream.on('text', (delta) => process.stdout.write(delta));
    const reply = await stream.finalMessage();
    if (reply.content.some((b) => b.type === 'text')) process.stdout.write('\n');
    // The input grows every round: the whole conversation is sent each time.
    console.log(`\x1b[2m[round ${round} · tokens in ${reply.usage.input_tokens} · out ${reply.usage.output_tokens}]\x1b[0m`);

    // Keep the reply for the next round, minus what the API would refuse to take back: text that is
    // only whitespace (models send "\n\n" now and then), and, from a reply cut off at max_tokens,
    // a possibly half-written tool call.
    const content = reply.content.filter((b) => (b.type === 'text' ? b.text.trim() : reply.stop_reason !== 'max_tokens'));
    if (content.length > 0) messages.push({ role: 'assistant', content });
    if (reply.stop_reason !== 'tool_use') {
      if (STOP_NOTES[reply.stop_reason ?? '']) console.log(STOP_NOTES[reply.stop_reason!]);
      return;
    }

    // Run every tool call, in order, and answer them all in ONE user message.
    // → { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_…', content: '…' }, …] }
    const results: ToolResultBlockParam[] = [];
    for (const block of reply.content) {
      if (block.type !== 'tool_use') continue;
      const { command } = block.input as { command?: unknown };
      if (typeof command !== 'string') {
        results.push({ type: 'tool_result', tool_use_id: block.id, content: 'Error: bash needs a "command" string', is_error: true });
        continue;
      }
      console.log(`\x1b[33m$ ${command}\x1b[0m`);
      results.push({ type: 'tool_result', tool_use_id: block.id, content: runBash(command) });
    }
    messages.push({ role: 'user', content: results });
  }
  console.log(`(stopped after ${MAX_ROUNDS} rounds without a final answer)`);
}

// ── The CLI ─────────────────────────────────────────────────────────────────────────────────────
/** One readable line for a failed API call; no stack trace for failures we expect. */
export function describeError(err: unknown): string {
  if (err instanceof Anthropic.APIError) {
    const apiMessage = (err.error as { error?: { message?: string } } | undefined)?.error?.message ?? err.message;
    const hint = err.status === 401 ? ' (check ANTHROPIC_API_KEY in your .env)' : '';
    return `API error${err.status ? ` ${err.status}` : ''}: ${apiMessage}${hint}`;
  }
  return `Error: ${err instanceof Error ? err.message : String(err)}`;
}

async function main(): Promise<void> {
  if (offline) console.log(offline.banner);
  const p = process.argv.indexOf('-p');
  if (p !== -1) {
    // One-shot mode: run one prompt to completion; exit 1 if the API call failed.
    const prompt = process.argv[p + 1];
    if (!prompt) return void (console.error('Usage: code.ts -p "<prompt>"'), process.exit(2));
    try {
      await agentLoop([{ role: 'user', content: prompt }]);
    } catch (err) {
      console.error(describeError(err));
      process.exit(1);
    }
    return;
  }
  if (!process.stdin.isTTY) return void (console.error('The REPL needs a terminal. Without one, use: code.ts -p "<prompt>"'), process.exit(2));
  const history: MessageParam[] = []; // one conversation across prompts
  for (;;) {
    const query = readlineSync.question('\x1b[36ms01 >> \x1b[0m').trim();
    if (query === 'exit' || query === 'q') break;
    if (!query) continue;
    history.push({ role: 'user', content: query });
    try {
      await agentLoop(history);
    } catch (err) {
      console.error(describeError(err)); // the REPL stays usable; the prompt stays in history
    }
  }
}

// Run the CLI only when this file is the program, so tests can import its pieces.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
