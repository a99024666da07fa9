/**
 * The command line every chapter shares (s01–s06; shared runtime, not a chapter's mechanism): flags
 * and usage, exit codes, the REPL's prompt, the check for a terminal, a reader who stops listening.
 *
 * Exit codes: 0 done, 1 the API failed or no final answer came (-p), 2 wrong usage (from s04 also:
 * a session that cannot be opened), 130 interrupted (Ctrl+C).
 */
import { realpathSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CYAN, paint } from './terminal.ts';
import { startTrace } from './trace.ts';

type Flags = Record<string, { type: 'string' | 'boolean'; short?: string }>;
const HELP = { help: { type: 'boolean', short: 'h' } } as const;
const TRACE = { trace: { type: 'string' } } as const; // every chapter's, with -h: shared/trace.ts
type Value<T> = T extends { type: 'string' } ? string : boolean;
type Values<F extends Flags> = { [K in keyof F]?: Value<F[K]> };

// What -h adds to every chapter's usage: how to leave the REPL (readPrompts, below), and what every
// chapter reads from the environment or from .env. A chapter's own are in its USAGE.
const TRACE_HELP = '  --trace[=<file>]     record every API request and reply for: npm run inspect';
const COMMON_HELP = `In the REPL: exit, quit, q, /exit, /quit or Ctrl+D (on an empty line) leaves. Ctrl+Z at the
prompt suspends (fg resumes); during a turn it is ignored.
Environment (or .env):
  ANTHROPIC_API_KEY    your key (or ANTHROPIC_AUTH_TOKEN); none: the offline demo model answers
  ANTHROPIC_BASE_URL   an Anthropic-compatible endpoint instead of Anthropic's
  MODEL_ID             the model to ask
  API_TIMEOUT_SECONDS  give up on a response that has not begun after this long (default 120)
  STREAM_IDLE_SECONDS  give up on a reply that sends nothing for this long (default 90)
  NO_COLOR             no colour on the terminal
  LAH_DEMO_COMMAND     the command that runs it again, for its hints (npm run demo sets it)`;

/**
 * The flags given, plus -h/--help; undefined after -h has printed the usage. Wrong usage (an
 * unknown flag, -p without its text, an empty value) prints what is wrong and the usage, and exits
 * 2. From here on, a reader who stops listening (`code.ts … | head -1`) ends the program quietly.
 */
export function parseFlags<const F extends Flags>(flags: F, usage: string): Values<F> | undefined {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
  });
  // --trace alone is --trace= (the default file): parseArgs has no flag with an optional value.
  const args = process.argv.slice(2).map((arg) => (arg === '--trace' ? '--trace=' : arg));
  let values: Values<F & typeof HELP & typeof TRACE>;
  try {
    const options = { ...flags, ...HELP, ...TRACE };
    values = parseArgs({ args, options }).values as Values<F & typeof HELP & typeof TRACE>;
  } catch (err) {
    return usageError((err as Error).message, usage);
  }
  for (const [name, value] of Object.entries(values)) {
    const short = flags[name]?.short;
    const flag = short ? `-${short}` : `--${name}`;
    const empty = typeof value === 'string' && !value.trim() && name !== 'trace';
    if (empty) usageError(`${flag} needs a value.`, usage);
  }
  const chapter = /(s\d\d\w*)\/code\.ts/.exec(usage)?.[1] ?? 'agent'; // the usage names it
  if (!values.help && values.trace !== undefined) startTrace(values.trace.trim(), chapter);
  if (!values.help) return values;
  // --trace goes with the chapter's own options: after the last of them.
  const lines = usage.split('\n');
  lines.splice(lines.findLastIndex((line) => /^ {2}-/.test(line)) + 1, 0, TRACE_HELP);
  console.log(`${lines.join('\n')}\n${COMMON_HELP}`);
  return undefined;
}

/** Wrong usage: say what is wrong, show the usage, exit 2. */
export function usageError(problem: string, usage: string): never {
  console.error(`${problem}\n${usage}`);
  process.exit(2);
}

/** The REPL reads from a terminal; without one (piped input, CI) only -p works. */
export function requireTerminal(): void {
  if (process.stdin.isTTY) return;
  console.error('The REPL needs a terminal. Without one, use: code.ts -p "<prompt>"');
  process.exit(2);
}

/**
 * The prompts typed at the REPL, trimmed, one at a time (empty lines skipped). They end when the
 * reader leaves: exit, quit (or q, /exit, /quit), or Ctrl+D on an empty line. Ctrl+C at the prompt
 * exits with 130; Ctrl+Z at the prompt suspends (fg resumes); Up and Down recall earlier prompts.
 * Between prompts (a turn, a REPL command), Ctrl+C is sent to this process as SIGINT, which the
 * chapters listen for; Ctrl+Z is dropped (a job stopped mid-turn would stop by surprise when the
 * turn ends); other keys wait for the next prompt, a line at a time.
 * The terminal stays in raw mode from the first prompt to the last: Ctrl+C is a key read here, and
 * tsx never sees it (else one press could land twice, or kill the agent: shared/README.md).
 */
export async function* readPrompts(label: string): AsyncGenerator<string> {
  const keyboard = new PassThrough(); // the keys readline sees: those typed at the prompt
  const rl = createInterface({ input: keyboard, output: process.stdout, terminal: true });
  rl.setPrompt(paint(CYAN, label));
  rl.on('SIGINT', () => {
    process.stdout.write('\n');
    process.exit(130);
  });
  rl.on('SIGTSTP', () => suspend(() => rl.prompt(true)));
  let atPrompt = false;
  let held = ''; // typed between prompts
  const onKeys = (keys: string) => {
    if (atPrompt) keyboard.write(keys);
    else if (keys.includes('\x03')) process.kill(process.pid, 'SIGINT'); // to this process only
    else held += keys.replaceAll('\x1a', ''); // Ctrl+Z
  };
  const hungUp = () => keyboard.end(); // the terminal is gone: as Ctrl+D on an empty line
  process.stdin.setRawMode(true);
  process.stdin.setEncoding('utf8').on('data', onKeys).on('end', hungUp).on('error', hungUp);
  process.stdin.resume();
  const lines = rl[Symbol.asyncIterator](); // keeps the lines typed (or pasted) ahead
  try {
    for (;;) {
      rl.prompt(true); // true: the cursor stays after what is typed already
      atPrompt = true;
      // One line of what was typed meanwhile (`typed ahead⏎partial`); the rest waits its turn.
      const ahead = /^[^\r\n]*[\r\n]?/.exec(held)![0];
      held = held.slice(ahead.length);
      if (keyboard.writable) keyboard.write(ahead); // not after hungUp
      const { value, done } = await lines.next();
      atPrompt = false;
      if (done) return; // Ctrl+D: the end of input
      const line = value.trim();
      if (['exit', 'quit', 'q', '/exit', '/quit'].includes(line.toLowerCase())) return;
      if (line) yield line;
    }
  } finally {
    process.stdin.off('data', onKeys).off('end', hungUp).off('error', hungUp).pause();
    process.stdin.setRawMode(false);
    rl.close();
  }
}

/**
 * Ctrl+Z: stop the whole job (under `npx tsx`, tsx too), as the terminal does; then `resumed`,
 * once `fg` resumes it, or at once where the system drops the stop (`sh -c`, `script`, PID 1).
 */
function suspend(resumed: () => void): void {
  process.stdin.setRawMode(false);
  process.kill(0, 'SIGTSTP'); // 0: this process group
  process.stdin.setRawMode(true);
  resumed();
}

/** The command that runs `code` (s04_session/code.ts) again, with `args`; or npm run demo's. */
export const runAgain = (code: string, args: string) =>
  `${process.env.LAH_DEMO_COMMAND ?? `npx tsx ${code}`} ${args}`; // see COMMON_HELP

/** Is the module at `url` (pass import.meta.url) the program that was started? */
export function isEntryPoint(url: string): boolean {
  // Node names a module by its real path, and the checkout may be reached through a symlink.
  const program = process.argv[1] ? realpathSync(process.argv[1]) : '';
  return url === pathToFileURL(program).href;
}
