/**
 * `npm run demo` on a machine shared with someone hostile (issue 32): the copy of demo/ it works in
 * must be the reader's alone. A link, a file, a folder of another user or one others can write to,
 * at the copy's path or on the way to it, is refused in one line; --fresh replaces what is the
 * reader's and nothing else; a .env planted in the copy is never read; parallel runs and a run
 * still using the copy do not trip each other; and its own flags and npm's are read right.
 *
 * Each run is scripts/demo.ts with its chapter, both from bundles under node (runDemo in
 * helpers/demo.ts; the launcher test in demo.test.ts runs it through tsx, as npm run demo does),
 * with HOME a temporary folder. A run that gets as far as the chapter uses -h where it can. The
 * tests that need a second user run only as root, which can give a folder to uid 65534; they say
 * so when they skip.
 */
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync } from 'node:fs';
import { readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chapterFlags, REPO } from '../scripts/chapters.ts';
import { inspect, pagePath } from '../scripts/inspect.ts';
import { DEMO, demoCopy, runDemo, type DemoRun } from './helpers/demo.ts';

const AS_ROOT = process.getuid?.() === 0;
const NOT_ROOT = 'needs root, to give a folder to another user (uid 65534): skipped';
if (!AS_ROOT) console.log(`demo-hostile: the tests that ${NOT_ROOT}`);

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new HOME; with `parents`, its ~/.learn-agent-harness/demo made as the demo makes it (0700). */
function newHome(parents = true): string {
  const home = mkdtempSync(join(tmpdir(), 'lah-demo-hostile-'));
  made.push(home);
  if (parents) mkdirSync(dirname(demoCopy(home, 's01')), { recursive: true, mode: 0o700 });
  return home;
}

/** A run that refused: exit 2, one line on stderr, no stack trace. */
function expectRefused(run: DemoRun, reason: RegExp) {
  const where = `\n--- stderr ---\n${run.stderr}`;
  expect(run.status, `exit 2${where}`).toBe(2);
  expect(run.stderr.trimEnd().split('\n'), `one line${where}`).toHaveLength(1);
  expect(run.stderr).toMatch(reason);
}

/** A run that went on to the chapter, in this copy, made anew or not. */
function expectWorkedIn(run: DemoRun, copy: string, how: 'a fresh copy of demo/' | 'the copy from before') {
  expect(run.status, run.stderr).toBe(0);
  expect(run.stderr).toContain(`[demo: working in ${copy}, ${how};`);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  // The stand-in chapter (runDemo's `stub`) says where it ran: in the copy, given what was left.
  if (run.stdout.startsWith('{"cwd"')) expect(JSON.parse(run.stdout).cwd).toBe(copy);
}

const STUB = { stub: true };

const listing = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

describe.concurrent('npm run demo on a shared machine', () => {
  it('a link, a file or a dangling link at the copy path: refused in one line; --fresh replaces them, never following the link', async () => {
    const home = newHome();
    const elsewhere = join(home, 'elsewhere');
    cpSync(DEMO, elsewhere, { recursive: true });
    symlinkSync(elsewhere, demoCopy(home, 's01'));
    writeFileSync(demoCopy(home, 's02'), 'not a folder\n');
    symlinkSync(join(home, 'nowhere'), demoCopy(home, 's03'));
    const env = { HOME: home };
    const [link, file, dangling] = await Promise.all(
      ['s01', 's02', 's03'].map((chapter) => runDemo([chapter, '-h'], env)),
    );
    expectRefused(link, /lah-demo-s01 is a symbolic link.*--fresh/);
    expectRefused(file, /lah-demo-s02 is not a folder.*--fresh/);
    expectRefused(dangling, /lah-demo-s03 is a symbolic link.*--fresh/);

    const fresh = await Promise.all(
      ['s01', 's02', 's03'].map((chapter) => runDemo([chapter, '--fresh', '-h'], env, STUB)),
    );
    for (const [i, chapter] of ['s01', 's02', 's03'].entries()) {
      expectWorkedIn(fresh[i], demoCopy(home, chapter), 'a fresh copy of demo/');
      expect(lstatSync(demoCopy(home, chapter)).isDirectory()).toBe(true);
    }
    expect(listing(elsewhere), 'the link was removed, not what it pointed to').toEqual(listing(DEMO));
  });

  it('a copy others can write to, or another user’s: refused; --fresh leaves another’s alone', async () => {
    const home = newHome();
    cpSync(DEMO, demoCopy(home, 's01'), { recursive: true });
    chmodSync(demoCopy(home, 's01'), 0o777);
    const open = await runDemo(['s01', '-h'], { HOME: home });
    expectRefused(open, /lah-demo-s01 can be written by others \(mode 777\).*--fresh/);
    if (!AS_ROOT) return console.log(`another user's copy: ${NOT_ROOT}`);

    const theirs = demoCopy(home, 's02');
    cpSync(DEMO, theirs, { recursive: true });
    chownSync(theirs, 65534, 65534);
    const runs = await Promise.all([
      runDemo(['s02', '-h'], { HOME: home }),
      runDemo(['s02', '--fresh', '-h'], { HOME: home }),
    ]);
    for (const run of runs) expectRefused(run, /lah-demo-s02 belongs to uid 65534, not to you/);
    expect(statSync(theirs).uid, '--fresh did not touch it').toBe(65534);
    expect(listing(theirs)).toEqual(listing(DEMO));
  });

  it('a folder on the way to the copy that is a link, another user’s, or open to others: refused', async () => {
    const linked = newHome(false);
    mkdirSync(join(linked, 'elsewhere'));
    mkdirSync(join(linked, '.learn-agent-harness'), { mode: 0o700 });
    symlinkSync(join(linked, 'elsewhere'), join(linked, '.learn-agent-harness', 'demo'));
    const open = newHome(false);
    mkdirSync(join(open, '.learn-agent-harness'));
    chmodSync(join(open, '.learn-agent-harness'), 0o777);
    const theirs = newHome(false);
    mkdirSync(join(theirs, '.learn-agent-harness'), { mode: 0o700 });
    if (AS_ROOT) chownSync(join(theirs, '.learn-agent-harness'), 65534, 65534);

    const runs = await Promise.all(
      [linked, open, ...(AS_ROOT ? [theirs] : [])].map((home) => runDemo(['s01', '-h'], { HOME: home })),
    );
    expectRefused(runs[0], /\.learn-agent-harness\/demo is a symbolic link/);
    expect(readdirSync(join(linked, 'elsewhere')), 'nothing was copied through the link').toEqual([]);
    expectRefused(runs[1], /\.learn-agent-harness can be written by others \(mode 777\)/);
    if (AS_ROOT) expectRefused(runs[2], /\.learn-agent-harness belongs to uid 65534, not to you/);
    else console.log(`another user's folder on the way: ${NOT_ROOT}`);
  });

  it.skipIf(!AS_ROOT)('another user’s lah-demo-s01 in a shared TMPDIR is not the reader’s copy', async () => {
    const shared = newHome(false);
    chmodSync(shared, 0o1777);
    const planted = join(shared, 'lah-demo-s01');
    cpSync(DEMO, planted, { recursive: true });
    writeFileSync(join(planted, '.env'), 'BASH_ENV=/nonexistent\n');
    chownSync(planted, 65534, 65534);
    const home = newHome(false);
    const run = await runDemo(['s01', '-h'], { HOME: home, TMPDIR: shared }, STUB);
    expectWorkedIn(run, demoCopy(home, 's01'), 'a fresh copy of demo/');
    expect(statSync(demoCopy(home, 's01')).uid).toBe(0);
  });

  it('a .env planted in the copy is not read: no key or URL of its own, no BASH_ENV', async () => {
    const home = newHome();
    const requests: string[] = [];
    const listener = createServer((req, res) => {
      requests.push(`${req.method} ${req.url} ${req.headers['x-api-key'] ?? ''}`);
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"type":"authentication_error","message":"planted"}}');
    });
    await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
    try {
      const port = (listener.address() as AddressInfo).port;
      const copy = demoCopy(home, 's01');
      cpSync(DEMO, copy, { recursive: true });
      writeFileSync(join(home, 'bash-env.sh'), `touch ${join(home, 'BASH_ENV-ran')}\n`);
      const planted = [
        `ANTHROPIC_BASE_URL=http://127.0.0.1:${port}`,
        'ANTHROPIC_API_KEY=sk-ant-planted',
        `BASH_ENV=${join(home, 'bash-env.sh')}`,
      ];
      writeFileSync(join(copy, '.env'), `${planted.join('\n')}\n`);
      // No key of the reader's: the chapter talks to the offline model, and runs `true` with bash.
      const run = await runDemo(['s01', '-p', 'run true'], { HOME: home, OFFLINE_PACE_MS: '0' });
      expectWorkedIn(run, copy, 'the copy from before');
      expect(run.stderr, 'the offline model answered').toMatch(/\$ true/);
      expect(requests, 'nothing was sent to the planted URL').toEqual([]);
      expect(existsSync(join(home, 'BASH_ENV-ran')), 'the planted BASH_ENV did not run').toBe(false);
    } finally {
      listener.close();
    }
  });

  it('four --fresh runs at once: each starts over or says the copy is in use; none crashes', async () => {
    const home = newHome();
    const copy = demoCopy(home, 's01');
    cpSync(DEMO, copy, { recursive: true });
    writeFileSync(join(copy, 'from-before.txt'), 'old\n');
    const runs = await Promise.all([1, 2, 3, 4].map(() => runDemo(['s01', '--fresh', '-h'], { HOME: home }, STUB)));
    for (const run of runs) {
      if (run.status === 0) expectWorkedIn(run, copy, 'a fresh copy of demo/');
      else expectRefused(run, /lah-demo-s01 is in use by pid \d+ \(npm run demo s01, or a chapter run there\)/);
    }
    expect(runs.filter((run) => run.status === 0).length).toBeGreaterThan(0);
    expect(listing(copy), 'one whole fresh copy').toEqual(listing(DEMO));
    expect(readdirSync(dirname(copy)), 'and nothing left beside it').toEqual(['lah-demo-s01']);
  });

  it('--fresh while a chapter still works in the copy: refused, and its session stays whole', async () => {
    const home = newHome();
    const copy = demoCopy(home, 's04');
    const go = join(home, 'go');
    // The chapter's command says it started, then waits for the test to let it finish.
    const wait = `run touch ${join(home, 'started')}; while [ ! -e ${go} ]; do sleep 0.1; done`;
    const first = runDemo(['s04', '-p', wait], { HOME: home, OFFLINE_PACE_MS: '0' });
    try {
      for (let tries = 0; !existsSync(join(home, 'started')) && tries < 600; tries++) {
        await new Promise((done) => setTimeout(done, 50));
      }
      const fresh = await runDemo(['s04', '--fresh', '-h'], { HOME: home });
      expectRefused(fresh, /lah-demo-s04 is in use by pid \d+ \(npm run demo s04, .*leave that first\./);
    } finally {
      writeFileSync(go, '');
    }
    const done = await first;
    expectWorkedIn(done, copy, 'a fresh copy of demo/');
    const sessions = join(home, '.learn-agent-harness', 'sessions');
    const [folder] = readdirSync(sessions);
    const [file] = readdirSync(join(sessions, folder)).filter((name) => name.endsWith('.jsonl'));
    const first_line = readFileSync(join(sessions, folder, file), 'utf8').split('\n')[0];
    expect(JSON.parse(first_line).type, 'the session file starts with its header').toBe('session');
    // The way back is the demo's own command: npx tsx … would run in another folder, with no session.
    const hint = `to come back to it: npm run demo s04 -- -r ${file.slice(0, 8)}`;
    expect(done.stderr, 'the resume hint works from where npm run demo was typed').toContain(hint);
  });

  it('--trace: a file named from where you typed npm run demo, not in the agent’s copy; npm run inspect finds the others', async () => {
    const home = newHome();
    const typed = join(home, 'where-you-typed'); // npm says so in INIT_CWD
    mkdirSync(typed);
    const env = { HOME: home, INIT_CWD: typed, OFFLINE_PACE_MS: '0' };
    const [named, unnamed] = await Promise.all([
      runDemo(['s01', '--trace=t.jsonl', '-p', 'run true'], env),
      runDemo(['s02', '--trace', '-p', 'run true'], env),
    ]);
    expectWorkedIn(named, demoCopy(home, 's01'), 'a fresh copy of demo/');
    expect(named.stderr).toContain(`[trace: ${join(typed, 't.jsonl')}]`);
    expect(existsSync(join(demoCopy(home, 's01'), 't.jsonl')), 'where the agent lists files and --fresh deletes them').toBe(false);
    expectWorkedIn(unnamed, demoCopy(home, 's02'), 'a fresh copy of demo/');
    const trace = /\[trace: (\S+)\]/.exec(unnamed.stderr)?.[1];
    expect(trace, unnamed.stderr).toMatch(/\.learn-agent-harness\/traces\/lah-demo-s02-/);
    const found = inspect([], REPO, home); // npm run inspect, typed in the repo
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toBe(pagePath(trace!));
  });

  it('npm run demo s01 --fresh (no --): npm keeps --fresh as npm_config_fresh, and it is honoured', async () => {
    const home = newHome();
    const copy = demoCopy(home, 's01');
    cpSync(DEMO, copy, { recursive: true });
    writeFileSync(join(copy, 'from-before.txt'), 'old\n');
    const run = await runDemo(['s01', '-h'], { HOME: home, npm_config_fresh: 'true' }, STUB);
    expect(JSON.parse(run.stdout).args, 'npm’s flag is not passed on').toEqual(['-h']);
    expectWorkedIn(run, copy, 'a fresh copy of demo/');
    expect(existsSync(join(copy, 'from-before.txt'))).toBe(false);
    // The tests' TMPDIR is inside the repo (tsx's cache, helpers/demo.ts): the copy never is.
    expect(relative(REPO, copy)).toMatch(/^\.\./);
  });

  it('a flag the chapter does not take, or a word outside a flag: the demo’s usage, exit 2', async () => {
    const home = newHome();
    const runs = await Promise.all(
      [['s01', '--bogus'], ['s01', '-c'], ['s01', 'fix']].map((args) => runDemo(args, { HOME: home })),
    );
    for (const run of runs) {
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toContain('Usage: npm run demo <chapter>');
      expect(run.stderr, 'not the chapter’s usage').not.toContain('npx tsx');
    }
    expect(runs[0].stderr).toMatch(/^s01 has no flag --bogus\./);
    expect(runs[1].stderr).toMatch(/^s01 has no flag -c\./);
    expect(runs[2].stderr).toMatch(/^Unexpected "fix": .*npm run demo s01 -- -p "fix the failing test"/);
    expect(existsSync(demoCopy(home, 's01')), 'no copy was made for a wrong command').toBe(false);
  });

  it('a HOME that cannot hold the copy: a new private folder in TMPDIR, said so; never in the repo', async () => {
    const tmp = newHome(false);
    const notAFolder = join(tmp, 'home-is-a-file');
    writeFileSync(notAFolder, '');
    // A TMPDIR in the repo, named so (tsx's cache may be reached through a link: test:solved).
    const inside = join(REPO, 'node_modules', '.cache');
    const [run, inRepo, relativeHome] = await Promise.all([
      runDemo(['s01', '-h'], { HOME: notAFolder, TMPDIR: tmp }, STUB),
      runDemo(['s01', '-h'], { HOME: notAFolder, TMPDIR: inside }),
      runDemo(['s01', '-h'], { HOME: '.', TMPDIR: inside }), // '.': the repo, where it runs
    ]);
    expect(run.status, run.stderr).toBe(0);
    const copy = /\[demo: working in (\S+), a fresh copy of demo\/ \(not kept: /.exec(run.stderr)?.[1];
    expect(copy, run.stderr).toMatch(new RegExp(`^${tmp}/lah-demo-\\w+/lah-demo-s01$`));
    expect(statSync(dirname(copy!)).mode & 0o777, 'a folder of the reader’s alone').toBe(0o700);
    expectRefused(inRepo, /is not a folder, and TMPDIR \(.*\) is inside the repo/);
    expectRefused(relativeHome, /HOME \(\.\) is not an absolute path, and TMPDIR .* is inside the repo/);
    expect(existsSync(join(REPO, '.learn-agent-harness')), 'nothing made in the repo').toBe(false);
  });
});

it('the flags npm run demo passes on are those the chapter’s code.ts gives parseFlags, as it is now', () => {
  const common = { help: { type: 'boolean', short: 'h' }, trace: { type: 'string' } };
  // At least these (an exercise may add one: --keep-days in s04's 02).
  expect(chapterFlags('s04_session')).toMatchObject({
    prompt: { type: 'string', short: 'p' },
    continue: { type: 'boolean', short: 'c' },
    resume: { type: 'string', short: 'r' },
    sessions: { type: 'boolean' },
    ...common,
  });
  // A flag an exercise adds (s01's 02: --max-rounds) is passed on too; and where code.ts lists
  // its flags in no way this can read, nothing is refused.
  const root = mkdtempSync(join(tmpdir(), 'lah-flags-'));
  const code = (text: string) => {
    mkdirSync(join(root, 's01_mine'), { recursive: true });
    writeFileSync(join(root, 's01_mine', 'code.ts'), text);
  };
  code(`async function main() {\n  const flags = {\n    prompt: { type: 'string', short: 'p' },\n` +
    `    'max-rounds': { type: 'string' },\n  } as const;\n}\n`);
  expect(chapterFlags('s01_mine', root)).toEqual({
    prompt: { type: 'string', short: 'p' },
    'max-rounds': { type: 'string' },
    ...common,
  });
  code('const options = parseFlags({ prompt: { type: "string" } }, USAGE);\n');
  expect(chapterFlags('s01_mine', root)).toBeUndefined();
  rmSync(root, { recursive: true, force: true });
});
