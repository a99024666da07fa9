/**
 * --trace (shared/trace.ts) against what a reader's setup can hold: a base URL with a password in
 * it, a --trace=<file> that is not ours or not a plain file, and several runs writing one file at
 * once. Each runs the chapter as a reader does, over real HTTP against the strict fake.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync }
  from 'node:fs';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspect } from '../scripts/inspect.ts';
import { readTrace, renderPage } from '../scripts/inspector/page.ts';
import { reply, startFakeAnthropic, text, toolUse, type Reply } from '../shared/fake-anthropic.ts';
import { withoutPasswords } from '../shared/trace.ts';
import { runChapter } from './helpers/run-chapter.ts';

type Line = Record<string, any>;
const linesOf = (file: string): Line[] =>
  readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** A port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

describe.concurrent('a password in ANTHROPIC_BASE_URL', () => {
  const USER = 'alice-the-user';
  const PASSWORD = 'Hunter2-s3cret';
  const withPassword = (url: string) => url.replace('http://', `http://${USER}:${PASSWORD}@`);

  // s05 also asks the Models API for the window: a second kind of request that fails.
  const cases: [string, () => Promise<{ url: string; close?: () => Promise<void> }>][] = [
    ['pointing at the fake', async () => {
      const fake = await startFakeAnthropic({ replies: [reply(text('never asked'))] });
      return { url: withPassword(fake.url), close: () => fake.close() };
    }],
    ['pointing at a closed port', async () =>
      ({ url: withPassword(`http://127.0.0.1:${await closedPort()}`) })],
  ];
  it('is masked in any text, the userinfo up to its last @; the base URL as it was written', () => {
    const texts = {
      'fetch http://me:pw@h:9/v1/models: refused': 'fetch http://***@h:9/v1/models: refused',
      'HTTPS://me:p@ss@host/v1?to=a@b and me@x.org': 'HTTPS://***@host/v1?to=a@b and me@x.org',
      'could not reach http://127.0.0.1:9 (ECONNREFUSED)': 'could not reach http://127.0.0.1:9 ' +
        '(ECONNREFUSED)',
    };
    for (const [text, shown] of Object.entries(texts)) expect(withoutPasswords(text)).toBe(shown);
    // A URL parser takes a space in a password (and escapes it): the text shows it raw.
    const base = 'http://me:two words@host:8080';
    expect(withoutPasswords(`could not reach ${base} (x)`, base))
      .toBe('could not reach http://***@host:8080 (x)');
  });

  for (const [name, endpoint] of cases) {
    it(`is shown nowhere: not on the terminal, in the trace or on its page (${name})`, async () => {
      const { url, close } = await endpoint();
      try {
        const run = await runChapter('s05', {
          args: ['-p', 'hi', '--trace=t.jsonl'],
          env: { ANTHROPIC_BASE_URL: url },
        });
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr, 'the failure is described').toMatch(/API error: could not reach/);
        const file = join(run.workspace, 't.jsonl');
        const trace = readFileSync(file, 'utf8');
        expect(linesOf(file).filter((l) => l.error).length, 'every try failed, with why')
          .toBeGreaterThan(1);
        const made = inspect([file], run.workspace);
        expect(made.code, made.stderr).toBe(0);
        const page = readFileSync(made.stdout, 'utf8');
        for (const [where, shown] of [['stderr', run.stderr], ['stdout', run.stdout],
          ['the trace', trace], ['the page', page]]) {
          expect(shown, `${where} must not hold the password`).not.toContain(PASSWORD);
          expect(shown, `${where} must not hold the user name either`).not.toContain(USER);
        }
        expect(run.stderr, 'the host is still named, its userinfo masked')
          .toMatch(/could not reach http:\/\/\*\*\*@127\.0\.0\.1:\d+/);
      } finally {
        await close?.();
      }
    });
  }
});

describe.concurrent('--trace=<file> that is not a plain file of ours', () => {
  const answered = [reply(text('Answered anyway.'))];
  // One warning, the run goes on untraced, and the file is left as it was.
  const refused = (run: { code: number | null; stdout: string; stderr: string }, why: RegExp) => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Answered anyway.');
    const warnings = run.stderr.split('\n').filter((line) => /trace/.test(line));
    expect(warnings, `one warning, saying ${why}`).toEqual([expect.stringMatching(why)]);
    expect(run.stderr).not.toMatch(/\[trace: /);
  };

  it("refuses another user's file in a shared folder, and leaves it as it was", async () => {
    const before = 'someone else\'s trace\n';
    const run = await runChapter('s01', {
      args: ['-p', 'a secret prompt', '--trace=shared/trace.jsonl'],
      replies: answered,
      setup: (workspace) => {
        const shared = join(workspace, 'shared'); // like /tmp: anyone may make a file in it
        mkdirSync(shared);
        chmodSync(shared, 0o1777);
        writeFileSync(join(shared, 'trace.jsonl'), before);
        chmodSync(join(shared, 'trace.jsonl'), 0o666);
        chownSync(join(shared, 'trace.jsonl'), 65534, 65534); // nobody's
      },
    });
    refused(run, /belongs to another user \(uid 65534\)/);
    const file = join(run.workspace, 'shared/trace.jsonl');
    expect(readFileSync(file, 'utf8'), 'nothing appended').toBe(before);
    expect(mode(file)).toBe('666');
    expect(statSync(file).uid).toBe(65534);
  });

  it('refuses a symbolic link, and writes nothing where it points', async () => {
    const run = await runChapter('s01', {
      args: ['-p', 'hi', '--trace=link.jsonl'],
      replies: answered,
      setup: (workspace) => {
        writeFileSync(join(workspace, 'target.txt'), 'untouched\n');
        symlinkSync(join(workspace, 'target.txt'), join(workspace, 'link.jsonl'));
      },
    });
    refused(run, /symbolic link/);
    expect(readFileSync(join(run.workspace, 'target.txt'), 'utf8')).toBe('untouched\n');
  });

  it('refuses a FIFO at once, rather than wait for a reader', async () => {
    const run = await runChapter('s01', {
      args: ['-p', 'hi', '--trace=pipe.jsonl'],
      replies: answered,
      timeoutMs: 10_000,
      setup: (workspace) => {
        expect(spawnSync('mkfifo', [join(workspace, 'pipe.jsonl')]).status).toBe(0);
      },
    });
    refused(run, /FIFO \(named pipe\), not a regular file/);
  });

  it('refuses a folder', async () => {
    const run = await runChapter('s01', {
      args: ['-p', 'hi', '--trace=folder.jsonl'],
      replies: answered,
      setup: (workspace) => mkdirSync(join(workspace, 'folder.jsonl')),
    });
    refused(run, /directory, not a regular file/);
  });

  it('makes a file of ours that others could read 0600, and appends to it', async () => {
    const before = '{"type":"trace","version":1,"chapter":"s01_agent_loop"}\n';
    const run = await runChapter('s01', {
      args: ['-p', 'hi', '--trace=old.jsonl'],
      replies: answered,
      setup: (workspace) => writeFileSync(join(workspace, 'old.jsonl'), before, { mode: 0o644 }),
    });
    expect(run.code, run.stderr).toBe(0);
    const file = join(run.workspace, 'old.jsonl');
    expect(mode(file), 'only you may read what the run sent').toBe('600');
    expect(readFileSync(file, 'utf8').startsWith(before), 'the earlier run kept').toBe(true);
    expect(linesOf(file).filter((l) => l.type === 'exchange')).toHaveLength(1);
  });
});

describe('several runs writing one --trace=<file> at once', () => {
  it('gives each line its run: the page shows each run its own requests, once each', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'shared-trace-'));
    const file = join(folder, 'trace.jsonl');
    // Three requests a run, each streamed slowly, so the runs' lines land between each other's.
    const script = (name: string): Reply[] => [1, 2].map((k): Reply => (
      { content: [toolUse('bash', { command: `echo ${name}${k}` })], eventDelayMs: 40 }))
      .concat({ content: [text(`Done ${name}.`)], eventDelayMs: 40 });
    const runs = await Promise.all(['AAA', 'BBB'].map((name) => runChapter('s01', {
      args: ['-p', `prompt of ${name}`, `--trace=${file}`],
      replies: script(name),
    })));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);

    const lines = linesOf(file);
    const headers = lines.filter((l) => l.type === 'trace');
    expect(headers).toHaveLength(2);
    const runIds = headers.map((h) => h.run);
    expect(runIds[0], 'each run has an id of its own').not.toBe(runIds[1]);
    for (const line of lines) expect(runIds, 'every line names its run').toContain(line.run);
    const promptOf = (line: Line) => line.request.messages[0].content as string;
    const second = lines.indexOf(headers[1]);
    const firstRunsPrompt = promptOf(lines.find((l) => l.type === 'exchange')!);
    expect(lines.slice(second).some((l) => l.type === 'exchange' &&
      promptOf(l) === firstRunsPrompt), "the runs' lines must interleave for this test").toBe(true);

    const trace = readTrace(readFileSync(file, 'utf8'));
    expect(trace.runs).toHaveLength(2);
    expect(trace.exchanges).toHaveLength(6);
    const numbers = trace.exchanges.map((e) => e.n);
    expect(new Set(numbers).size, `each request its own number: ${numbers}`).toBe(6);
    for (const k of [0, 1]) {
      const own = trace.exchanges.filter((e) => e.run === k);
      expect(own.map((e) => e.inRun), `run ${k + 1}: its own three requests`).toEqual([1, 2, 3]);
      const prompts = own.map((e) => (trace.values.values[e.sent!.messages[0]] as Line).content);
      expect(new Set(prompts).size, 'all of one conversation').toBe(1);
    }

    const html = renderPage(readFileSync(file, 'utf8'));
    const ids = [...html.matchAll(/<details class="request[^"]*" id="(r\d+)"/g)].map((m) => m[1]);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size, 'no two lines of the page with one id').toBe(6);
  });
});
