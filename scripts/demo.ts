/**
 * npm run demo <chapter> [-- <the chapter's flags>] — run a chapter on the sample project, demo/,
 * the way a reader runs it, without letting the agent touch the repo itself.
 *
 *   npm run demo s02                    a REPL in a copy of demo/; try: fix the failing test
 *   npm run demo s04 -- -c              the same copy again: continue its latest session
 *   npm run demo s02 -- --fresh         throw the copy and its sessions away; start anew
 *
 * The first run of a chapter copies demo/ to <tmpdir>/lah-demo-<chapter>; later runs reuse that
 * copy, so what the agent changed (and s04's sessions, which are kept per folder) is still there.
 * The chapter then runs in the copy, with your terminal, as `tsx <repo>/<chapter>/code.ts …` would
 * run it there (in this script's own process, under the tsx that runs it), and its exit code is
 * this script's.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, realpathSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIM, paint } from '../shared/terminal.ts';
import { chapterCode, chapterFolder, chapters, REPO } from './chapters.ts';

const DEMO = join(REPO, 'demo');

function usage(problem?: string): never {
  if (problem) console.error(problem);
  console.error('Usage: npm run demo <chapter> [-- --fresh] [-- <the chapter\'s flags>]');
  console.error('  e.g. npm run demo s02, then type: fix the failing test');
  console.error(`Chapters: ${chapters().join(', ')}`);
  process.exit(2);
}

const [chapter, ...rest] = process.argv.slice(2);
if (!chapter || chapter === '-h' || chapter === '--help') usage();
const folder = chapterFolder(chapter);
if (!folder) usage(`There is no chapter "${chapter}".`);
const fresh = rest.includes('--fresh');
const args = rest.filter((arg) => arg !== '--fresh');

// One copy per chapter: s04's sessions and s05's transcripts belong to the folder they ran in.
const short = folder.slice(0, 3);
const copy = join(tmpdir(), `lah-demo-${short}`);
if (fresh) {
  rmSync(copy, { recursive: true, force: true });
  // From s04 on, sessions are kept per folder in your home, named after the folder's real path
  // (SESSIONS in s04_session/session.ts): a new copy at the same path would find the old ones,
  // and -c would go on from a conversation about files the new copy does not have.
  const real = join(realpathSync(dirname(copy)), basename(copy));
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 8);
  const sessions = join(homedir(), '.learn-agent-harness', 'sessions', `${basename(real)}-${hash}`);
  rmSync(sessions, { recursive: true, force: true });
}
const reused = existsSync(copy);
if (!reused) cpSync(DEMO, copy, { recursive: true });
const how = reused ? 'the copy from before' : 'a fresh copy of demo/';
const again = `npm run demo ${short} -- --fresh starts over`;
console.error(paint(DIM, `[demo: working in ${copy}, ${how}; ${again}]`));

// The chapter reads .env from its working folder: point it at the repo's, where yours is.
if (!process.env.DOTENV_CONFIG_PATH && existsSync(join(REPO, '.env'))) {
  process.env.DOTENV_CONFIG_PATH = join(REPO, '.env');
}

// Run the chapter in this process, as `tsx <chapter>/code.ts …` started in the copy would run it:
// this script already runs under tsx, and a second tsx (its own node processes, its own loader)
// would add about half a second to every start. The chapter takes its working folder from
// process.cwd(), its flags from process.argv, and runs its main() only when it is process.argv[1]
// (see isEntryPoint in shared/cli.ts). Ctrl+C, its exit code and any uncaught error are then the
// chapter's own, exactly as under tsx.
const code = chapterCode(folder);
process.chdir(copy);
process.argv = [process.argv[0], code, ...args];
await import(pathToFileURL(code).href);
