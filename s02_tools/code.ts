/**
 * s02 · Tools — s01's loop, with tools as data: one schema and one handler per tool, looked up by name.
 *
 * Adds read_file, write_file, edit_file, glob and grep, keeps every file tool inside the workspace,
 * puts a gate in front of bash, and runs read-only calls side by side.
 *
 *   npx tsx s02_tools/code.ts              a REPL (type `exit` or `q` to leave)
 *   npx tsx s02_tools/code.ts -p "..."     one prompt, then exit
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstatSync, mkdirSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import 'dotenv/config';
import readlineSync from 'readline-sync';
import { glob } from 'tinyglobby';
import { startOfflineModel } from '../shared/offline-model.ts';

// ── Config ──────────────────────────────────────────────────────────────────────────────────────
const API_KEY = process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN;
const BASE_URL = process.env.ANTHROPIC_BASE_URL || undefined;
export const MODEL = process.env.MODEL_ID || 'claude-sonnet-5-5';
const MAX_TOKENS = 8000; // the longest reply we accept in one call
const MAX_ROUNDS = 30; // model calls per prompt, so a confused model cannot loop forever
const WORKDIR = process.cwd(); // the agent works in the folder you start it from
const SYSTEM = `You are a coding agent working in ${WORKDIR}. Use the tools to look around and to make changes; prefer read_file, edit_file, glob and grep over bash for files. Be brief.`; // s01: bash only

// No key? Talk to the offline demo model on 127.0.0.1 instead: same SDK, same requests.
const offline = API_KEY ? undefined : await startOfflineModel();
const client = new Anthropic({
  apiKey: API_KEY ?? offline!.apiKey,
  baseURL: offline?.url ?? BASE_URL,
  // SDK 1.x authenticates with a Bearer header; some Anthropic-compatible vendors read only x-api-key.
  defaultHeaders: BASE_URL && API_KEY ? { 'x-api-key': API_KEY } : undefined,
});

// ── NEW in s02: tools as data — one schema per tool (the handlers follow) ──────────────────────
const string = (description: string) => ({ type: 'string', description });
const integer = (description: string) => ({ type: 'integer', description });

// The model sees only this description: name, what it does, and a JSON Schema for its input.
export const TOOLS: Tool[] = [
  {
    name: 'bash',
    description: 'Run a shell command in the workspace. Returns stdout and stderr together, then the exit code.',
    input_schema: {
      type: 'object',
      properties: { command: string('The command, e.g. "npm test"'), timeout: integer('Seconds before it is killed (default 120, max 600)') },
      required: ['command'],
    },
  },
  {
    name: 'read_file',
    description: 'Read a text file, with line numbers. Long files come in pages: use offset and limit.',
    input_schema: {
      type: 'object',
      properties: { file_path: string('Path in the workspace'), offset: integer('First line, 1-based'), limit: integer('How many lines (default 2000)') },
      required: ['file_path'],
    },
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a file with the given content. Creates missing folders.',
    input_schema: { type: 'object', properties: { file_path: string('Path in the workspace'), content: string('The whole new content') }, required: ['file_path', 'content'] },
  },
  {
    name: 'edit_file',
    description: 'Replace an exact string in a file. old_string must match once (whitespace included) unless replace_all is true. Answers with a diff.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: string('Path in the workspace'),
        old_string: string('The exact text to replace; include enough context to be unique'),
        new_string: string('The text to put in its place'),
        replace_all: { type: 'boolean', description: 'Replace every occurrence (default false)' },
      },
      required: ['file_path', 'old_string', 'new_string'],
    },
  },
  {
    name: 'glob',
    description: 'List files matching a glob pattern such as "src/**/*.ts", newest first.',
    input_schema: { type: 'object', properties: { pattern: string('Glob pattern'), path: string('Folder to search in (default: the workspace)') }, required: ['pattern'] },
  },
  {
    name: 'grep',
    description: 'Search file contents with a regular expression. Returns path:line: text for each match.',
    input_schema: {
      type: 'object',
      properties: { pattern: string('JavaScript regular expression'), path: string('File or folder (default: the workspace)'), include: string('Only files matching this glob, e.g. "*.ts"') },
      required: ['pattern'],
    },
  },
];

// ── The tools: bash ─────────────────────────────────────────────────────────────────────────────
const MAX_OUTPUT = 20_000; // characters; a `cat` of a huge log must not flood the context

// NEW in s02: a gate for commands that can wreck a machine. A blocklist is a speed bump, not a
// sandbox: `find / -delete` walks straight past it. Real isolation is a container or a VM.
const DANGEROUS: [RegExp, string][] = [
  [/\brm\s+(-\S+\s+)*(\/|~|\$HOME|\$\{HOME\})\/?\*?(\s|$|[;&|])/, 'recursive delete of / or the home folder'],
  [/(^|[;&|]\s*|sudo\s+)mkfs\b/, 'formatting a file system (mkfs)'],
  [/\bdd\b.*\bof=\/dev\/|>\s*\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/, 'raw write to a block device'],
  [/:\s*\(\s*\)\s*\{.*:\s*\|\s*:.*&.*\}/, 'fork bomb'],
  [/\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/, 'piping a download into a shell'],
];

export async function runBash(command: string, timeout = 120): Promise<string> {
  const danger = DANGEROUS.find(([pattern]) => pattern.test(command));
  if (danger) throw new Error(`refused: ${danger[1]}. Do this by hand if it is really wanted.`);
  // Its own process group (detached), so a timeout kills the command and everything it started.
  const child = spawn('bash', ['-c', command], { cwd: WORKDIR, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let killed = ''; // why we killed it, if we did
  const kill = (why: string) => ((killed ||= why), process.kill(-child.pid!, 'SIGKILL'));
  const timer = setTimeout(() => kill(`timed out after ${timeout}s`), timeout * 1000);
  const collect = (chunk: string) => {
    output += chunk;
    if (output.length > 10_000_000) kill('more than 10 MB of output'); // `yes` would fill the memory
  };
  child.stdout.setEncoding('utf8').on('data', collect); // decode as text, so a character split
  child.stderr.setEncoding('utf8').on('data', collect); // between two chunks stays whole
  const [code, signal] = await once(child, 'close');
  clearTimeout(timer);
  if (output.length > MAX_OUTPUT) {
    // Keep the head and the tail: errors and summaries tend to be at the ends.
    const cut = output.length - MAX_OUTPUT;
    output = `${output.slice(0, MAX_OUTPUT / 2)}\n… (${cut} characters cut) …\n${output.slice(-MAX_OUTPUT / 2)}`;
  }
  const status = killed ? `${killed}; killed` : `exit code ${code ?? signal}`;
  return `${output.trim() || '(no output)'}\n[${status}]`;
}

// ── NEW in s02: the workspace boundary ──────────────────────────────────────────────────────────
const ROOT = realpathSync(WORKDIR);

/** Resolve a path the model gave us, and refuse it if it lands outside the workspace. */
export function safePath(path: string): string {
  const full = resolve(WORKDIR, path);
  // Follow symlinks in the part that exists: `docs` may be a link to /etc. A new file has no
  // real path yet, so resolve its deepest existing folder and add the rest.
  let head = full;
  const rest: string[] = [];
  while (!exists(head)) {
    rest.unshift(basename(head));
    head = dirname(head);
  }
  const real = join(realpathSync(head), ...rest);
  const rel = relative(ROOT, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new Error(`${path} is outside the workspace (${WORKDIR}); file tools only work inside it`);
  }
  return full;
}
const exists = (p: string) => { try { return !!lstatSync(p); } catch { return false; } };

/** Write to a temp file, then rename over the target: a crash mid-write never leaves half a file. */
function writeAtomic(path: string, text: string): void {
  // Through a symlink to the file it names, and with the file's permissions (a script stays executable).
  const target = exists(path) ? realpathSync(path) : path;
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: exists(target) ? statSync(target).mode : 0o666 });
  renameSync(tmp, target);
}

// ── NEW in s02: the file tools ──────────────────────────────────────────────────────────────────
const SKIP = ['**/node_modules/**', '**/.git/**']; // never worth searching, often huge
const MAX_LINE = 2000; // characters of one line that read_file and grep show
const isBinary = (bytes: Buffer) => bytes.subarray(0, 8000).includes(0);

async function readFileTool(input: { file_path: string; offset?: number; limit?: number }): Promise<string> {
  const path = safePath(input.file_path);
  if ((await stat(path)).isDirectory()) throw new Error(`${input.file_path} is a directory; use glob to list it`);
  const bytes = await readFile(path);
  if (isBinary(bytes)) throw new Error(`${input.file_path} is a binary file; read_file shows text only`);
  const lines = bytes.toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop(); // the newline at the end of the last line
  const start = Math.max(0, (input.offset ?? 1) - 1);
  if (start > 0 && start >= lines.length) throw new Error(`offset ${input.offset} is past the end: ${input.file_path} has ${lines.length} lines`);
  const shown = lines.slice(start, start + (input.limit ?? 2000));
  // `cat -n` style, so the model can cite line numbers:  "    12\tconst x = 1;"
  const body = shown.map((line, k) => `${String(start + k + 1).padStart(6)}\t${line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}… (line cut)` : line}`);
  if (shown.length === lines.length) return body.join('\n') || '(empty file)';
  return `${body.join('\n')}\n(showing lines ${start + 1}-${start + shown.length} of ${lines.length}; use offset and limit to see more)`;
}

async function writeFileTool(input: { file_path: string; content: string }): Promise<string> {
  const path = safePath(input.file_path);
  mkdirSync(dirname(path), { recursive: true });
  writeAtomic(path, input.content);
  return `Wrote ${input.content.length} characters to ${input.file_path}`;
}

async function editFileTool(input: { file_path: string; old_string: string; new_string: string; replace_all?: boolean }): Promise<string> {
  if (!input.old_string) throw new Error('old_string is empty; to create a file use write_file');
  if (input.old_string === input.new_string) throw new Error('old_string and new_string are the same; nothing would change');
  const path = safePath(input.file_path);
  const before = await readFile(path, 'utf8');
  // The model writes "\n". In a CRLF file, match and write "\r\n" so the file keeps its line endings.
  const eol = (text: string) => (before.includes('\r\n') ? text.replace(/\r?\n/g, '\r\n') : text);
  const [oldText, newText] = [eol(input.old_string), eol(input.new_string)];
  const count = before.split(oldText).length - 1;
  if (count === 0) throw new Error(`old_string not found in ${input.file_path}. Read the file and copy the text exactly, whitespace included.`);
  if (count > 1 && !input.replace_all) {
    throw new Error(`old_string appears ${count} times in ${input.file_path}; include more surrounding lines to make it unique, or set replace_all`);
  }
  const after = input.replace_all ? before.split(oldText).join(newText) : before.replace(oldText, () => newText);
  writeAtomic(path, after);
  // Answer with a unified diff: the model (and you) can see exactly what changed.
  const lf = (text: string) => text.replace(/\r\n/g, '\n');
  return createTwoFilesPatch(input.file_path, input.file_path, lf(before), lf(after), undefined, undefined, { headerOptions: FILE_HEADERS_ONLY });
}

/** Files under `path` matching `pattern`, inside the workspace, as paths relative to it. */
async function findFiles(pattern: string, path = '.'): Promise<string[]> {
  const base = safePath(path);
  const found = await glob(pattern, { cwd: base, ignore: SKIP, dot: true, absolute: true });
  // A pattern like "../**" or a symlinked folder could reach outside: check every hit.
  return found.filter((file) => { try { return !!safePath(file); } catch { return false; } }).map((file) => relative(WORKDIR, file));
}

async function globTool(input: { pattern: string; path?: string }): Promise<string> {
  const files = await findFiles(input.pattern, input.path);
  // Newest first: the file you just touched is usually the one you want.
  const mtimes = new Map(await Promise.all(files.map(async (f) => [f, (await stat(f)).mtimeMs] as const)));
  files.sort((a, b) => mtimes.get(b)! - mtimes.get(a)! || a.localeCompare(b));
  if (files.length === 0) return `No files match ${input.pattern}`;
  const more = files.length > 100 ? `\n(${files.length - 100} more not shown; narrow the pattern)` : '';
  return files.slice(0, 100).join('\n') + more;
}

async function grepTool(input: { pattern: string; path?: string; include?: string }): Promise<string> {
  const regex = new RegExp(input.pattern); // an invalid pattern throws, and the model gets the message
  const include = input.include ?? '**/*';
  const target = safePath(input.path ?? '.');
  // "*.ts" should mean any .ts file below the folder, as in grep --include and ripgrep -g.
  const files = (await stat(target)).isFile()
    ? [relative(WORKDIR, target)]
    : await findFiles(include.includes('/') ? include : `**/${include}`, input.path);
  const matches: string[] = [];
  for (const file of files.sort()) {
    const bytes = await readFile(file);
    if (isBinary(bytes)) continue;
    bytes.toString('utf8').split('\n').forEach((line, i) => {
      if (regex.test(line)) matches.push(`${file}:${i + 1}: ${line.slice(0, MAX_LINE)}`);
    });
  }
  if (matches.length === 0) return `No matches for /${input.pattern}/`;
  const more = matches.length > 100 ? `\n(${matches.length - 100} more matches not shown; narrow the pattern or path)` : '';
  return matches.slice(0, 100).join('\n') + more;
}

// ── NEW in s02: dispatch — look the handler up by name ───────────────────────────────────────────
type Handler = (input: any) => Promise<string>;

// The dispatch map: tool name → the function that runs it. Adding a tool is one schema and one line here.
export const HANDLERS: Record<string, Handler> = {
  bash: (input) => runBash(input.command, Math.min(input.timeout ?? 120, 600)),
  read_file: readFileTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  glob: globTool,
  grep: grepTool,
};

/** Check an input against its schema's required fields and simple types; say what is wrong. */
function checkInput(tool: Tool, input: Record<string, unknown>): string | undefined {
  const { properties = {}, required = [] } = tool.input_schema as { properties?: Record<string, { type: string }>; required?: string[] };
  for (const name of required) if (input[name] === undefined) return `missing required parameter "${name}" for ${tool.name}`;
  for (const [name, value] of Object.entries(input)) {
    const want = properties[name]?.type;
    const got = Number.isInteger(value) ? 'integer' : typeof value;
    if (want && want !== got && !(want === 'number' && got === 'integer')) return `parameter "${name}" of ${tool.name} must be of type ${want}, not ${got}`;
  }
}

/** Run one tool call. Every failure becomes an is_error result the model can read and react to. */
export async function runTool(call: ToolUseBlock): Promise<ToolResultBlockParam> {
  const fail = (message: string): ToolResultBlockParam => ({ type: 'tool_result', tool_use_id: call.id, content: `Error: ${message}`, is_error: true });
  const tool = TOOLS.find((t) => t.name === call.name);
  if (!tool || !HANDLERS[call.name]) return fail(`unknown tool "${call.name}". Available: ${Object.keys(HANDLERS).join(', ')}`);
  const problem = checkInput(tool, call.input as Record<string, unknown>);
  if (problem) return fail(problem);
  try {
    return { type: 'tool_result', tool_use_id: call.id, content: await HANDLERS[call.name](call.input) };
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
}

// Tools that only look. Several of them in one reply can run at once; anything that may change the
// workspace runs alone, in order: two edits of one file racing would each write over the other.
const READ_ONLY = new Set(['read_file', 'glob', 'grep']);

export async function runToolCalls(calls: ToolUseBlock[]): Promise<ToolResultBlockParam[]> {
  const results: ToolResultBlockParam[] = [];
  for (let i = 0; i < calls.length; ) {
    let j = i + 1;
    if (READ_ONLY.has(calls[i].name)) while (j < calls.length && READ_ONLY.has(calls[j].name)) j++;
    for (const call of calls.slice(i, j)) {
      const input = call.input as Record<string, unknown>;
      console.log(`\x1b[33m${call.name === 'bash' ? `$ ${input.command}` : `> ${call.name} ${JSON.stringify(input).slice(0, 100)}`}\x1b[0m`);
    }
    results.push(...(await Promise.all(calls.slice(i, j).map(runTool)))); // results keep the order of the calls
    i = j;
  }
  return results;
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
    // s01: called runBash directly → s02: looks each call up in the dispatch map.
    const results = await runToolCalls(reply.content.filter((b) => b.type === 'tool_use'));
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
    const query = readlineSync.question('\x1b[36ms02 >> \x1b[0m').trim();
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
