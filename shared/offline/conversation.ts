/**
 * Reading a request, as the offline demo model does (shared/offline-model.ts): the tools it
 * offers, the system prompt, and the conversation as a list of entries — your prompts, the
 * model's notes, its tool calls each with its result. The model keeps no state of its own: every
 * reply is decided from this.
 */

type Block = { type: string; [k: string]: any };
export type Message = { role: string; content: unknown };

export const blocks = (content: unknown): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Block[]);

/** The text of a message or tool result, without s06's <context> block (date, git status). */
export const textOf = (content: unknown): string =>
  blocks(content ?? [])
    .filter((b) => b.type === 'text' && !String(b.text).startsWith('<context>'))
    .map((b) => b.text as string)
    .join('\n');

export interface Result {
  text: string;
  isError: boolean;
  /** False for a placeholder (s05) or an interrupted call (s04): it tells nothing. */
  usable: boolean;
}
export interface Call {
  id: string;
  name: string;
  input: Record<string, any>;
  result?: Result;
}
export type Entry =
  | { kind: 'prompt'; text: string }
  /** Text the model wrote; `final` when its reply called no tool (an answer). */
  | { kind: 'note'; text: string; final: boolean }
  | { kind: 'call'; call: Call }
  | { kind: 'interrupted' };

export interface Request {
  tools: Set<string>;
  system: string;
  /** The folder the agent works in, as its system prompt says, if it does. */
  workdir?: string;
  entries: Entry[];
  /** The last message: its new text, if any (a prompt), and whether it holds tool results. */
  lastText: string;
  lastHasResults: boolean;
}

// s05 puts a summary in place of the older conversation; it opens with this.
export const SUMMARY_HEAD = '[Earlier conversation, compacted.';
const REQUEST = 'The request being worked on, word for word:\n';
// s04 adds this after a turn you stopped with Ctrl+C.
export const INTERRUPTED_NOTE = '[interrupted by the user]';

export function readRequest(body: any): Request {
  const system = Array.isArray(body.system) ? textOf(body.system) : String(body.system ?? '');
  const tools = new Set<string>((body.tools ?? []).map((t: { name: string }) => t.name));
  const messages: Message[] = body.messages;
  const last = messages.at(-1)!;
  return {
    tools,
    system,
    workdir: system.match(/(?:working in|Working directory:) (\/\S*?)[.,]?(?:\s|$)/)?.[1],
    entries: readMessages(messages),
    lastText: last.role === 'user' ? textOf(last.content).trim() : '',
    lastHasResults: blocks(last.content).some((b) => b.type === 'tool_result'),
  };
}

/** The conversation, in order, as entries. A user message's results come before its text. */
export function readMessages(messages: Message[]): Entry[] {
  const entries: Entry[] = [];
  const calls = new Map<string, Call>();
  for (const message of messages) {
    const content = blocks(message.content);
    if (message.role === 'assistant') {
      const text = textOf(content).trim();
      const uses = content.filter((b) => b.type === 'tool_use');
      if (text) entries.push({ kind: 'note', text, final: uses.length === 0 });
      for (const use of uses) {
        const call: Call = { id: use.id, name: use.name, input: use.input ?? {} };
        calls.set(use.id, call);
        entries.push({ kind: 'call', call });
      }
      continue;
    }
    for (const b of content.filter((b) => b.type === 'tool_result')) {
      const call = calls.get(b.tool_use_id);
      const text = typeof b.content === 'string' ? b.content : textOf(b.content ?? []);
      if (call) call.result = readResult(text, Boolean(b.is_error));
    }
    entries.push(...readUserText(textOf(content).trim()));
  }
  return entries;
}

export function readResult(text: string, isError: boolean): Result {
  const placeholder = text.startsWith('[cleared to save context:');
  // Ctrl+C during a sub-agent: "the sub-agent was interrupted …" (before issue 33: "the sub-agent
  // failed: … Request was aborted.", still in sessions saved then).
  const interrupted = isError && /\binterrupted\b|\bRequest was aborted\b/.test(text);
  return { text, isError, usable: !placeholder && !interrupted };
}

/** What a text of yours is: a prompt, the note of an interruption, or a summary (s05). */
export function readUserText(text: string): Entry[] {
  if (!text) return [];
  if (text === INTERRUPTED_NOTE) return [{ kind: 'interrupted' }];
  if (!text.startsWith(SUMMARY_HEAD)) return [{ kind: 'prompt', text }];
  // A summary: the task it says is not finished, what it knew, then the request being worked on.
  const at = text.lastIndexOf(REQUEST);
  const summary = at === -1 ? text : text.slice(0, at);
  const request = at === -1 ? undefined : text.slice(at + REQUEST.length).trim();
  const open = summary.match(/^- Not finished: (.+)$/m)?.[1].trim();
  const entries: Entry[] = [];
  if (open) entries.push({ kind: 'prompt', text: open });
  entries.push({ kind: 'note', text: summary, final: false });
  if (request && request !== open) entries.push({ kind: 'prompt', text: request });
  return entries;
}

/** A path as the workspace knows it: `./src/a.js` or `<workdir>/src/a.js` → `src/a.js`. */
export function relativePath(path: string, workdir?: string): string {
  let p = path.replace(/^file:\/\//, '');
  if (workdir && p.startsWith(`${workdir}/`)) p = p.slice(workdir.length + 1);
  return p.replace(/^(\.\/)+/, '');
}
