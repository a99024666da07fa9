/**
 * Where the repo is, and its chapter folders: what the scripts a reader runs (npm run demo,
 * npm run check, …) and the tests both need.
 *
 * It imports nothing but node's own modules, on purpose: `npm run demo` loads it at every start,
 * in the process the chapter then runs in, and taking these from the test helpers instead
 * (tests/helpers/run-chapter.ts, which re-exports REPO, chapters and chapterCode for the tests)
 * would load the fake API and esbuild there too.
 *
 *   chapters()            ['s01_agent_loop', 's02_tools', …]
 *   chapterFolder('s02')  's02_tools' (or undefined: there is no such chapter)
 *   chapterCode('s02')    '<repo>/s02_tools/code.ts' (or it throws)
 *   chapterFlags('s04_session')  { prompt: { type: 'string', short: 'p' }, continue: …, … }
 *   EDITIONS              ['README.md', 'README.zh.md', 'README.ja.md']
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The editions of every README, English first: each README.md has the other two beside it. */
export const EDITIONS = ['README.md', 'README.zh.md', 'README.ja.md'];

/** The chapter folders, e.g. ['s01_agent_loop', 's02_tools']. */
export function chapters(): string[] {
  const folders = readdirSync(REPO).filter((d) => /^s\d\d_/.test(d));
  return folders.filter((d) => existsSync(join(REPO, d, 'code.ts'))).sort();
}

/** `s01` or `s01_agent_loop` → `s01_agent_loop`; undefined if no chapter folder matches. */
export function chapterFolder(chapter: string): string | undefined {
  return chapters().find((d) => d === chapter || d.startsWith(`${chapter}_`));
}

/** `s01` or `s01_agent_loop` → absolute path of that chapter's code.ts. */
export function chapterCode(chapter: string): string {
  const dir = chapterFolder(chapter);
  if (!dir) {
    const there = chapters().join(', ');
    throw new Error(`No chapter folder with a code.ts matches "${chapter}" (there are: ${there})`);
  }
  return join(REPO, dir, 'code.ts');
}

type Flag = { type: 'string' | 'boolean'; short?: string };

/**
 * The flags a chapter takes: the `flags` its code.ts gives parseFlags (shared/cli.ts), read from
 * the file as it is now (an exercise may add one: --max-rounds in s01), plus -h and --trace, which
 * every chapter has. `npm run demo` passes these on, and refuses any other with its own usage.
 * Undefined when code.ts has no `const flags = { … } as const;` to read: then all are passed on.
 */
export function chapterFlags(folder: string, root = REPO): Record<string, Flag> | undefined {
  const code = readFileSync(join(root, folder, 'code.ts'), 'utf8');
  const block = /^ *const flags = \{\n((?: .*\n)*?) *\} as const;/m.exec(code)?.[1];
  if (block === undefined) return undefined;
  // `    prompt: { type: 'string', short: 'p' },` or `    'max-rounds': { type: 'string' },`
  const line = /^ *'?([\w-]+)'?: \{ type: '(string|boolean)'(?:, short: '(\w)')? \}/gm;
  const flags: Record<string, Flag> = {};
  for (const [, name, type, short] of block.matchAll(line)) {
    flags[name] = short ? { type: type as Flag['type'], short } : { type: type as Flag['type'] };
  }
  return { ...flags, help: { type: 'boolean', short: 'h' }, trace: { type: 'string' } };
}
