/**
 * s02 · Tools — s01's loop, with tools as data: one schema and one handler per tool, looked up by
 * name. Adds read_file, write_file, edit_file, glob and grep, keeps every file tool inside the
 * workspace, puts a gate in front of bash, and runs read-only calls side by side.
 *
 * Files, in reading order. New in s02: tools.ts, bash.ts, workspace.ts, files.ts, search.ts.
 * Changed to wire it in: code.ts. The others are s01's, unchanged. The lesson:
 * npm run diff s01 s02
 *   code.ts          the loop and the REPL
 *   thinking.ts      the model's thinking: asked for, shown, kept for the turn it belongs to
 *   tools.ts         tools as data: the schemas, the dispatch map, running a reply's calls
 *   bash.ts          the bash tool, and the gate in front of it
 *   workspace.ts     the workspace boundary: no path outside it, no half-written file
 *   files.ts         read_file, write_file and edit_file
 *   search.ts        glob and grep, with a bound on every walk and every match
 *   ../shared/       the runtime no chapter teaches: client, terminal, CLI, processes, stream
 */
import type { Message, MessageCreateParams, MessageParam } from '@anthropic-ai/sdk/resources';
import { isEntryPoint, parseFlags, readPrompts, requireTerminal } from '../shared/cli.ts';
import { client, describeError, offline } from '../shared/client.ts';
import { exitingOnSignals } from '../shared/processes.ts';
import { finalMessage } from '../shared/stream.ts';
import { DIM, paint } from '../shared/terminal.ts';
import { forgetThinking, showThinking, thinkingKept, withThinking } from './thinking.ts';
import { runToolCalls, TOOLS, validCalls } from './tools.ts';
import { WORKDIR } from './workspace.ts';

// ── Config ──────────────────────────────────────────────────────────────────────────────────
export const MODEL = process.env.MODEL_ID || 'claude-sonnet-5-5';
const MAX_TOKENS = 8000; // the longest reply we accept in one call
const MAX_ROUNDS = 30; // model calls per prompt, so a confused model cannot loop forever
// s01: bash only → s02: the file tools first
const SYSTEM =
  `You are a coding agent working in ${WORKDIR}. Use the tools to look around and to make ` +
  'changes; prefer read_file, edit_file, glob and grep over bash for files. Be brief.';

// ── The loop ────────────────────────────────────────────────────────────────────────────────
// What each stop_reason means for the turn when it is not 'tool_use' (end_turn needs no remark).
const STOP_NOTES: Record<string, string> = {
  max_tokens: `(reply cut off at max_tokens=${MAX_TOKENS}; any tool call in it was not run)`,
  refusal: '(the model declined to continue)',
  model_context_window_exceeded: '(the context window is full; s05 shows how to make room)',
  pause_turn: '(the model paused its turn; say "continue" to resume)',
};
// A reply cut short or refused: a tool call in it may be cut inside its input; none is run. Other
// replies' calls run whatever stop_reason says (some compatible endpoints say end_turn after them).
const STOPPED_EARLY = new Set(['max_tokens', 'model_context_window_exceeded', 'refusal']);

/** Stream one reply, printing its text as it arrives; the SDK reassembles tool-call JSON for us. */
async function streamReply(params: MessageCreateParams): Promise<Message> {
  const stream = client.messages.stream(params);
  let printed = false;
  showThinking(stream); // the model's thinking, as it streams (thinking.ts)
  stream.on('thinking', () => (printed = false)); // showThinking ended the answer's line
  stream.on('text', (delta) => {
    printed = true;
    process.stdout.write(delta);
  });
  // However the stream ends, what comes next (an error, say) starts on a line of its own.
  stream.on('end', () => {
    if (printed) process.stdout.write('\n');
  });
  return finalMessage(stream); // gives up if the stream stalls (shared/stream.ts)
}

export async function agentLoop(messages: MessageParam[]): Promise<string> {
  forgetThinking(messages); // the turns before this one: their thinking goes (thinking.ts)
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const params = { model: MODEL, max_tokens: MAX_TOKENS, system: SYSTEM, tools: TOOLS, messages };
    const reply = await streamReply(withThinking(params));
    // The input grows every round: the whole conversation is sent each time.
    const { input_tokens: input, output_tokens: output } = reply.usage;
    console.error(paint(DIM, `[round ${round} · tokens in ${input} · out ${output}]`));

    // Keep the reply for the next round, minus what the API would refuse to take back: text that
    // is only whitespace (models send "\n\n" now and then), tool calls from a reply that stopped
    // early (cut off at max_tokens…), and block types this loop does not know.
    // s01: tool calls kept as sent → s02: odd ones from other vendors' models mended (tools.ts).
    const kept = reply.content.filter((block) => {
      if (block.type === 'text') return block.text.trim() !== '';
      return block.type === 'tool_use' && !STOPPED_EARLY.has(reply.stop_reason ?? '');
    });
    // And its thinking, for the rest of the turn, if nothing else was left out (thinking.ts).
    const content = thinkingKept(reply.content, validCalls(kept, messages));
    if (content.length > 0) messages.push({ role: 'assistant', content });
    const calls = content.filter((block) => block.type === 'tool_use');
    if (calls.length === 0) {
      const note = STOP_NOTES[reply.stop_reason ?? ''];
      if (note) console.error(note);
      return reply.stop_reason ?? 'end_turn';
    }

    // Run every tool call, in order, and answer them all in ONE user message.
    // → { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_…', content: '…' }] }
    // s01: called runBash directly → s02: looks each call up in the dispatch map (tools.ts).
    const results = await runToolCalls(calls);
    messages.push({ role: 'user', content: results });
  }
  console.error(`(stopped after ${MAX_ROUNDS} rounds without a final answer)`);
  return 'max_rounds';
}

// ── The CLI ─────────────────────────────────────────────────────────────────────────────────
const USAGE = `Usage: npx tsx s02_tools/code.ts [options]
  (no options)         a REPL: type a prompt and press Enter
  -p, --prompt <text>  run one prompt to completion, print the answer, and exit
  -h, --help           show this help
Exit codes: 0 done, 1 the API failed or no final answer came, 2 wrong usage.`;

// One turn. Ctrl+C or SIGTERM meanwhile exits, and no command outlives us.
async function turn(messages: MessageParam[]): Promise<string> {
  return exitingOnSignals(['SIGINT', 'SIGTERM', 'SIGHUP'], () => agentLoop(messages));
}

async function main(): Promise<void> {
  const flags = {
    prompt: { type: 'string', short: 'p' },
  } as const;
  const options = parseFlags(flags, USAGE);
  if (!options) return; // -h printed the usage
  if (options.prompt === undefined) requireTerminal();
  if (offline) console.error(offline.banner(TOOLS));

  // -p: that one prompt, then exit. Else the REPL: each prompt you type, until exit or Ctrl+D.
  const prompts = options.prompt === undefined ? readPrompts('s02 >> ') : [options.prompt];
  const history: MessageParam[] = []; // one conversation across prompts
  for await (const query of prompts) {
    history.push({ role: 'user', content: query });
    try {
      // -p: exit 1 if the turn ended without an answer too; the REPL goes on.
      if ((await turn(history)) === 'max_rounds' && options.prompt !== undefined) process.exit(1);
    } catch (err) {
      // The REPL goes on. A prompt refused as too long goes: kept, it would fail every request.
      const tooLong = history.at(-1)?.content === query && /prompt is too long/.test(String(err));
      if (tooLong) history.pop();
      console.error(describeError(err) + (tooLong ? ' (so that prompt was not kept)' : ''));
      if (options.prompt !== undefined) process.exit(1); // -p: exit 1 if the API call failed
    }
  }
}

// Run the CLI only when this file is the program, so tests can import its pieces.
if (isEntryPoint(import.meta.url)) await main();
