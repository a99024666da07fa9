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
}

export const isFixPrompt = (text: string) => /\bfix\b.*\b(?:failing|broken)\s+tests?\b/i.test(text);
export const isContinuePrompt = (text: string) =>
  /^(?:please\s+)?(?:continue|go on|carry on|keep going|resume)\b[\s.!]*$/i.test(text.trim());

/**
 * "Find where `lineTotal` is defined (…from src/discounts.js)", "where is lineTotal computed?":
 * the name, and the file it is said to be in, if the prompt names one.
 */
export function readFindPrompt(text: string): { name: string; hint?: string } | undefined {
  const verbs = 'defined|computed|declared|implemented|calculated';
  const identifier = `\`?([A-Za-z_$][\\w$]*)\`?`;
  const name = text.match(
    new RegExp(`\\bwhere\\b\\W*(?:is\\s+)?${identifier}\\s+(?:is\\s+)?(?:${verbs})\\b`, 'i'),
  )?.[1];
  if (!name || /^(?:it|this|that|the)$/i.test(name)) return undefined;
  const hint = text.match(/\b(?:from|in)\s+`?((?:[\w.-]+\/)*[\w.-]+\.[cm]?[jt]s)\b/)?.[1];
  return { name, hint };
}

const kindOf = (text: string): TaskKind | 'continue' | 'other' => {
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
      if (entry.kind === 'note' && entry.final) owner.done = true;
      continue;
    }
    const kind = kindOf(entry.text);
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
