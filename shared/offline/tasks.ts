/**
 * Which task the offline demo model is on: the tasks it knows, told apart by their prompt, and
 * `continue`, which picks up the latest one left unfinished (a turn stopped by Ctrl+C, a session
 * killed mid-turn, or a summary that says so).
 */
import type { Entry } from './conversation.ts';

export type TaskKind = 'fix' | 'find';

/** The tasks, as the banner and the answer to anything else list them. */
export const DEMO_TASKS: [prompt: string, what: string][] = [
  ['fix the failing test', 'run the tests, find the bug, fix it, check'],
  ['continue', 'go on with a task that was interrupted'],
  ['find where <name> is defined', 'search, read, report the code'],
];

export interface Task {
  kind: TaskKind;
  prompt: string;
  /** Everything after the prompt that belongs to the task: its notes and calls, across turns. */
  entries: Entry[];
  /** An answer ended it. */
  done: boolean;
  /** That answer: the task may have stopped short of what it asked (a repo it leaves alone). */
  answer?: string;
}

/**
 * Longer than this, a prompt is neither a task nor a command, and the model says so in one line:
 * a 512 KB paste is no request it can play, and it must not cost more than a glance.
 */
export const MAX_PROMPT = 10_000;

const COMMAND = /^(?:run|read|list|find|search|write|edit|delegate|compact|history|prompt)\b/i;

/** Whether a prompt is a command of the language: its first word is one. */
export const isCommand = (prompt: string) => COMMAND.test(prompt);

// Every pattern below runs on your prompts, and on all of them again in every request: each one
// must take time in proportion to the text (no `.*` between two words, no `\s+` before a word that
// may not come), or a long paste would freeze the chapter.
const FIX = /\bfix\b/i;
const FAILING_TESTS = /\b(?:failing|broken)\s+tests?\b/i;
// "do not fix", "don't fix", "I do not want you to fix": in the words just before "fix".
const NEGATION = /\b(?:not|never|without|dont|no\s+need)\b|n['’]t\b/i;

/**
 * "fix the failing test": the fix task; "do not fix the failing tests, …": a request not to
 * start it (answered with what the model can do instead); anything else: undefined.
 */
export function readFixPrompt(text: string): 'fix' | 'do not fix' | undefined {
  const at = text.search(FIX);
  if (at === -1 || !FAILING_TESTS.test(text.slice(at))) return undefined;
  // The clause before "fix": "The tests don't pass. Fix the failing test" is still the task.
  const clause = text.slice(Math.max(0, at - 80), at).split(/[.!?;,:\n]/).at(-1)!;
  return NEGATION.test(clause) ? 'do not fix' : 'fix';
}
export const isFixPrompt = (text: string) => readFixPrompt(text) === 'fix';
export const isContinuePrompt = (text: string) =>
  /^(?:please\s+)?(?:continue|go on|carry on|keep going|resume)\b[\s.!]*$/i.test(text.trim());

/**
 * "Find where `lineTotal` is defined (…from src/discounts.js)", "where is lineTotal computed?":
 * the name, and the file it is said to be in, if the prompt names one.
 */
export function readFindPrompt(text: string): { name: string; hint?: string } | undefined {
  const verbs = 'defined|computed|declared|implemented|calculated';
  const identifier = `\`?([A-Za-z_$][\\w$]*)\`?`;
  // Between "where" and the name, anything but the name's own characters: `\W*` took the `$` of
  // "where $ is defined" and left "is" for the name.
  const name = text.match(
    new RegExp(`\\bwhere\\b[^\\w$\`]*(?:is\\s+)?${identifier}\\s+(?:is\\s+)?(?:${verbs})\\b`, 'i'),
  )?.[1];
  if (!name || /^(?:it|this|that|the)$/i.test(name)) return undefined;
  const hint = text.match(/\b(?:from|in)\s+`?((?:[\w.-]+\/)*[\w.-]+\.[cm]?[jt]s)\b/)?.[1];
  return { name, hint };
}

/** What a prompt asks for: one of the tasks, to continue one, or something else (a command). */
export const taskKind = (text: string): TaskKind | 'continue' | 'other' => {
  if (text.length > MAX_PROMPT) return 'other';
  // A command is that command, whatever it says after its first word ("write notes.txt: fix
  // the broken test tomorrow"); "find where <name> is defined" is the task the banner lists.
  if (isCommand(text) && !/^find\s+where\b/i.test(text)) return 'other';
  if (isFixPrompt(text)) return 'fix';
  if (readFindPrompt(text)) return 'find';
  return isContinuePrompt(text) ? 'continue' : 'other';
};

export type Current =
  | { kind: 'task'; task: Task; continued: boolean }
  | { kind: 'nothing to continue'; last?: Task }
  | { kind: 'other'; prompt?: string };

/** The task of the latest prompt: its own, the one it continues, or none (a command). */
export function currentTask(entries: Entry[]): Current {
  const tasks: Task[] = [];
  let current: Current = { kind: 'other' };
  let owner: Task | undefined; // whose turn it is: the entries that follow belong to it
  for (const entry of entries) {
    if (entry.kind !== 'prompt') {
      if (!owner) continue;
      owner.entries.push(entry);
      if (entry.kind === 'note' && entry.final) [owner.done, owner.answer] = [true, entry.text];
      continue;
    }
    const kind = taskKind(entry.text);
    if (kind === 'fix' || kind === 'find') {
      owner = { kind, prompt: entry.text, entries: [], done: false };
      tasks.push(owner);
      current = { kind: 'task', task: owner, continued: false };
    } else if (kind === 'continue') {
      owner = tasks.findLast((task) => !task.done);
      current = owner
        ? { kind: 'task', task: owner, continued: true }
        : { kind: 'nothing to continue', last: tasks.at(-1) };
    } else {
      owner = undefined;
      current = { kind: 'other', prompt: entry.text };
    }
  }
  return current;
}
