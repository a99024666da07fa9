/**
 * The offline demo model: what a chapter talks to when no API key is set.
 *
 * It is NOT an AI. It is the strict fake API (fake-anthropic.ts) answering with a few rules, so a
 * reader without an account can still watch every chapter's mechanism work: the same SDK calls,
 * the same streaming, the same validation a real request gets.
 *
 * It reads the tools each request offers and turns a small command language into tool calls,
 * using the richest tool it was given (read_file if offered, else `cat` through bash):
 *
 *   run <command>                  bash
 *   read <file>                    read_file      (else: cat -n)
 *   list | find <glob>             glob           (else: ls / find)
 *   search <regex>                 grep           (else: grep -rn)
 *   write <file>: <text>           write_file     (else: printf > file)
 *   edit <file>: <old> => <new>    edit_file
 *   delegate <task>                agent          (s03)
 *   compact                        compact        (s05)
 *   history | prompt               describe the conversation / the system prompt it received
 *   A then B                       several tool calls in one reply
 *
 * After tool results it answers with a short text that quotes them, and a request to summarise a
 * conversation gets a deterministic summary.
 */
import { startFakeAnthropic, type Reply, type ReplyBlock } from './fake-anthropic.ts';

// Each command, what it does, and the tools it needs (any one of them; none: it always works).
export const OFFLINE_COMMANDS: [command: string, what: string, needs: string[]][] = [
  ['run <command>', 'run a shell command', ['bash']],
  ['read <file>', 'show a file with line numbers', ['read_file', 'bash']],
  ['list | find <glob>', 'list files', ['glob', 'bash']],
  ['search <regex>', 'search file contents', ['grep', 'bash']],
  ['write <file>: <text>', 'create a file', ['write_file', 'bash']],
  ['edit <file>: <old> => <new>', 'replace text in a file', ['edit_file']],
  ['delegate <task>', 'hand a task to a sub-agent', ['agent']],
  ['compact', 'compact the conversation', ['compact']],
  ['history | prompt', 'what the model can see', []],
];

/** The commands that work with these tools: a chapter's banner lists only what it can do. */
const usable = (tools: Set<string>) => OFFLINE_COMMANDS.filter(([, , needs]) => needs.length === 0 || needs.some((t) => tools.has(t)));

/** The banner a chapter prints when it runs offline, listing the commands its tools support. */
export function offlineBanner(tools: { name: string }[]): string {
  const commands = usable(new Set(tools.map((t) => t.name)));
  return [
    '┌─ offline demo ─────────────────────────────────────────────────────────',
    '│ No ANTHROPIC_API_KEY is set, so this runs against a rule-based offline',
    '│ demo model on 127.0.0.1. It is not an AI: it understands only these:',
    ...commands.map(([cmd, what]) => `│   ${cmd.padEnd(30)} ${what}`),
    '│   join two with "then":  run ls then read package.json',
    '│ For a real model: cp .env.example .env and set ANTHROPIC_API_KEY.',
    '└────────────────────────────────────────────────────────────────────────',
  ].join('\n');
}

export interface OfflineModel {
  url: string;
  apiKey: string;
  /** The banner for a chapter with these tools. */
  banner(tools: { name: string }[]): string;
  close(): Promise<void>;
}

/** Start the offline model on 127.0.0.1. It does not keep the process alive on its own. */
export async function startOfflineModel(): Promise<OfflineModel> {
  const fake = await startFakeAnthropic({ respond: offlineRespond, unref: true });
  return { url: fake.url, apiKey: 'offline-demo', banner: offlineBanner, close: fake.close };
}

// ── The rules ───────────────────────────────────────────────────────────────────────────────────

type Block = { type: string; [k: string]: any };
const blocks = (content: unknown): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Block[]);
// s06 sends each prompt with a <context> block (date, git status) after it: that is not a command.
const textOf = (content: unknown) =>
  blocks(content)
    .filter((b) => b.type === 'text' && !String(b.text).startsWith('<context>'))
    .map((b) => b.text as string)
    .join('\n');

export function offlineRespond(body: any): Reply {
  const messages: { role: string; content: unknown }[] = body.messages;
  const tools = new Set<string>((body.tools ?? []).map((t: { name: string }) => t.name));
  const last = messages.at(-1)!;
  const results = blocks(last.content).filter((b) => b.type === 'tool_result');

  if (results.length > 0) return say(describeResults(results, messages));
  const prompt = textOf(last.content).trim();
  if (tools.size === 0 && /summari[sz]e/i.test(prompt)) return say(summarise(prompt));
  // s05 put a summary in place of the earlier conversation, and the turn goes on from it.
  if (/^\[Earlier conversation, compacted/.test(prompt)) {
    return say(`I have a summary of the earlier conversation now (${prompt.length} characters). What next?`);
  }
  if (/^history$/i.test(prompt)) return say(describeHistory(messages));
  if (/^prompt$/i.test(prompt)) return say(describePrompt(body.system));

  // "read a.txt then run ls" → two tool calls in one reply.
  const parts = prompt.split(/\s+then\s+(?=(?:run|read|list|find|search|write|edit|delegate|compact)\b)/i);
  const calls = parts.map((part) => toToolCall(part.trim(), tools));
  const failed = calls.find((c): c is string => typeof c === 'string');
  if (failed !== undefined) return say(failed);
  return { content: [{ type: 'text', text: `On it: ${parts.join(', then ')}.` }, ...(calls as ReplyBlock[])] };
}

const say = (text: string): Reply => ({ content: [{ type: 'text', text }] });
const call = (name: string, input: Record<string, unknown>): ReplyBlock => ({ type: 'tool_use', name, input });
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** One command → one tool call, or a sentence explaining why not. */
function toToolCall(command: string, tools: Set<string>): ReplyBlock | string {
  const [, verb = '', rest = ''] = command.match(/^(\w+)\s*([\s\S]*)$/) ?? [];
  const arg = rest.trim();
  const bash = (cmd: string) => (tools.has('bash') ? call('bash', { command: cmd }) : noTool('bash'));
  switch (verb.toLowerCase()) {
    case 'run':
      return arg ? bash(arg) : 'Tell me what to run, for example: run ls -la';
    case 'read':
      if (!arg) return 'Tell me which file, for example: read package.json';
      return tools.has('read_file') ? call('read_file', { file_path: arg }) : bash(`cat -n ${quote(arg)}`);
    case 'list':
      return tools.has('glob') ? call('glob', { pattern: arg || '*' }) : bash('ls -la');
    case 'find':
      if (!arg) return 'Tell me what to find, for example: find **/*.ts';
      return tools.has('glob')
        ? call('glob', { pattern: arg })
        : bash(`find . -path ./node_modules -prune -o -path ${quote('./' + arg)} -print -o -name ${quote(arg)} -print`);
    case 'search':
      if (!arg) return 'Tell me what to search for, for example: search TODO';
      return tools.has('grep') ? call('grep', { pattern: arg }) : bash(`grep -rnE --exclude-dir=node_modules -- ${quote(arg)} .`);
    case 'write': {
      const m = arg.match(/^(\S+?):\s?([\s\S]*)$/);
      if (!m) return 'Write needs a file and text, for example: write notes.txt: hello';
      return tools.has('write_file')
        ? call('write_file', { file_path: m[1], content: m[2] + '\n' })
        : bash(`printf '%s\\n' ${quote(m[2])} > ${quote(m[1])}`);
    }
    case 'edit': {
      const m = arg.match(/^(\S+?):\s?([\s\S]*?)\s=>\s([\s\S]*)$/);
      if (!m) return 'Edit needs a file, the old text and the new text, for example: edit notes.txt: hello => goodbye';
      return tools.has('edit_file') ? call('edit_file', { file_path: m[1], old_string: m[2], new_string: m[3] }) : noTool('edit_file');
    }
    case 'delegate':
      if (!arg) return 'Tell me what to delegate, for example: delegate search TODO';
      return tools.has('agent') ? call('agent', { task: arg }) : noTool('agent');
    case 'compact':
      return tools.has('compact') ? call('compact', {}) : noTool('compact');
    default:
      return help(command, tools);
  }
}

function noTool(name: string): string {
  const alternative = name === 'bash' ? '' : ' Try: run <command>';
  return `This chapter does not give me the \`${name}\` tool, so I cannot do that here.${alternative}`;
}

function help(command: string, tools: Set<string>): string {
  const list = usable(tools).map(([cmd]) => cmd).join(', ');
  return `I am the offline demo model, not an AI, so I did not understand "${command.slice(0, 60)}". ` +
    `I understand: ${list}. Join two with "then".`;
}

/** After tool calls: quote what each tool returned (the first lines), so the loop is visible. */
function describeResults(results: Block[], messages: { role: string; content: unknown }[]): string {
  const uses = new Map<string, Block>();
  for (const m of messages) for (const b of blocks(m.content)) if (b.type === 'tool_use') uses.set(b.id, b);
  const parts = results.map((r) => {
    const use = uses.get(r.tool_use_id);
    // A long input is cut between characters, and the cut is marked: `{"new_string":"…` is no value.
    const input = [...JSON.stringify(use?.input ?? {})];
    const shortened = input.length > 60 ? `${input.slice(0, 60).join('')}…` : input.join('');
    const label = use ? `${use.name}(${shortened})` : 'a tool';
    const out = typeof r.content === 'string' ? r.content : textOf(r.content ?? []);
    const lines = out.split('\n');
    const shown = lines.slice(0, 8).map((l) => `  ${l.slice(0, 160)}`).join('\n');
    const more = lines.length > 8 ? `\n  … (${lines.length - 8} more lines)` : '';
    return `${r.is_error ? 'That failed' : 'Result of'} ${label}:\n${shown}${more}`;
  });
  return parts.join('\n') + '\n(offline demo: I only echo tool results; a real model would reason about them.)';
}

function describeHistory(messages: { role: string; content: unknown }[]): string {
  const prompts = messages.filter((m) => m.role === 'user' && textOf(m.content).trim()).map((m) => textOf(m.content).trim());
  const toolCalls = messages.flatMap((m) => blocks(m.content)).filter((b) => b.type === 'tool_use').length;
  const list = prompts.map((p, i) => `  ${i + 1}. ${p.slice(0, 70)}`).join('\n');
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const seen = `${count(messages.length, 'message')}: ${count(prompts.length, 'prompt')} from you and ${count(toolCalls, 'tool call')}`;
  return `I can see ${seen}.\n${list}`;
}

function describePrompt(system: unknown): string {
  const text = typeof system === 'string' ? system : Array.isArray(system) ? textOf(system) : '';
  if (!text) return 'I received no system prompt.';
  const headings = text.split('\n').filter((l) => /^#+\s/.test(l));
  const first = text.split('\n').slice(0, 3).map((l) => `  ${l.slice(0, 100)}`).join('\n');
  return `My system prompt is ${text.length} characters, ${text.split('\n').length} lines.${headings.length ? ` Sections: ${headings.join(' | ')}.` : ''}\nIt begins:\n${first}`;
}

/** A deterministic summary: which commands the user gave and how long the conversation was. */
function summarise(transcript: string): string {
  const verbs = /\b(?:run|read|list|find|search|write|edit|delegate)\b[^\n"]{0,60}/gi;
  const seen = [...new Set(transcript.match(verbs) ?? [])].slice(0, 10);
  return [
    `Summary (offline demo): the conversation so far was ${transcript.length} characters long.`,
    seen.length ? `Requests made: ${seen.join('; ')}.` : 'No tool requests were made.',
  ].join('\n');
}
