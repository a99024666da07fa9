/**
 * npm run demo <chapter> [-- <the chapter's flags>] — run a chapter on the sample project, demo/,
 * the way a reader runs it, without letting the agent touch the repo itself.
 *
 *   npm run demo s02                    a REPL in a copy of demo/; try: fix the failing test
 *   npm run demo s04 -- -c              the same copy again: continue its latest session
 *   npm run demo s02 -- --fresh         throw the copy away and start from a new one
 *
 * The first run of a chapter copies demo/ to <tmpdir>/lah-demo-<chapter>; later runs reuse that
 * copy, so what the agent changed (and s04's sessions, which are kept per folder) is still there.
 * The chapter then runs as `tsx <repo>/<chapter>/code.ts …` in the copy, with your terminal, and
 * its exit code is this script's.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIM, paint } from '../shared/terminal.ts';
import { REPO, chapters as chapterFolders } from '../tests/helpers/run-chapter.ts';

const DEMO = join(REPO, 'demo');
const TSX = join(REPO, 'node_modules', '.bin', 'tsx');

const chapters = chapterFolders();
function usage(problem?: string): never {
  if (problem) console.error(problem);
  console.error('Usage: npm run demo <chapter> [-- --fresh] [-- <the chapter\'s flags>]');
  console.error('  e.g. npm run demo s02, then type: fix the failing test');
  console.error(`Chapters: ${chapters.join(', ')}`);
  process.exit(2);
}

const [chapter, ...rest] = process.argv.slice(2);
if (!chapter || chapter === '-h' || chapter === '--help') usage();
const folder = chapters.find((d) => d === chapter || d.startsWith(`${chapter}_`));
if (!folder) usage(`There is no chapter "${chapter}".`);
const fresh = rest.includes('--fresh');
const args = rest.filter((arg) => arg !== '--fresh');

// One copy per chapter: s04's sessions and s05's transcripts belong to the folder they ran in.
const short = folder.slice(0, 3);
const copy = join(tmpdir(), `lah-demo-${short}`);
if (fresh) rmSync(copy, { recursive: true, force: true });
const reused = existsSync(copy);
if (!reused) cpSync(DEMO, copy, { recursive: true });
const how = reused ? 'the copy from before' : 'a fresh copy of demo/';
const again = `npm run demo ${short} -- --fresh starts over`;
console.error(paint(DIM, `[demo: working in ${copy}, ${how}; ${again}]`));

// The chapter reads .env from its working folder: point it at the repo's, where yours is.
const env = { ...process.env };
if (!env.DOTENV_CONFIG_PATH && existsSync(join(REPO, '.env'))) {
  env.DOTENV_CONFIG_PATH = join(REPO, '.env');
}
const child = spawn(TSX, [join(REPO, folder, 'code.ts'), ...args], {
  cwd: copy,
  env,
  stdio: 'inherit',
});

// Ctrl+C reaches the chapter from the terminal itself: it decides what the key does (s04 stops a
// turn, s01 exits). This script only waits for it; a signal meant for the script is passed on.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (err) => {
  console.error(`could not start the chapter: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  // Killed by a signal: exit as a shell reports it, 128 + its number.
  process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
});
