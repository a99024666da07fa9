/**
 * The sub-agent (new in s03): an `agent` tool that hands a task to a fresh loop, with a context of
 * its own, and gives the parent back only the final report. Everything the child reads and runs
 * stays out of the parent's context.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources';
import { describeError } from '../shared/client.ts';
import { MAGENTA, paint } from '../shared/terminal.ts';
import { head } from '../shared/text.ts';
import { traceAs } from '../shared/trace.ts';
import type { SessionLog } from './session.ts';
import type { Toolbox } from './tools.ts';
import { WORKDIR } from './workspace.ts';

// Who runs a loop. The main agent talks to you. A sub-agent works alone on one task, with fewer
// rounds and no `agent` tool (no sub-agents of sub-agents); its text is not printed, and its tool
// calls are printed indented, so you can tell them apart.
export interface Agent extends Toolbox {
  system: string | TextBlockParam[]; // the system prompt, as the API takes it
  maxRounds: number;
  print: boolean; // whether its text streams to stdout as it arrives
  usage: { input: number; output: number }; // tokens this agent has used, across its rounds
  log?: SessionLog; // s04: where its messages are appended
}

export const AGENT_TOOL: Tool = {
  name: 'agent',
  description:
    'Hand a task to a sub-agent that works in a fresh context with the same tools and returns ' +
    'only its final report. It sees nothing of this conversation, so the task must be ' +
    'self-contained: say what to do, where, and what to report. Use it for work that would fill ' +
    'your context, such as searching a large codebase or reading many files.',
  input_schema: {
    type: 'object',
    properties: {
      task: { type: 'string', description: 'The complete, self-contained task' },
    },
    required: ['task'],
  },
};

const SUBAGENT_SYSTEM =
  `You are a sub-agent working in ${WORKDIR} on one task given to you by another agent. You ` +
  'work alone: nobody can answer questions, so decide for yourself. Use the tools, then finish ' +
  'with a concise report of what you found or changed; that report is all the other agent ' +
  'will see.';
const SUBAGENT_ROUNDS = 20;
const MAX_REPORT = 5_000; // characters of the child's answer that reach the parent

// The agent tool's input, as a type.
interface SubagentInput {
  task: string;
}

/** How to run a loop: code.ts passes its agentLoop, so this file does not depend on code.ts. */
type RunLoop = (messages: MessageParam[], agent: Agent, signal?: AbortSignal) => Promise<string>;

// s03: (input, parent, runLoop) → s04: and the turn's signal: Ctrl+C stops the child too.
export async function runSubagent(
  input: SubagentInput,
  parent: Agent,
  runLoop: RunLoop,
  signal?: AbortSignal,
) {
  // An empty task would only come back from the API as a 400: refuse it before any request.
  if (!input.task.trim()) {
    const what = 'say what the sub-agent should do, where, and what to report';
    throw new Error(`the task is empty: ${what}`);
  }
  console.error(paint(MAGENTA, `┌ sub-agent: ${input.task.replace(/\s+/g, ' ').slice(0, 100)}`));
  const child: Agent = {
    system: SUBAGENT_SYSTEM,
    tools: parent.tools.filter((t) => t.name !== 'agent'),
    handlers: parent.handlers,
    maxRounds: SUBAGENT_ROUNDS,
    indent: `${paint(MAGENTA, '│')} `,
    print: false,
    usage: { input: 0, output: 0 },
    log: parent.log?.subagent(input.task), // s04: its own file, beside the session's
  };
  // A fresh context: the task is the only message. Nothing of the parent's conversation comes.
  const messages: MessageParam[] = [{ role: 'user', content: input.task }];
  child.log?.append(messages[0]);
  let stop: string;
  try {
    // --trace marks its requests as the sub-agent's (shared/trace.ts).
    stop = await traceAs('sub-agent', () => runLoop(messages, child, signal));
  } catch (err) {
    // s04: Ctrl+C stopped it (its request aborted, say): nothing failed, and the parent says so.
    if (signal?.aborted) throw new Error('the sub-agent was interrupted before it finished');
    // A failure inside the child becomes one readable line for the parent (an is_error result).
    const why = err instanceof Anthropic.APIError ? describeError(err) : (err as Error).message;
    throw new Error(`the sub-agent failed: ${why}`);
  } finally {
    const { input, output } = child.usage;
    const used = input + output ? `used ${input} input + ${output} output tokens` : 'got no reply';
    console.error(paint(MAGENTA, `└ sub-agent ${used}`));
  }

  // Only its final reply goes back; everything it read and ran stays here and is dropped. (If that
  // reply was not kept, e.g. cut off at max_tokens, there is no report: not some earlier "Let me
  // look".)
  const last = messages.at(-1)!;
  const blocks = last.role === 'assistant' && Array.isArray(last.content) ? last.content : [];
  const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text);
  let report = texts.join('\n').trim() || '(the sub-agent gave no report)';
  if (report.length > MAX_REPORT) {
    report = `${head(report, MAX_REPORT)}\n… (report cut: it was ${report.length} characters)`;
  }
  // Anything but a plain end is an error the parent should see as one, with what the child said.
  if (stop === 'max_rounds') {
    const why = `the sub-agent was stopped after ${SUBAGENT_ROUNDS} rounds without finishing`;
    throw new Error(`${why}. Its last words:\n${report}`);
  }
  if (stop !== 'end_turn' && stop !== 'stop_sequence') {
    const why = `the sub-agent did not finish normally (stop_reason: ${stop})`;
    throw new Error(`${why}. Its last words:\n${report}`);
  }
  return report;
}
