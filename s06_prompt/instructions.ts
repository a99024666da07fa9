/**
 * The project's instruction files (new in s06): AGENTS.md and CLAUDE.md from the repository root
 * down to the workspace, and yours in ~/.learn-agent-harness/AGENTS.md, within a budget.
 */
import { closeSync, constants, existsSync, fstatSync, openSync } from 'node:fs';
import { readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { head } from '../shared/text.ts';
import { paint, YELLOW } from '../shared/terminal.ts';
import { isBinary } from './files.ts';
import { kindOf, ROOT } from './workspace.ts';

const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md']; // CLAUDE.md: projects made for Claude Code
// Yours, for every project.
const USER_INSTRUCTIONS = join(os.homedir(), '.learn-agent-harness', 'AGENTS.md');
// Your home folder, with any symlinks on the way resolved (as ROOT is).
const HOME = existsSync(os.homedir()) ? realpathSync(os.homedir()) : os.homedir();
const FILE_BUDGET = 8_000; // characters of one instruction file…
const TOTAL_BUDGET = 20_000; // …and of all of them together (about 5,000 tokens)
const TOO_BIG = 1_000_000; // bytes: a file this big is not instructions; it is skipped

/**
 * The folders from the top down to here. The top is the repository root (the nearest folder with
 * `.git`) or, outside a repository, your home folder; a workspace under neither (/tmp/x, say) has
 * only its own files. The folders above may be anyone's: a CLAUDE.md another user left in /tmp is
 * not yours to follow.
 */
function foldersDownToHere(): string[] {
  const folders = [ROOT];
  while (!existsSync(join(folders[0], '.git')) && folders[0] !== HOME) {
    if (dirname(folders[0]) === folders[0]) return [ROOT]; // at /: no repository, not under home
    folders.unshift(dirname(folders[0]));
  }
  return folders;
}

/**
 * The instruction files that apply here, most general first: yours, then from the top down to
 * here. A file that cannot be used is skipped with a warning, once: `warned` holds the files
 * already warned about.
 */
function instructionFiles(warned: Set<string>): { path: string; text: string }[] {
  const inFolders = foldersDownToHere().flatMap((folder) => {
    return INSTRUCTION_FILES.map((name) => ({ path: join(folder, name), folder }));
  });
  const files: { path: string; text: string }[] = [];
  for (const { path, folder } of [{ path: USER_INSTRUCTIONS, folder: HOME }, ...inFolders]) {
    try {
      const text = readInstructionFile(path, folder);
      if (text !== undefined) files.push({ path, text });
    } catch (err) {
      if (warned.has(path)) continue;
      console.error(paint(YELLOW, `skipped instruction file ${path}: ${(err as Error).message}`));
      warned.add(path);
    }
  }
  return files;
}

/**
 * One instruction file's text, or undefined if there is none; a file that cannot be used throws,
 * saying why. The agent reads these on its own, so they get the suspicion read_file gives a path:
 * a cloned repository's CLAUDE.md can be a link to ~/.ssh/id_rsa, one in a shared folder can be
 * another user's, and reading a FIFO would wait for a writer forever.
 */
function readInstructionFile(path: string, folder: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return undefined; // not there: the usual case (or a link to nothing)
  }
  // A link can point anywhere: only a file inside the folder it was found in is read.
  if (!isInside(real, folder)) throw new Error(`it is a link to ${real}, outside ${folder}`);

  // O_NONBLOCK: even opening a FIFO returns at once; O_NOFOLLOW: no link put there since. Then ask
  // the open file what it is (fstat), so the checks are on the very file that is read.
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    throw new Error(`it cannot be read (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) return undefined; // a folder named AGENTS.md: not a file
    if (!info.isFile()) throw new Error(`it is a ${kindOf(info)}, not a regular file`);
    // Yours, or root's (a file the system put there); process.getuid is missing on Windows.
    const you = process.getuid?.() ?? info.uid;
    if (info.uid !== you && info.uid !== 0) {
      throw new Error(`it belongs to another user (uid ${info.uid})`);
    }
    if (info.size > TOO_BIG) throw new Error(`${info.size} bytes is too big for instructions`);
    const bytes = readFileSync(fd);
    if (isBinary(bytes)) throw new Error('it is not text');
    return bytes.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Is `path` inside `folder` (both real paths)? */
function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
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
