/**
 * s06 · Prompt assembly — s05, plus a system prompt built for every request from sections:
 * identity, tools, working rules, environment and the project's AGENTS.md / CLAUDE.md files; and
 * prompt caching, with what changes each turn (date, git status) kept out of the cached prefix.
 *
 * Files, in reading order. New in s06: prompt.ts, instructions.ts, cache.ts. Changed to wire it
 * in: code.ts, subagent.ts. The others are s05's, unchanged. The lesson: npm run diff s05 s06
 *   code.ts          the loop and the REPL
 *   thinking.ts      the model's thinking: asked for, shown, kept for the turn it belongs to
 *   prompt.ts        the system prompt's sections, the turn's context, --show-prompt
 *   instructions.ts  AGENTS.md and CLAUDE.md files, within a budget
 *   cache.ts         the second cache breakpoint, and what a request cost
 *   compact.ts       the three tiers: placeholders, a summary with a transcript, the compact tool
 *   session.ts       the session log: append, load, lock, list, resume
 *   repair.ts        repair before sending: what a crash left, made valid for the API
 *   subagent.ts      who runs a loop, and the agent tool: a fresh loop for one task
 *   tools.ts         tools as data: the schemas, the dispatch map, running a reply's calls
 *   bash.ts          the bash tool, and the gate in front of it
 *   workspace.ts     the workspace boundary: no path outside it, no half-written file
 *   files.ts         read_file, write_file and edit_file
 *   search.ts        glob and grep, with a bound on every walk and every match
 *   ../shared/       the runtime no chapter teaches: client, terminal, CLI, processes, stream
 */
import type { Message, MessageCreateParams, MessageParam } from '@anthropic-ai/sdk/resources';
import type { TextBlockParam } from '@anthropic-ai/sdk/resources';
import { isEntryPoint, parseFlags, readPrompts, requireTerminal } from '../shared/cli.ts';
import { runAgain, usageError } from '../shared/cli.ts';
import { client, describeError, offline } from '../shared/client.ts';
import { exitingOnSignals, killCommands } from '../shared/processes.ts';
import { finalMessage } from '../shared/stream.ts';
import { DIM, paint, YELLOW } from '../shared/terminal.ts';
import { cost, soFar, withBreakpoint } from './cache.ts';
import { checkPromptFits, compact, compactCommand, compactIfFull } from './compact.ts';
import { COMPACT_TOOL, isTooLong, lookUpWindow, measure, microCompact } from './compact.ts';
import { requestCompaction, startCompaction } from './compact.ts';
import { showPrompt, systemPrompt, turnContext } from './prompt.ts';
import { repairForSending } from './repair.ts';
import { openSession, printSessions, SessionLog } from './session.ts';
import { AGENT_TOOL, runSubagent, type Agent } from './subagent.ts';
import { forgetThinking, showThinking, thinkingKept, withThinking } from './thinking.ts';
import { HANDLERS, runToolCalls, TOOLS, validCalls } from './tools.ts';
import { WORKDIR } from './workspace.ts';

// ── Config ──────────────────────────────────────────────────────────────────────────────────
export const MODEL = process.env.MODEL_ID || 'claude-sonnet-5-5';
const MAX_TOKENS = 8000; // the longest reply we accept in one call
const MAX_ROUNDS = 30; // model calls per prompt, so a confused model cannot loop forever
// s05: one fixed SYSTEM sentence → s06: the prompt is assembled for every request (prompt.ts).

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
// s02: always printed → s03: a sub-agent works quietly (print = false).
async function streamReply(params: MessageCreateParams, print = true, signal?: AbortSignal) {
  const stream = client.messages.stream(params, { signal }); // s04: Ctrl+C aborts it
  let printed = false;
  if (print) showThinking(stream); // the model's thinking, as it streams (thinking.ts)
  stream.on('thinking', () => (printed = false)); // showThinking ended the answer's line
  stream.on('text', (delta) => {
    if (!print) return;
    printed = true;
    process.stdout.write(delta);
  });
  // However the stream ends, what comes next (an error, say) starts on a line of its own.
  stream.on('end', () => {
    if (printed) process.stdout.write('\n');
  });
  return finalMessage(stream); // gives up if the stream stalls (shared/stream.ts)
}

// s02: one agent → s03: the agent running this loop, the main one or a sub-agent (subagent.ts).
// s03: → s04: and the turn's signal, which Ctrl+C aborts.
export async function agentLoop(messages: MessageParam[], agent: Agent, signal?: AbortSignal) {
  forgetThinking(messages); // the turns before this one: their thinking goes (thinking.ts)
  // s03: messages.push → s04: each message is appended to the log too, the moment it is complete.
  const keep = (message: MessageParam) => {
    messages.push(message);
    agent.log?.append(message);
  };
  // s05: read each round → s06: once a turn. The system prompt is built anew (prompt.ts), and a
  // thinking block is bound to the one it was made under: within a turn, it must not change.
  const { system, tools } = agent;
  for (let round = 1; round <= agent.maxRounds; round++) {
    // NEW in s05: past the threshold, compact first (compact.ts).
    if (agent.compaction) await compactIfFull(messages, agent, signal);
    // s03: messages → s04: the conversation with what a crash left repaired (repair.ts).
    // s04: params → s05: made for each try, with old tool results sent as placeholders.
    // s05: → s06: and a cache breakpoint on the last message (cache.ts).
    const params = () => {
      const sent = withBreakpoint(microCompact(repairForSending(messages)));
      return withThinking({ model: MODEL, max_tokens: MAX_TOKENS, system, tools, messages: sent });
    };
    let reply: Message;
    try {
      reply = await streamReply(params(), agent.print, signal);
    } catch (err) {
      // NEW in s05: "prompt is too long" → compact all it can (the API counts, not the estimate).
      if (!agent.compaction || !isTooLong(err)) throw err;
      const why = 'the API said the prompt is too long';
      if (!(await compact(messages, agent, { why, whole: true, signal }))) throw err;
      reply = await streamReply(params(), agent.print, signal);
    }
    agent.usage.output += reply.usage.output_tokens;
    // The input grows every round: the whole conversation is sent each time.
    const { input_tokens: input, output_tokens: output } = reply.usage;
    // s05: tokens in and out → s06: also what the cache served and took, and the cost so far.
    const { cache_read_input_tokens: read, cache_creation_input_tokens: written } = reply.usage;
    // s05: input_tokens → s06: all the model was given (input_tokens is what followed the last
    // breakpoint; what the cache served and took comes on top).
    agent.usage.input += input + (read ?? 0) + (written ?? 0);
    const price = cost(MODEL, reply.usage);
    if (agent.spent) agent.spent.dollars += price ?? 0;
    const cache = ` · cache read ${read ?? 0} · written ${written ?? 0}`;
    const dollars = price === undefined ? '' : ` · ${soFar(agent.spent?.dollars ?? 0, !!offline)}`;
    const line = `[round ${round} · tokens in ${input}${cache} · out ${output}${dollars}]`;
    console.error(agent.indent + paint(DIM, line));

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
    if (content.length > 0) keep({ role: 'assistant', content }); // logged before its tools run
    // NEW in s05: the context, as measured: what the model was given and what it wrote.
    if (agent.compaction) measure(agent.compaction, reply.usage, messages.length);
    const calls = content.filter((block) => block.type === 'tool_use');
    if (calls.length === 0) {
      const note = STOP_NOTES[reply.stop_reason ?? ''];
      if (note) console.error(agent.indent + note);
      return reply.stop_reason ?? 'end_turn';
    }

    // Run every tool call, in order, and answer them all in ONE user message.
    // → { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_…', content: '…' }] }
    // s01: called runBash directly → s02: looks each call up in the dispatch map (tools.ts).
    const results = await runToolCalls(calls, agent, signal);
    keep({ role: 'user', content: results });
    // s04: Ctrl+C was pressed while the tools ran: every call has its result; the turn ends here.
    signal?.throwIfAborted();
    // NEW in s05: the model called `compact`: now that every call of its reply is answered.
    if (agent.compaction?.requested) {
      const asked = agent.compaction.requested;
      agent.compaction.requested = undefined;
      await compact(messages, agent, { ...asked, signal });
    }
  }
  console.error(`${agent.indent}(stopped after ${agent.maxRounds} rounds without a final answer)`);
  return 'max_rounds';
}

// NEW in s03: the main agent has every tool; its `agent` tool runs a sub-agent through this loop.
// s03: () → s04: (log), the session its messages are appended to.
function mainAgent(log?: SessionLog): Agent {
  const warned = new Set<string>(); // s06: unusable instruction files, named once (prompt.ts)
  const agent: Agent = {
    // s05: SYSTEM → s06: built anew for every turn (prompt.ts): a getter builds it on each read.
    get system() {
      return systemPrompt({ tools: agent.tools, model: MODEL, warned });
    },
    tools: [...TOOLS, AGENT_TOOL, COMPACT_TOOL], // s05: and compact
    handlers: {
      ...HANDLERS,
      agent: (input, signal) => runSubagent(input, agent, agentLoop, signal),
      compact: (input) => requestCompaction(agent.compaction!, input), // s05
    },
    maxRounds: MAX_ROUNDS,
    indent: '',
    print: true,
    usage: { input: 0, output: 0 },
    log,
    compaction: startCompaction(MODEL, MAX_TOKENS), // s05
    spent: { dollars: 0 }, // s06
  };
  return agent;
}

// ── The CLI ─────────────────────────────────────────────────────────────────────────────────
const USAGE = `Usage: npx tsx s06_prompt/code.ts [options]
  (no options)         a REPL in a new session: type a prompt and press Enter
  -p, --prompt <text>  run one prompt to completion, print the answer, and exit
  -c, --continue       continue this folder's most recent session
  -r, --resume <id>    continue the session with this id (the first few characters are enough)
  --sessions           list this folder's sessions, newest first
  --show-prompt        print the assembled system prompt, section by section, and exit
  -h, --help           show this help
REPL commands: /sessions, /compact [focus], /prompt. Ctrl+C stops a turn; at the prompt, it leaves.
CONTEXT_WINDOW in the environment: the model's context window, in tokens (default: the API's).
Exit codes: 0 done, 1 the API failed or no final answer came, 2 wrong usage or a session that
cannot be opened, 130 interrupted.`;

// One turn: the prompt, then the loop. SIGTERM meanwhile exits, and no command outlives us.
// s03: so did Ctrl+C → s04: Ctrl+C cancels the turn ('interrupted'); the conversation goes on.
async function turn(messages: MessageParam[], prompt: string, agent: Agent): Promise<string> {
  const interrupt = new AbortController();
  // With -p under tsx, one Ctrl+C can come twice (shared/cli.ts): aborting twice is harmless.
  const cancel = () => {
    interrupt.abort(); // the stream stops…
    killCommands(); // …and so do the running commands, with everything they started
  };
  process.on('SIGINT', cancel);
  // s05: the prompt alone → s06: the prompt, then what changes turn to turn (prompt.ts).
  const content: TextBlockParam[] = [prompt, turnContext()].map((text) => ({ type: 'text', text }));
  const message: MessageParam = { role: 'user', content };
  messages.push(message);
  agent.log?.append(message);
  try {
    const loop = () => agentLoop(messages, agent, interrupt.signal);
    return await exitingOnSignals(['SIGTERM', 'SIGHUP'], loop);
  } catch (err) {
    if (!interrupt.signal.aborted) throw err;
    // What was complete is kept (and every tool call has its result); the model is told.
    const note: MessageParam = { role: 'user', content: '[interrupted by the user]' };
    messages.push(note);
    agent.log?.append(note);
    console.error(paint(YELLOW, '(interrupted: the turn stopped here; the conversation goes on)'));
    return 'interrupted';
  } finally {
    process.off('SIGINT', cancel);
  }
}

async function main(): Promise<void> {
  const flags = {
    prompt: { type: 'string', short: 'p' },
    continue: { type: 'boolean', short: 'c' }, // s04
    resume: { type: 'string', short: 'r' }, // s04
    sessions: { type: 'boolean' }, // s04
    'show-prompt': { type: 'boolean' }, // s06
  } as const;
  const options = parseFlags(flags, USAGE);
  if (!options) return; // -h printed the usage
  if (options.sessions) {
    printSessions();
    return;
  }
  if (options['show-prompt']) {
    showPrompt({ tools: mainAgent().tools, model: MODEL, warned: new Set() }); // s06
    return;
  }
  if (options.prompt === undefined) requireTerminal();
  // NEW in s04: a new session, or the one asked for, with its conversation so far.
  const { log, messages: history } = openSession(options);
  const agent = mainAgent(log); // s03
  if (offline) console.error(offline.banner(agent.tools));
  // NEW in s05: the window, looked up now (5 s at most; Ctrl+C leaves), or a bad CONTEXT_WINDOW.
  const lookup = exitingOnSignals(['SIGINT'], () => lookUpWindow(agent.compaction!));
  const [id, n] = [log.id.slice(0, 8), history.length];
  const what = n > 0 ? `resumed with ${n} messages` : 'new: saved from your first prompt on';
  const resume = runAgain('s06_prompt/code.ts', `-r ${id}`); // or npm run demo's command
  console.error(paint(DIM, `session ${id} (${what}); to come back to it: ${resume}`));
  const badWindow = await lookup;
  if (badWindow) usageError(badWindow, USAGE);

  // -p: that one prompt, then exit. Else the REPL: each prompt you type, until exit or Ctrl+D.
  const prompts = options.prompt === undefined ? readPrompts('s06 >> ') : [options.prompt];
  for await (const query of prompts) {
    if (query === '/sessions') {
      printSessions(); // s04
      continue;
    }
    if (query === '/prompt') {
      showPrompt({ tools: agent.tools, model: MODEL, warned: new Set() }); // NEW in s06
      continue;
    }
    // NEW in s05: /compact, or /compact <what the summary must keep> (compact.ts).
    if (await compactCommand(query, history, agent)) continue;
    let stop = '';
    try {
      await checkPromptFits(query, agent); // NEW in s05: one too big for the window is not kept
      stop = await turn(history, query, agent);
    } catch (err) {
      // The REPL goes on. A prompt refused as too long goes: kept, it would fail every request.
      const first = history.at(-1)?.content[0] as TextBlockParam | undefined; // s06: a block
      const tooLong = first?.text === query && /prompt is too long/.test(String(err));
      if (tooLong) log.dropLast(history); // s01: history.pop() → s04: and a line in the log
      console.error(describeError(err) + (tooLong ? ' (so that prompt was not kept)' : ''));
      if (options.prompt !== undefined) process.exit(1); // -p: exit 1 if the API call failed
    }
    if (options.prompt !== undefined && stop === 'max_rounds') process.exit(1); // -p: no answer
    if (options.prompt !== undefined && stop === 'interrupted') process.exit(130); // s04: Ctrl+C
  }
}

// Run the CLI only when this file is the program, so tests can import its pieces.
if (isEntryPoint(import.meta.url)) await main();
