/**
 * The project's instruction files (new in s06): AGENTS.md and CLAUDE.md from the repository root
 * down to the workspace, and yours in ~/.learn-agent-harness/AGENTS.md, within a budget.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { head } from '../shared/text.ts';
import { paint, YELLOW } from '../shared/terminal.ts';
import { isBinary } from './files.ts';
import { ROOT } from './workspace.ts';

const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md']; // CLAUDE.md: projects made for Claude Code
// Yours, for every project.
const USER_INSTRUCTIONS = join(os.homedir(), '.learn-agent-harness', 'AGENTS.md');
const FILE_BUDGET = 8_000; // characters of one instruction file…
const TOTAL_BUDGET = 20_000; // …and of all of them together (about 5,000 tokens)
const TOO_BIG = 1_000_000; // bytes: a file this big is not instructions; it is skipped

/** The folders from the repository root (outside one, the filesystem root) down to here. */
function foldersDownToHere(): string[] {
  const folders = [ROOT];
  while (dirname(folders[0]) !== folders[0] && !existsSync(join(folders[0], '.git'))) {
    folders.unshift(dirname(folders[0]));
  }
  return folders;
}

/**
 * The instruction files that apply here, most general first: yours, then from the root down to
 * here. A file that cannot be used is skipped with a warning, once: `warned` holds the files
 * already warned about.
 */
function instructionFiles(warned: Set<string>): { path: string; text: string }[] {
  const inFolders = foldersDownToHere().flatMap((folder) => {
    return INSTRUCTION_FILES.map((name) => join(folder, name));
  });
  const files: { path: string; text: string }[] = [];
  for (const path of [USER_INSTRUCTIONS, ...inFolders]) {
    let info: Stats;
    try {
      info = statSync(path);
    } catch {
      continue; // not there: the usual case
    }
    const warn = (why: string) => {
      if (warned.has(path)) return;
      console.error(paint(YELLOW, `skipped instruction file ${path}: ${why}`));
      warned.add(path);
    };
    if (!info.isFile()) continue;
    if (info.size > TOO_BIG) {
      warn(`${info.size} bytes is too big for instructions`);
      continue;
    }
    const bytes = readFileSync(path);
    if (isBinary(bytes)) warn('it is not text');
    else files.push({ path, text: bytes.toString('utf8') });
  }
  return files;
}

/**
 * The project's instructions, within the budget: a prompt section, or undefined if there are
 * none. The nearest file is the most specific, so the budget is spent from the nearest outwards:
 * it stays whole, and a cut falls on the more general files. A cut is marked where it happens,
 * never silent. The nearest comes last, so it reads as the final word.
 */
export function projectInstructions(warned: Set<string>) {
  const files = instructionFiles(warned);
  if (files.length === 0) return undefined;
  let left = TOTAL_BUDGET;
  const shown = [...files].reverse().map(({ path, text }) => {
    const room = Math.max(0, Math.min(FILE_BUDGET, left));
    left -= Math.min(text.length, room);
    const kept = head(text, room); // never half a character: the API would refuse the prompt
    const bytes = Buffer.byteLength(text) - Buffer.byteLength(kept);
    const cut = text.length > room ? `\n[… ${bytes} bytes cut]` : '';
    return `## ${path}\n${kept.trimEnd()}${cut}`;
  });
  const intro =
    'The project’s instruction files follow, most general first. Follow their conventions for ' +
    'this project; the user’s requests come first, and the working rules above still apply.';
  const source = files.map((file) => file.path).join(', ');
  const text = `${intro}\n\n${shown.reverse().join('\n\n')}`;
  return { title: 'Project instructions', source, text };
}
