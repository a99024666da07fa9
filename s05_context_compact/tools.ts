/**
 * Tools as data (new in s02): one schema per tool, which is all the model sees of it, and a
 * dispatch map from each tool's name to the function that runs it. Every call gets a result, and
 * a call that fails gets one the model can read and react to.
 */
import type { MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources';
import type { ToolUseBlock } from '@anthropic-ai/sdk/resources';
import { head } from '../shared/text.ts';
import { paint, YELLOW } from '../shared/terminal.ts';
import { runBash, TIMEOUT } from './bash.ts';
import { editFileTool, MAX_RESULT, readFileTool, writeFileTool } from './files.ts';
import { globTool, grepTool } from './search.ts';

const string = (description: string) => ({ type: 'string', description });
const integer = (description: string) => ({ type: 'integer', description });

// The model sees only this description: name, what it does, and a JSON Schema for its input.
export const TOOLS: Tool[] = [
  {
    name: 'bash',
    description:
      'Run a shell command in the workspace. Returns stdout and stderr together, ' +
      'then the exit code.',
    input_schema: {
      type: 'object',
      properties: {
        command: string('The command, e.g. "npm test"'),
        timeout: integer('Seconds before it is killed (default 120, max 600)'),
      },
      required: ['command'],
    },
  },
  {
    name: 'read_file',
    description:
      'Read a text file, with line numbers. Long files come in pages: use offset and limit.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: string('Path in the workspace'),
        offset: integer('First line, 1-based'),
        limit: integer('How many lines (default 2000)'),
      },
      required: ['file_path'],
    },
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a file with the given content. Creates missing folders.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: string('Path in the workspace'),
        content: string('The whole new content'),
      },
      required: ['file_path', 'content'],
    },
  },
  {
    name: 'edit_file',
    description:
      'Replace an exact string in a file. old_string must match once (whitespace included) ' +
      'unless replace_all is true. Answers with a diff.',
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
    input_schema: {
      type: 'object',
      properties: {
        pattern: string('Glob pattern'),
        path: string('Folder to search in (default: the workspace)'),
      },
      required: ['pattern'],
    },
  },
  {
    name: 'grep',
    description:
      'Search file contents with a regular expression. Returns path:line: text for each match.',
    input_schema: {
      type: 'object',
      properties: {
        pattern: string('JavaScript regular expression'),
        path: string('File or folder (default: the workspace)'),
        include: string('Only files matching this glob, e.g. "*.ts"'),
      },
      required: ['pattern'],
    },
  },
];

// ── Dispatch: look the handler up by name ──────────────────────────────────────────────────
// s03: the input → s04: and the turn's signal, which Ctrl+C aborts (a sub-agent stops with it).
export type Handler = (input: any, signal?: AbortSignal) => Promise<string>;

// The dispatch map: tool name → the function that runs it. A new tool is one schema and one line.
export const HANDLERS: Record<string, Handler> = {
  bash: (input) => runBash(input.command, Math.min(Math.max(input.timeout ?? TIMEOUT, 1), 600)),
  read_file: readFileTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  glob: globTool,
  grep: grepTool,
};

/** Check an input against its schema's required fields and simple types; say what is wrong. */
function checkInput(tool: Tool, input: Record<string, unknown>): string | undefined {
  type Schema = { properties?: Record<string, { type: string }>; required?: string[] };
  const schema = tool.input_schema as Schema;
  const { properties = {}, required = [] } = schema;
  for (const name of required) {
    if (input[name] === undefined) return `missing required parameter "${name}" for ${tool.name}`;
  }
  for (const [name, value] of Object.entries(input)) {
    const want = properties[name]?.type;
    const got = Number.isInteger(value) ? 'integer' : typeof value;
    if (want && want !== got && !(want === 'number' && got === 'integer')) {
      return `parameter "${name}" of ${tool.name} must be of type ${want}, not ${got}`;
    }
  }
}

/** Cut a result over MAX_RESULT characters: a huge one would make every later request too long. */
function capResult(content: string): string {
  if (content.length <= MAX_RESULT) return content;
  const rest = `${content.length - MAX_RESULT} more characters not shown`;
  const narrower =
    'a narrower pattern or path, read_file with offset and limit, or bash with head or sed';
  const cut = `result cut at ${MAX_RESULT} characters; ${rest}; ask for less: ${narrower}`;
  return `${head(content, MAX_RESULT)}\n… (${cut})`;
}

// NEW in s03: the tools an agent was given (a sub-agent has no `agent` tool), and the indent its
// lines are printed with.
export interface Toolbox {
  tools: Tool[];
  handlers: Record<string, Handler>;
  indent: string;
}

/** Run one tool call. Every failure becomes an is_error result the model can read and react to. */
// s02: every tool in TOOLS → s03: only the tools in the agent's toolbox.
// s03: (call, box) → s04: and the turn's signal, for the handler.
export async function runTool(
  call: ToolUseBlock,
  box: Toolbox,
  signal?: AbortSignal,
): Promise<ToolResultBlockParam> {
  const fail = (message: string): ToolResultBlockParam => {
    const content = `Error: ${message}`;
    return { type: 'tool_result', tool_use_id: call.id, content, is_error: true };
  };
  const tool = box.tools.find((t) => t.name === call.name);
  if (!tool || !box.handlers[call.name]) {
    const names = box.tools.map((t) => t.name).join(', ');
    return fail(`unknown tool "${call.name}". Available: ${names}`);
  }
  const problem = checkInput(tool, call.input as Record<string, unknown>);
  if (problem) return fail(problem);
  try {
    const content = capResult(await box.handlers[call.name](call.input, signal));
    return { type: 'tool_result', tool_use_id: call.id, content };
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
}

/**
 * A reply's content as the API will take it back. Another vendor's model may send a tool input
 * that is not an object ([] or null) or give two calls one id; stored as sent, they make every
 * later request fail with a 400. Such a call keeps its place with an empty input (runTool then
 * answers it with an error) or a fresh id. `earlier`: the conversation so far, whose ids count.
 */
export function validCalls<T extends { type: string }>(content: T[], earlier: MessageParam[]): T[] {
  const blocks = earlier.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
  const ids = new Set(blocks.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])));
  return content.map((block) => {
    if (block.type !== 'tool_use') return block;
    const call = block as unknown as ToolUseBlock;
    const { input } = call;
    const isObject = typeof input === 'object' && input !== null && !Array.isArray(input);
    let id = call.id;
    for (let n = 2; ids.has(id); n++) id = `${call.id}_${n}`;
    ids.add(id);
    if (isObject && id === call.id) return block;
    return { ...block, id, input: isObject ? input : {} };
  });
}

// Tools that only look. Several of them in one reply can run at once; anything that may change
// the workspace runs alone, in order: two edits of one file racing would each write over the other.
const READ_ONLY = new Set(['read_file', 'glob', 'grep']);

/** A call as you see it: `$ npm test` for bash, `> read_file src/a.ts, limit: 50` for others. */
function showCall(call: ToolUseBlock): string {
  const input = call.input as Record<string, unknown>;
  if (call.name === 'bash' && typeof input.command === 'string') return `$ ${input.command}`;
  // The first value is the path or the pattern; the others are named. Long values are cut,
  // newlines folded.
  const values = Object.entries(input).map(([name, value], i) => {
    const text = (typeof value === 'string' ? value : JSON.stringify(value)).replace(/\s+/g, ' ');
    const short = text.length > 60 ? `${text.slice(0, 60)}…` : text;
    return i === 0 ? short : `${name}: ${short}`;
  });
  return `> ${call.name} ${values.join(', ')}`;
}

export async function runToolCalls(calls: ToolUseBlock[], box: Toolbox, signal?: AbortSignal) {
  const results: ToolResultBlockParam[] = [];
  for (let i = 0; i < calls.length; ) {
    // NEW in s04: after Ctrl+C nothing more runs, and each call left still gets its result.
    if (signal?.aborted) {
      const notRun = (call: ToolUseBlock): ToolResultBlockParam => {
        const content = 'Error: not run: interrupted';
        return { type: 'tool_result', tool_use_id: call.id, content, is_error: true };
      };
      results.push(...calls.slice(i).map(notRun));
      break;
    }
    let j = i + 1;
    if (READ_ONLY.has(calls[i].name)) while (j < calls.length && READ_ONLY.has(calls[j].name)) j++;
    for (const call of calls.slice(i, j)) console.error(box.indent + paint(YELLOW, showCall(call)));
    // Side by side or alone, the results keep the order of the calls.
    const batch = calls.slice(i, j).map((call) => runTool(call, box, signal));
    results.push(...(await Promise.all(batch)));
    i = j;
  }
  return results;
}

