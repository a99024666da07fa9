/**
 * The offline demo model's command language, as it was before it learned tasks, and still there
 * for quick looks: `run <command>`, `read <file>`, `list`, `search <regex>`, `write`, `edit`,
 * `delegate`, `compact`, `history`, `prompt`, and up to five joined with "then". Each is a tool
 * call with the best tool the chapter offers; after the results it quotes them back, and says
 * that it only echoes them.
 */
import type { MessageReply, ReplyBlock } from '../fake-anthropic.ts';
import { head } from '../text.ts';
import { blocks, INTERRUPTED_NOTE, SUMMARY_HEAD, textOf, type Message } from './conversation.ts';
import { clip, say } from './reply.ts';
import { DEMO_TASKS, isCommand, taskKind } from './tasks.ts';

// Each command, what it does, and the tools it needs (any one of them; none: it always works).
export const OFFLINE_COMMANDS: [command: string, what: string, needs: string[]][] = [
  ['run <command>', 'run a shell command', ['bash']],
  ['read <file>', 'show a file with line numbers', ['read_file', 'bash']],
  ['list | find <glob>', 'list files', ['glob', 'bash']],
  ['search <regex>', 'search file contents', ['grep', 'bash']],
  ['write <file>: <text>', 'create a file', ['write_file', 'bash']],
  ['edit <file>: <old> => <new>', 'replace text in a file', ['edit_file']],
  ['delegate <command or task>', 'a sub-agent does it', ['agent']],
  ['compact', 'compact the conversation', ['compact']],
  ['history | prompt', 'what the model can see', []],
];

/** The commands that work with these tools: a chapter's banner lists only what it can do. */
export const usable = (tools: Set<string>) =>
  OFFLINE_COMMANDS.filter(([, , needs]) => needs.length === 0 || needs.some((t) => tools.has(t)));

type Block = { type: string; [k: string]: any };

// How many commands one prompt may join with "then": a reply is a handful of calls, as a real
// model's is, not 8,001 of them.
export const MAX_JOINED = 5;
// "then" between two commands. Nothing before "then" but one blank is matched (the lookbehind):
// `\s+then` would be tried from every blank of a long run of them, each time to its end.
const THEN = /(?<=\s)then\s+(?=(?:run|read|list|find|search|write|edit|delegate|compact)\b)/gi;

/** A prompt in the command language: one tool call per command, or a sentence saying why not. */
export function runCommands(prompt: string, tools: Set<string>, body: any): MessageReply {
  if (/^history$/i.test(prompt)) return say(describeHistory(body.messages));
  if (/^prompt$/i.test(prompt)) return say(describePrompt(body.system));
  // "read a.txt then run ls" → two tool calls in one reply.
  const parts: string[] = [];
  let from = 0;
  for (const then of prompt.matchAll(THEN)) {
    parts.push(prompt.slice(from, then.index).trim());
    from = then.index! + then[0].length;
    if (parts.length === MAX_JOINED) {
      const more = `I join at most ${MAX_JOINED} commands with "then", and this prompt has more`;
      return say(`${more}: send them a few at a time.`);
    }
  }
  parts.push(prompt.slice(from).trim());
  const calls = parts.map((part) => toToolCall(part, tools));
  const failed = calls.find((c): c is string => typeof c === 'string');
  if (failed !== undefined) return say(failed);
  // Your words, quoted back: a long prompt (a file's text to write, say) only in part.
  const text = `On it: ${clip(parts.join(', then '), 200)}.`;
  return { content: [{ type: 'text', text }, ...(calls as ReplyBlock[])] };
}

const call = (name: string, input: Record<string, unknown>): ReplyBlock => {
  return { type: 'tool_use', name, input };
};
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** One command → one tool call, or a sentence explaining why not. */
function toToolCall(command: string, tools: Set<string>): ReplyBlock | string {
  const [, verb = '', rest = ''] = command.match(/^(\w+)\s*([\s\S]*)$/) ?? [];
  const arg = rest.trim();
  const bash = (cmd: string) => {
    return tools.has('bash') ? call('bash', { command: cmd }) : noTool('bash');
  };
  switch (verb.toLowerCase()) {
    case 'run':
      return arg ? bash(arg) : 'Tell me what to run, for example: run ls -la';
    case 'read':
      if (!arg) return 'Tell me which file, for example: read package.json';
      if (tools.has('read_file')) return call('read_file', { file_path: arg });
      return bash(`cat -n ${quote(arg)}`);
    case 'list':
    case 'find': {
      if (!arg && verb.toLowerCase() === 'list') {
        return tools.has('glob') ? call('glob', { pattern: '*' }) : bash('ls -la');
      }
      if (!arg) return 'Tell me what to find, for example: find **/*.ts';
      // "list the files in src" is no glob: taken as one, it would match nothing.
      const name = verb.toLowerCase();
      if (/\s/.test(arg)) return `\`${name}\` takes one glob, for example: ${name} src/*.js`;
      if (tools.has('glob')) return call('glob', { pattern: arg });
      const path = `-path ${quote('./' + arg)} -print -o -name ${quote(arg)} -print`;
      return bash(`find . -path ./node_modules -prune -o ${path}`);
    }
    case 'search':
      if (!arg) return 'Tell me what to search for, for example: search TODO';
      if (tools.has('grep')) return call('grep', { pattern: arg });
      return bash(`grep -rnE --exclude-dir=node_modules -- ${quote(arg)} .`);
    case 'write': {
      const [file, text] = splitAtColon(arg) ?? [];
      if (file === undefined) {
        return 'Write needs a file and text, for example: write notes.txt: hello';
      }
      return tools.has('write_file')
        ? call('write_file', { file_path: file, content: text + '\n' })
        : bash(`printf '%s\\n' ${quote(text!)} > ${quote(file)}`);
    }
    case 'edit': {
      // "notes.txt: hello => goodbye": the file, then the old and new text around the first ` => `.
      const [file, text = ''] = splitAtColon(arg) ?? [];
      const arrow = text.search(/\s=>\s/);
      if (file === undefined || arrow === -1) {
        return 'Edit needs a file, the old text and the new text, for example: ' +
          'edit notes.txt: hello => goodbye';
      }
      if (!tools.has('edit_file')) return noTool('edit_file');
      const [oldText, newText] = [text.slice(0, arrow), text.slice(arrow + 4)];
      return call('edit_file', { file_path: file, old_string: oldText, new_string: newText });
    }
    case 'delegate': {
      if (!arg) return 'Tell me what to delegate, for example: delegate search TODO';
      if (!tools.has('agent')) return noTool('agent');
      const task = arg.replace(/^:\s*/, ''); // "delegate: search TODO"
      const cannot = forSubAgent(task, tools);
      return cannot ? cannot : call('agent', { task });
    }
    case 'compact':
      return tools.has('compact') ? call('compact', {}) : noTool('compact');
    default:
      return notUnderstood(command, tools);
  }
}

/**
 * Why a sub-agent could not do this task, if it could not. It is the offline demo model too, and
 * reads the task as a prompt: one of its tasks, or one command, with its tools (all but agent).
 */
function forSubAgent(task: string, tools: Set<string>): string | undefined {
  const kind = taskKind(task);
  if (kind === 'fix' || kind === 'find' || /^(?:history|prompt)$/i.test(task)) return undefined;
  const what = `A sub-agent is the offline demo model too: it would take “${clip(task, 60)}”`;
  if (kind === 'continue' || !isCommand(task)) {
    return `${what} for no task it knows. Delegate a command or a task it plays, for ` +
      'example: delegate search TODO, or delegate find where <name> is defined.';
  }
  if (/^delegate\b/i.test(task)) return `${what} as a command, and a sub-agent has no agent tool.`;
  const child = new Set([...tools].filter((t) => t !== 'agent' && t !== 'compact'));
  const reply = toToolCall(task, child);
  return typeof reply === 'string' ? `${what} as a command, and answer: ${reply}` : undefined;
}

/**
 * `notes.txt: hello` → ['notes.txt', 'hello']: the file is the first word, up to its first colon.
 * (A pattern that let the file name run on to a later colon tried the rest of the text from each.)
 */
function splitAtColon(arg: string): [file: string, text: string] | undefined {
  const file = arg.match(/^[^\s:]+(?=:)/)?.[0];
  if (file === undefined) return undefined;
  return [file, arg.slice(file.length + 1).replace(/^\s/, '')];
}

function noTool(name: string): string {
  const alternative = name === 'bash' ? '' : ' Try: run <command>';
  const cannot = `This chapter does not give me the \`${name}\` tool, so I cannot do that here.`;
  return `${cannot}${alternative}`;
}

/** Everything else: it says so, and what it can do instead. */
export function notUnderstood(prompt: string, tools: Set<string>): string {
  const what = `"${clip(prompt, 60)}"`;
  const intro = `I am the offline demo model, a script and not an AI, so I did not understand ` +
    `${what}.`;
  return `${intro}\n${whatICanDo(tools)}`;
}

/** The tasks it plays first, then the commands this chapter's tools allow. */
export function whatICanDo(tools: Set<string>): string {
  const list = usable(tools).map(([cmd]) => cmd).join(', ');
  // continue last, with when it works: this answer does not know the chapter, the banner does.
  const tasks = DEMO_TASKS.map(([task]) => task).filter((task) => task !== 'continue');
  const more = 'and, from s04 on, continue a task you stopped (Ctrl+C)';
  return [
    `I can play these tasks: ${[...tasks, more].join('; ')}. Try them in the sample project: ` +
      'npm run demo <chapter>, then type: fix the failing test.',
    `And these commands: ${list}. Join two (up to ${MAX_JOINED}) with "then".`,
    'For a model that understands anything: set ANTHROPIC_API_KEY (see .env.example).',
  ].join('\n');
}

/** After tool calls: quote what each tool returned (the first lines), so the loop is visible. */
export function describeResults(results: Block[], messages: Message[]): string {
  const uses = new Map<string, Block>();
  for (const m of messages) {
    for (const b of blocks(m.content)) if (b.type === 'tool_use') uses.set(b.id, b);
  }
  const parts = results.map((r) => {
    const use = uses.get(r.tool_use_id);
    // A long input is cut, and the cut is marked: `{"new_string":"…` is no value.
    const label = use ? `${use.name}(${clip(JSON.stringify(use.input ?? {}), 60)})` : 'a tool';
    const out = typeof r.content === 'string' ? r.content : textOf(r.content ?? []);
    const lines = out.split('\n');
    const shown = lines.slice(0, 8).map((l) => `  ${head(l, 160)}`).join('\n');
    const more = lines.length > 8 ? `\n  … (${lines.length - 8} more lines)` : '';
    return `${r.is_error ? 'That failed' : 'Result of'} ${label}:\n${shown}${more}`;
  });
  const honest = '(offline demo: I only echo tool results; a real model would reason about them.)';
  return `${parts.join('\n')}\n${honest}`;
}

function describeHistory(messages: Message[]): string {
  // Your prompts; not the note a Ctrl+C leaves (s04) nor a summary (s05), though both are
  // messages of yours too.
  const texts = messages
    .filter((m) => m.role === 'user' && textOf(m.content).trim())
    .map((m) => textOf(m.content).trim());
  const prompts = texts.filter((t) => t !== INTERRUPTED_NOTE && !t.startsWith(SUMMARY_HEAD));
  const notes = texts.filter((t) => t === INTERRUPTED_NOTE).length;
  const summary = texts.find((t) => t.startsWith(SUMMARY_HEAD));
  const toolCalls = messages.flatMap((m) => blocks(m.content)).filter((b) => b.type === 'tool_use');
  const list = prompts.map((p, i) => `  ${i + 1}. ${head(p, 70)}`).join('\n');
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const parts = [`${count(prompts.length, 'prompt')} from you`];
  parts.push(count(toolCalls.length, 'tool call'));
  if (notes > 0) parts.push(`${count(notes, 'note')} that you interrupted me`);
  if (summary) parts.push('a summary of the earlier conversation');
  const seen = `${count(messages.length, 'message')}: ${parts.slice(0, -1).join(', ')} and ` +
    `${parts.at(-1)}`;
  if (!summary) return `I can see ${seen}.\n${list}`;
  // After a compaction (s05) the conversation starts with the summary: show it, it is all that is
  // left of the earlier part.
  const shown = summary.split('\n').map((line) => `     ${line}`).join('\n');
  return `I can see ${seen}.\n${list}\nThe summary:\n${shown}`;
}

function describePrompt(system: unknown): string {
  const text = typeof system === 'string' ? system : Array.isArray(system) ? textOf(system) : '';
  if (!text) return 'I received no system prompt.';
  const headings = text.split('\n').filter((l) => /^#+\s/.test(l));
  const first = text.split('\n').slice(0, 3).map((l) => `  ${head(l, 100)}`).join('\n');
  const sections = headings.length ? ` Sections: ${headings.join(' | ')}.` : '';
  const size = `${text.length} characters, ${text.split('\n').length} lines`;
  return `My system prompt is ${size}.${sections}\nIt begins:\n${first}`;
}
