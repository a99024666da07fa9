/**
 * npm run demo <chapter> [-- <the chapter's flags>] — run a chapter on the sample project, demo/,
 * the way a reader runs it, without letting the agent touch the repo itself.
 *
 *   npm run demo s02                    a REPL in a copy of demo/; try: fix the failing test
 *   npm run demo s04 -- -c              the same copy again: continue its latest session
 *   npm run demo s02 -- --fresh         throw the copy and its sessions away; start anew
 *
 * The first run of a chapter copies demo/ to ~/.learn-agent-harness/demo/lah-demo-<chapter>; later
 * runs reuse that copy, so what the agent changed (and s04's sessions, which are kept per folder)
 * is still there. The copy is yours alone: it is where the agent runs tests and commands with your
 * rights and your key, so a copy that is a link, someone else's, or writable by others is refused
 * (a home that cannot hold it gives a private folder in TMPDIR instead, for that run only).
 * The chapter then runs in the copy, with your terminal, as `tsx <repo>/<chapter>/code.ts …` would
 * run it there (in this script's own process, under the tsx that runs it), and its exit code is
 * this script's.
 */
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DIM, paint } from '../shared/terminal.ts';
import { chapterCode, chapterFlags, chapterFolder, chapters, REPO } from './chapters.ts';

const DEMO = join(REPO, 'demo');
const UID = process.getuid?.(); // undefined on Windows: no owners or modes to check there

function usage(problem?: string): never {
  if (problem) console.error(problem);
  console.error('Usage: npm run demo <chapter> [-- --fresh] [-- <the chapter\'s flags>]');
  console.error('  e.g. npm run demo s02, then type: fix the failing test');
  console.error(`Chapters: ${chapters().join(', ')}`);
  process.exit(2);
}

/** The demo cannot start: one line, exit 2. */
function refuse(problem: string): never {
  console.error(problem);
  process.exit(2);
}

// ── The command line ──────────────────────────────────────────────────────────────────────────

const [chapter, ...rest] = process.argv.slice(2);
if (!chapter || chapter === '-h' || chapter === '--help') usage();
const folder = chapterFolder(chapter);
if (!folder) usage(`There is no chapter "${chapter}".`);
const short = folder.slice(0, 3);

// The chapter's own flags pass on; --fresh is the demo's. Anything else gets the demo's usage
// here, rather than the chapter's (which would say `npx tsx …`). --trace alone is --trace= (as in
// shared/cli.ts: parseArgs has no flag with an optional value).
const own = chapterFlags(folder); // undefined: its code.ts lists none we can read; all pass on
const options = { ...own, fresh: { type: 'boolean' as const } };
const parsed = (() => {
  const args = rest.map((arg) => (arg === '--trace' ? '--trace=' : arg));
  const strict = own !== undefined;
  try {
    return parseArgs({ args, options, strict, allowPositionals: !strict, tokens: true });
  } catch (err) {
    const { code, message } = err as { code?: string; message: string };
    const what = /'([^']*)'/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') usage(`${short} has no flag ${what}.`);
    if (code !== 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') usage(message);
    const example = `npm run demo ${short} -- -p "fix the failing test"`;
    usage(`Unexpected "${what}": the chapter's flags go after --, e.g. ${example}`);
  }
})();
const tokens = parsed.tokens ?? [];
const freshFlags = tokens.filter((t) => t.kind === 'option' && t.name === 'fresh');
const freshAt = new Set(freshFlags.map((t) => t.index));
// The chapter's, as given; but a --trace=<file> is named from where you typed npm run demo (npm
// says so in INIT_CWD), not from the copy the chapter runs in, where the agent would list it and
// --fresh delete it.
const from = process.env.INIT_CWD ?? process.cwd();
const args = rest.flatMap((arg, i) => {
  if (freshAt.has(i)) return [];
  const trace = tokens.find((t) => t.index === i && t.kind === 'option' && t.name === 'trace');
  const file = trace?.kind === 'option' ? trace.value?.trim() : undefined;
  return file ? [`--trace=${resolve(from, file)}`] : [arg];
});
// `npm run demo s01 --fresh`, without --, gives npm the flag: it keeps it as npm_config_fresh.
const npmFresh = process.env.npm_config_fresh;
delete process.env.npm_config_fresh; // not for the chapter's commands (npm warns of it)
const fresh = parsed.values.fresh === true || (!!npmFresh && npmFresh !== 'false');

// ── Where the copy lives ──────────────────────────────────────────────────────────────────────

/**
 * Why a folder cannot be trusted with the copy, or undefined. From lstat: a link is refused, not
 * followed. `writable` is the mode bits no one but you may have (group and others: 0o022).
 */
function distrust(path: string, st: Stats, writable = 0o022): string | undefined {
  if (st.isSymbolicLink()) return `${path} is a symbolic link`;
  if (!st.isDirectory()) return `${path} is not a folder`;
  if (UID !== undefined && st.uid !== UID) {
    return `${path} belongs to uid ${st.uid}, not to you (uid ${UID})`;
  }
  if (UID !== undefined && st.mode & writable) {
    return `${path} can be written by others (mode ${(st.mode & 0o777).toString(8)})`;
  }
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code ?? String(err);
const isInside = (folder: string, path: string) => !relative(folder, path).startsWith('..');

/**
 * ~/.learn-agent-harness/demo, made yours alone (0700), with nothing on the way that is not yours;
 * or, when your home cannot hold it (missing, not yours, read-only), a new private folder in
 * TMPDIR, which is not kept for the next run: `why` says so.
 */
function demoFolder(): { at: string; why?: string } {
  const home = homedir();
  const problem = homeProblem(home);
  if (problem) return privateFolder(problem);
  let at = home;
  for (const name of ['.learn-agent-harness', 'demo']) {
    at = join(at, name);
    try {
      mkdirSync(at, { mode: 0o700 });
    } catch (err) {
      if (code(err) !== 'EEXIST') return privateFolder(`${at} cannot be made (${code(err)})`);
    }
    const wrong = distrust(at, lstatSync(at));
    if (wrong) refuse(`${wrong}: the demo keeps its copy in it, so it stops here.`);
  }
  return { at };
}

/** Why your home cannot hold the demo's folder, or undefined. */
function homeProblem(home: string): string | undefined {
  if (!isAbsolute(home)) return `HOME (${home}) is not an absolute path`;
  let st: Stats;
  try {
    st = statSync(home); // followed: the home may be a link (/home → /usr/home)
  } catch {
    return `your home folder (${home}) is not there`;
  }
  if (isInside(REPO, home)) return `${home} is in the repo`;
  // It may be writable by your group (a group of your own, on some systems); not by others.
  return distrust(home, st, 0o002);
}

function privateFolder(why: string): { at: string; why: string } {
  const base = resolve(tmpdir());
  const where = `TMPDIR (${base})`;
  if (isInside(REPO, base)) refuse(`${why}, and ${where} is inside the repo: no place for a copy.`);
  try {
    return { at: mkdtempSync(join(base, 'lah-demo-')), why }; // mkdtemp makes it 0700
  } catch (err) {
    refuse(`${why}, and no private folder can be made in ${base} either (${code(err)}).`);
  }
}

// ── Making the copy, or taking the one from before ────────────────────────────────────────────
//
// Several runs of one chapter may start at once, and one may still be at work in the copy (a REPL
// left open) when another asks for --fresh. So: a run holds <copy>.lock while it makes or checks
// the copy, and leaves <copy>.used-by-<pid> beside it while the chapter runs. --fresh refuses to
// pull a copy from under a run that is still alive.

const place = demoFolder();
const name = `lah-demo-${short}`;
const copy = join(place.at, name);
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return code(err) === 'EPERM';
  }
};

/** Hold <copy>.lock for `work`. A lock whose process is gone (killed mid-copy) is taken over. */
function withLock<T>(work: () => T): T {
  const lock = `${copy}.lock`;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const unlock = () => rmSync(lock, { force: true });
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if (code(err) !== 'EEXIST') throw err;
    }
    const holder = Number(readLock(lock)); // '' while its maker writes it: alive
    if (holder && !isAlive(holder)) rmSync(lock, { force: true });
    else if (tries < 200) Atomics.wait(pause, 0, 0, 50); // a copy takes milliseconds
    else refuse(`${lock} is held by pid ${holder} for 10 s now; with no npm run demo, remove it.`);
  }
  process.on('exit', unlock); // refuse() exits without running the finally below
  try {
    return work();
  } finally {
    unlock();
    process.off('exit', unlock);
  }
}

function readLock(lock: string): string {
  try {
    return readFileSync(lock, 'utf8');
  } catch {
    return ''; // gone meanwhile: try again
  }
}

/** The other live processes using the copy: npm run demo runs, and chapters holding a session. */
function users(sessions: string): number[] {
  const mark = `${name}.used-by-`;
  const pids = readdirSync(place.at).flatMap((entry) => {
    if (!entry.startsWith(mark)) return [];
    const pid = Number(entry.slice(mark.length));
    if (isAlive(pid)) return [pid];
    rmSync(join(place.at, entry), { force: true }); // a run that was killed left it
    return [];
  });
  // s04 and later lock the session they append to (session.ts), also when started by hand here.
  const locks = readdirSafe(sessions).filter((entry) => entry.endsWith('.lock'));
  for (const lock of locks) pids.push(Number(readLock(join(sessions, lock))));
  return [...new Set(pids)].filter((pid) => pid && pid !== process.pid && isAlive(pid));
}

const readdirSafe = (path: string) => {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
};

// From s04 on, sessions are kept per folder in your home, named after the folder's real path
// (SESSIONS in s04_session/session.ts): a new copy at the same path would find the old ones,
// and -c would go on from a conversation about files the new copy does not have.
function sessionsOf(path: string): string {
  const real = join(realpathSync(dirname(path)), basename(path));
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 8);
  return join(homedir(), '.learn-agent-harness', 'sessions', `${basename(real)}-${hash}`);
}

/** --fresh: remove the copy, if it is yours, never following a link; then its sessions. */
function startOver(): void {
  const sessions = sessionsOf(copy);
  const others = users(sessions);
  if (others.length) {
    const who = `pid ${others.join(', ')} (npm run demo ${short}, or a chapter run there)`;
    refuse(`${copy} is in use by ${who}: --fresh would pull it from under it; leave that first.`);
  }
  let st: Stats | undefined;
  try {
    st = lstatSync(copy);
  } catch {}
  if (st && UID !== undefined && st.uid !== UID) {
    refuse(`${copy} belongs to uid ${st.uid}, not to you: --fresh leaves it alone.`);
  }
  if (st?.isDirectory()) {
    // Out of the way first, in one step: no run ever sees half a copy at the copy's path.
    const old = `${copy}.old-${process.pid}`;
    rmSync(old, { recursive: true, force: true }); // left by a killed run with our pid
    renameSync(copy, old);
    rmSync(old, { recursive: true, force: true });
  } else if (st) rmSync(copy); // a file or a link of yours: the link itself, not what it names
  rmSync(sessions, { recursive: true, force: true });
}

/** The copy from before, checked; or a new one, which appears whole (made aside, then renamed). */
function takeCopy(): boolean {
  let st: Stats | undefined;
  try {
    st = lstatSync(copy);
  } catch {}
  if (st) {
    const wrong = distrust(copy, st);
    const mine = UID === undefined || st.uid === UID;
    const hint = mine ? `npm run demo ${short} -- --fresh replaces it` : 'not yours to remove';
    if (wrong) refuse(`${wrong}: not used; ${hint}.`);
    return false;
  }
  const making = `${copy}.new-${process.pid}`;
  rmSync(making, { recursive: true, force: true }); // left by a killed run with our pid
  // Never a .env: the chapter must not find one in the folder it runs in (see below).
  const filter = (source: string) => !/^\.env(\.|$)/.test(basename(source));
  cpSync(DEMO, making, { recursive: true, filter });
  chmodSync(making, 0o700);
  renameSync(making, copy);
  return true;
}

/** The copy, made or checked under the lock, and this run marked as using it; then go in. */
function enterCopy(): boolean {
  try {
    // A private folder of this run's own has nothing to share: no lock, no mark.
    const made = place.why ? takeCopy() : withLock(() => {
      if (fresh) startOver();
      const isNew = takeCopy();
      const mark = join(place.at, `${name}.used-by-${process.pid}`);
      writeFileSync(mark, '', { mode: 0o600 });
      process.on('exit', () => rmSync(mark, { force: true }));
      return isNew;
    });
    process.chdir(copy);
    return made;
  } catch (err) {
    refuse(`The demo's copy of demo/ could not be made in ${place.at}: ${(err as Error).message}`);
  }
}

const made = enterCopy();
const how = made ? 'a fresh copy of demo/' : 'the copy from before';
const again = `; npm run demo ${short} -- --fresh starts over`;
const note = place.why ? ` (not kept: ${place.why})` : again;
console.error(paint(DIM, `[demo: working in ${copy}, ${how}${note}]`));

// The chapter reads .env from its working folder: the copy, where the agent writes (and where
// anyone who could write would plant ANTHROPIC_BASE_URL, to get your key, or BASH_ENV). Point it
// at the repo's .env, where yours is; if there is none, dotenv quietly loads nothing.
const dotenv = process.env.DOTENV_CONFIG_PATH;
process.env.DOTENV_CONFIG_PATH = dotenv ? resolve(from, dotenv) : join(REPO, '.env');

// The command that runs this chapter again, for the chapter's hints (runAgain in shared/cli.ts):
// `npx tsx <chapter>/code.ts -r 1f0c` would run it elsewhere, not in the copy with its sessions.
process.env.LAH_DEMO_COMMAND = `npm run demo ${short} --`;

// Run the chapter in this process, as `tsx <chapter>/code.ts …` started in the copy would run it:
// this script already runs under tsx, and a second tsx (its own node processes, its own loader)
// would add about half a second to every start. The chapter takes its working folder from
// process.cwd(), its flags from process.argv, and runs its main() only when it is process.argv[1]
// (see isEntryPoint in shared/cli.ts). Ctrl+C, its exit code and any uncaught error are then the
// chapter's own, exactly as under tsx.
const entry = chapterCode(folder);
process.argv = [process.argv[0], entry, ...args];
await import(pathToFileURL(entry).href);
