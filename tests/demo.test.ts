/**
 * The offline demo model at work on the sample project (demo/), each chapter run as a reader runs
 * it (`npm run demo sNN`, then `fix the failing test`): the chapter as a subprocess with no key, in
 * a fresh copy of demo/, against the offline model, so every request passes the fake's checks.
 *
 * What each run must show: the sample project's own `node --test` fails before and passes after;
 * the thinking on stderr and the answer on stdout, naming the file and the change; and the
 * chapter's mechanism at work: bash only (s01), the file tools (s02), a sub-agent that explores
 * (s03), Ctrl+C and `-c` + `continue` (s04), a compaction it goes on from (s05), a rule from
 * AGENTS.md followed only while it is there (s06). And the same task, on the project laid out
 * differently, still done: each step follows what the tools showed, not a script.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chapterFolder, EDITIONS, REPO } from '../scripts/chapters.ts';
import { readTestRun } from '../shared/offline/outputs.ts';
import { maintainerSkip } from './helpers/committed.ts';
import { copyDemo, DEMO, DEMO_ENV, demoCopy, edit, FIX, nodeTest, runDemo, varyDemo } from './helpers/demo.ts';
import { READER_HOME, readerFolders } from './helpers/demo.ts';
import { runChapter, runRepl, type RunResult } from './helpers/run-chapter.ts';

// A run is ten replies or so, and the sample project's tests twice: a few seconds of CPU each. On a
// busy machine (the whole suite, two cores) the concurrent runs take longer than the default.
const RUN_MS = 80_000;
const TEST_MS = 90_000;

type Line = Record<string, any>;
const readTrace = (file: string): Line[] =>
  readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
const exchanges = (lines: Line[]) => lines.filter((l) => l.type === 'exchange' && l.request);

const RULE = '- After fixing a bug, add a line to CHANGELOG.md';

type Folders = { workspace: string; home: string };

/** Run a chapter offline on a fresh copy of demo/: `-p "fix the failing test"`, and more. */
function fixIn(chapter: string, more: { args?: string[]; env?: Record<string, string>; setup?: (ws: string) => void; folders?: Folders } = {}) {
  return runChapter(chapter, {
    offline: true,
    args: ['-p', FIX, ...(more.args ?? [])],
    setup: more.setup ?? copyDemo,
    env: { ...DEMO_ENV, ...more.env },
    folders: more.folders,
    timeoutMs: RUN_MS,
  });
}

// The runs whose figures the READMEs state run where npm run demo puts the copy, in a home as
// long as the reader's the READMEs assume (helpers/demo.ts): the copy's path is in every request.
const homes: string[] = [];
function asReader(chapter: string): Folders {
  const folders = readerFolders(chapter);
  homes.push(folders.home);
  return folders;
}
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/**
 * The lines of a chapter README's *Try it* transcript (the first ```text block of the section, in
 * every edition of the README) that state what the run prints: the test command, `[round …]`
 * lines, the sub-agent's cost, a compaction and its figures, the closing `Tests:` line.
 */
function statedLines(chapter: string): string[] {
  const stated = (file: string) => {
    const readme = readFileSync(join(REPO, chapterFolder(chapter)!, file), 'utf8');
    const tryIt = readme.slice(readme.search(/^## (Try it|动手试试|試してみる)$/m));
    const transcript = tryIt.match(/```text\n([\s\S]*?)```/)?.[1] ?? '';
    const figure = (line: string) =>
      line.match(/^\$ node --test.*$/)?.[0] ??
      line.match(/^(?:│ )?\[round \d+ · tokens in \d+ · out \d+\]$/)?.[0] ??
      line.match(/sub-agent used \d+ input \+ \d+ output tokens$/)?.[0] ??
      line.match(/^\[compacting \(auto\): \d+ messages\]$/)?.[0] ??
      line.match(/context \d+ → \d+ tokens \(estimated\)\]$/)?.[0] ??
      line.match(/^Tests: .*$/)?.[0];
    return transcript.split('\n').map(figure).filter((line): line is string => line !== undefined);
  };
  const en = stated('README.md');
  for (const name of EDITIONS.slice(1)) {
    const why = `${chapter}: ${name}'s transcript states what README.md's does`;
    expect(stated(name), why).toEqual(en);
  }
  return en;
}

/**
 * A run prints, in order, every line of its README's transcript that states a figure, on the
 * Node this test runs under (the sample project's reporter.mjs prints the same on each), and as
 * many compactions as the transcript shows.
 */
function expectAsStated(chapter: string, run: RunResult) {
  // A maintainer check: a reader's exercise solution changes what the chapter sends, and so the
  // figures (helpers/committed.ts).
  const skip = maintainerSkip(chapterFolder(chapter)!, ['*.ts', ...EDITIONS]);
  if (skip) return console.log(`${chapter}'s Try it figures: ${skip}`);
  const lines = statedLines(chapter);
  expect(lines.length, `${chapter}'s README states figures in its Try it transcript`).toBeGreaterThan(0);
  const printed = `${run.stderr}\n${run.stdout}`;
  const where = `\n(figures for a home of ${READER_HOME.length} characters, as ${READER_HOME}; ` +
    `node ${process.version})\n--- what it printed (end) ---\n${printed.slice(-6000)}`;
  let from = 0;
  for (const line of lines) {
    const at = printed.indexOf(line, from);
    expect(at, `${chapter}'s README shows \`${line}\`; the run did not print it (after what came before)${where}`)
      .toBeGreaterThanOrEqual(0);
    from = at + line.length;
  }
  const compactions = (text: string) => text.match(/\[compacting \(auto\)/g)?.length ?? 0;
  expect(compactions(printed), `${chapter}: as many compactions as the README shows${where}`)
    .toBe(lines.filter((line) => line.startsWith('[compacting (auto)')).length);
}

/** Where the bug is: in demo/ as shipped, and in the copy varyDemo (helpers/demo.ts) lays out. */
const AS_SHIPPED = { test: 21, line: 19, number: 10, expected: 9000, got: 10000 };
const VARIED = { test: 25, line: 24, number: 11, expected: 9900, got: 11000 };

/**
 * What every run that fixed the bug shows: the tests pass now; thinking on stderr; the answer.
 * (nodeTest runs node --test once for each distinct content of the project, and gives that
 * result again for a workspace with the same files: see helpers/demo.ts.)
 */
function expectFixed(run: RunResult, bug = AS_SHIPPED) {
  const where = `\n--- stdout ---\n${run.stdout}\n--- stderr (end) ---\n${run.stderr.slice(-3000)}`;
  expect(run.code, `the chapter should exit 0${where}`).toBe(0);
  const after = nodeTest(run.workspace);
  expect(after.fail, `after the run, the sample project's own node --test should pass${where}`).toBe(0);
  expect(after.pass).toBeGreaterThan(40);
  expect(run.stderr, 'the model thinks before it acts, and the chapter shows it on stderr').toMatch(/^\[thinking\] \w/m);
  expect(run.stdout, 'thinking goes to stderr, not to the answer').not.toContain('[thinking]');
  expect(run.stdout, 'the answer names the failing test, what it expected and got').toContain(
    `Fixed. The failing test was “gives the bulk discount from ${bug.number} items” ` +
      `(test/discounts.test.js:${bug.test}): expected ${bug.expected}, got ${bug.got}.`,
  );
  expect(run.stdout, 'the answer names the file, the line and the change').toContain(
    `The change, src/discounts.js line ${bug.line}: \`return quantity > BULK_MIN_QUANTITY;\` → \`return quantity >= BULK_MIN_QUANTITY;\`.`,
  );
  expect(run.stdout, 'and why').toContain(`leaves out exactly ${bug.number} (BULK_MIN_QUANTITY is ${bug.number})`);
  expect(run.stdout, 'and that it checked its work').toMatch(/^Tests: (\d+) of \1 pass \(node --test/m);
}

// Every test here runs at once: most of their time is the offline model's paced replies and the
// sample project's tests, and one's waiting is another's turn to run.
describe.concurrent('the offline demo model on the sample project', () => {
  it('before: the sample project has exactly one failing test, the one its bug breaks', () => {
    const before = nodeTest(DEMO);
    expect(before.fail, before.output).toBe(1);
    expect(before.output).toMatch(/not ok \d+ - gives the bulk discount from 10 items|✖ gives the bulk discount from 10 items/);
  });

  it('npm test (reporter.mjs) prints nothing that changes with the Node, the run or the folder, and the offline model reads it', () => {
    const before = nodeTest(DEMO);
    expect(before.output, 'no timing, no node-internal frame, no absolute path').not.toMatch(/duration_ms|node:internal|\/demo\//);
    expect(readTestRun(before.output, DEMO)).toEqual({
      total: 52,
      pass: 51,
      fail: 1,
      failing: { name: 'gives the bulk discount from 10 items', file: 'test/discounts.test.js', line: 21, expected: '9000', actual: '10000' },
    });
    // A test file that does not load: node's error, the file and its exit code, as node's TAP has them.
    const broken = mkdtempSync(join(tmpdir(), 'lah-demo-broken-'));
    try {
      copyDemo(broken);
      edit(broken, 'test/discounts.test.js', (text) => text.replace("'../src/discounts.js'", "'../src/nope.js'"));
      const failing = readTestRun(nodeTest(broken).output, broken)?.failing;
      expect(failing).toMatchObject({ file: 'test/discounts.test.js', wholeFile: { why: expect.stringContaining('Cannot find module') } });
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });

  describe.concurrent('fix the failing test, offline, in each chapter', { timeout: TEST_MS }, () => {
    // The project laid out differently (helpers/demo.ts): each step follows what the tools show.
    it('s01: with bash alone (cat -n, sed -n, sed -i), on the project laid out differently', async () => {
      const run = await fixIn('s01', { setup: varyDemo });
      expectFixed(run, VARIED);
      expect(run.stderr).toMatch(/\$ node --test/);
      expect(run.stderr, 'it reads the test near the failing line').toMatch(/\$ cat -n test\/discounts\.test\.js \| sed -n '19,39p'/);
      expect(run.stderr).toMatch(/\$ sed -i '24s\/quantity > BULK_MIN_QUANTITY\/quantity >= BULK_MIN_QUANTITY\/' src\/discounts\.js/);
      expect(run.stderr.match(/\$ node --test/g), 'the tests run twice: to see the failure, and to check the fix').toHaveLength(2);
    });

    it('s01 as its README shows it: the figures of its Try it, on this Node', async () => {
      const run = await fixIn('s01', { folders: asReader('s01') });
      expectFixed(run);
      expectAsStated('s01', run);
      // How it works: "input goes from 114 tokens to 2,410 after one `node --test`" (en, zh, ja).
      const rounds = [...run.stderr.matchAll(/\[round \d+ · tokens in (\d+)/g)].map((m) => Number(m[1]));
      for (const file of EDITIONS) {
        const readme = readFileSync(join(REPO, 's01_agent_loop', file), 'utf8');
        const stated =
          readme.match(/(?:from|从) ([\d,]+) (?:tokens|个 token)[^\n]*?(?:to|到了) ([\d,]+)/) ??
          readme.match(/([\d,]+) トークンから ([\d,]+)/);
        expect(stated, `s01/${file} states the input before and after one node --test`).not.toBeNull();
        const [before, after] = stated!.slice(1).map((n) => Number(n.replace(/,/g, '')));
        expect([rounds[0], rounds[1]], `s01/${file}: the first two requests' tokens in`).toEqual([before, after]);
      }
    });

    it('s02: with the file tools: read_file near the line, grep, edit_file', async () => {
      const run = await fixIn('s02');
      expectFixed(run);
      expectAsStated('s02', run); // its transcript's two test runs (no figure depends on the path)
      expect(run.stderr).toMatch(/> read_file test\/discounts\.test\.js, offset: \d+, limit: \d+/);
      expect(run.stderr).toMatch(/> grep function lineTotal/);
      expect(run.stderr).toMatch(/> edit_file src\/discounts\.js, old_string: return quantity > BULK_MIN_QUANTITY;/);
      expect(run.stdout, 'each step writes down what it learned').toContain(
        'The failing test is “gives the bulk discount from 10 items” at test/discounts.test.js:21: expected 9000, got 10000.',
      );
    });

    it('s03: the exploration goes to a sub-agent, and the main agent edits from its report alone', async () => {
      // The trace goes beside the copy, not in it: the copy stays as the README's run has it.
      const folders = asReader('s03');
      const trace = join(folders.home, 'trace.jsonl');
      const run = await fixIn('s03', { args: [`--trace=${trace}`], folders });
      expectFixed(run);
      expectAsStated('s03', run);
      const sent = exchanges(readTrace(trace));
      const child = sent.filter((e) => e.agent === 'sub-agent');
      expect(child.length, 'the sub-agent made requests of its own').toBeGreaterThan(1);
      const task = child[0].request.messages[0].content;
      expect(task, 'its conversation starts with the task, and nothing of the parent’s').toMatch(/^Find where lineTotal is defined/);
      expect(child[0].request.messages).toHaveLength(1);
      const report = child[child.length - 1].response.content.find((b: any) => b.type === 'text').text;
      expect(report, 'it reports the file, the lines and the code').toMatch(/lineTotal is defined in src\/discounts\.js at line 23[\s\S]*In src\/discounts\.js:\n[\s\S]*19\t  return quantity > BULK_MIN_QUANTITY;/);
      // The main agent's own calls: none reads or searches the module the sub-agent explored.
      const mainCalls = sent
        .filter((e) => e.agent === 'main')
        .flatMap((e) => e.response.content.filter((b: any) => b.type === 'tool_use'));
      const looks = mainCalls.filter((c: any) => ['read_file', 'grep', 'glob', 'bash'].includes(c.name));
      const touched = looks.filter((c: any) => JSON.stringify(c.input).includes('src/discounts.js'));
      expect(touched, 'the main agent does not read src/discounts.js itself').toEqual([]);
      expect(mainCalls.map((c: any) => c.name)).toContain('agent');
    });

    it('s06: follows the rule of AGENTS.md, which reaches it through the system prompt: a CHANGELOG line', async () => {
      const run = await fixIn('s06');
      expectFixed(run);
      const changelog = readFileSync(join(run.workspace, 'CHANGELOG.md'), 'utf8');
      const line = '- Fixed: lineTotal did not give the bulk discount from 10 items: `>` where `>=` was meant (src/discounts.js)';
      expect(changelog, 'the line, first under ## Unreleased').toContain(`## Unreleased\n\n${line}\n- Added: the TEATIME coupon`);
      expect(run.stdout).toMatch(/Added to CHANGELOG\.md under ## Unreleased, as the project's instructions ask/);
    });

    it('s06 without the rule in AGENTS.md (and the project laid out differently): CHANGELOG.md untouched', async () => {
      const setup = (ws: string) => {
        varyDemo(ws);
        edit(ws, 'AGENTS.md', (text) => text.split('\n').filter((line) => !line.startsWith(RULE)).join('\n'));
      };
      const run = await fixIn('s06', { setup });
      expectFixed(run, VARIED);
      expect(readFileSync(join(run.workspace, 'CHANGELOG.md'), 'utf8')).toBe(readFileSync(join(DEMO, 'CHANGELOG.md'), 'utf8'));
    });

    it('s05 as its README shows it: CONTEXT_WINDOW=10000, a big file read, then the task compacts on the way, and goes on from its own summary', async () => {
      const folders = asReader('s05');
      const trace = join(folders.home, 'trace.jsonl');
      // The README's two prompts, in the REPL (a pseudo-terminal: stdout and stderr are one).
      const run = await runRepl('s05', ['read test/shop.test.js', FIX, 'exit'], {
        offline: true,
        args: [`--trace=${trace}`],
        setup: copyDemo,
        folders,
        env: { ...DEMO_ENV, CONTEXT_WINDOW: '10000' },
        timeoutMs: RUN_MS,
      });
      expect(run.code, run.stdout).toBe(0);
      expect(nodeTest(run.workspace).fail, 'the task was done').toBe(0);
      expect(run.stdout).toContain('Fixed. The failing test was “gives the bulk discount from 10 items”');
      expectAsStated('s05', run);
      const lines = readTrace(trace);
      const compactions = lines.filter((l) => l.type === 'event' && l.event === 'compaction');
      expect(compactions.length, `at least one compaction:\n${run.stderr.slice(-2000)}`).toBeGreaterThan(0);
      const asked = exchanges(lines).find((e) => e.agent === 'compaction')!;
      expect(asked.request.tools, 'the summary request offers no tools').toBeUndefined();
      expect(asked.request.messages[0].content).toMatch(/\n\n---\nSummarise the conversation above/);
      const summary = asked.response.content.find((b: any) => b.type === 'text').text;
      for (const heading of ['1. Requests', '2. Files', '3. Errors', '4. Decisions', '5. State', '6. Next step']) {
        expect(summary, `the summary has the heading ${heading}`).toContain(`\n${heading}\n`);
      }
      expect(summary, 'it names the requests').toMatch(/1\. Requests\n- read test\/shop\.test\.js\n- fix the failing test\n/);
      expect(summary, 'and the file read').toMatch(/2\. Files\n- test\/shop\.test\.js: read/);
      // What is left, with the command the model ran: the next step reads the test run's output,
      // which goes on word for word after the summary.
      expect(summary, 'and what is left').toMatch(/- Not finished: fix the failing test\n[\s\S]*6\. Next step\n- \S/);
      expect(summary).not.toContain('--test-reporter=tap');
      // The main agent's next request starts from the summary, and the task still finishes.
      const next = exchanges(lines).find((e) => e.agent === 'main' && e.n > asked.n)!;
      expect(next.request.messages[0].content).toContain(summary);
      expect(JSON.stringify(next.request.messages.slice(1)), 'then the test run, word for word')
        .toContain('not ok 4 - gives the bulk discount from 10 items');
      // Tier 1 as the README says: from round 6 on, the first test run's output is a placeholder.
      const main = exchanges(lines).filter((e) => e.agent === 'main');
      const last = JSON.stringify(main.at(-1)!.request.messages);
      expect(last, 'a placeholder for the first test run')
        .toContain('[cleared to save context: the result of bash {\\"command\\":\\"node --test');
    });
  });

  it('s04: Ctrl+C in the middle of the task, then -c and "continue" finishes it', async () => {
    // A pace a person could press Ctrl+C at: the press comes while the tests run or the next reply streams.
    const first = await runRepl('s04', [FIX, { after: /\$ node --test/, keys: '\x03', delayMs: 100 }, 'exit'], {
      offline: true,
      setup: copyDemo,
      env: { OFFLINE_PACE_MS: '600' },
      timeoutMs: RUN_MS,
    });
    expect(first.code, first.stdout).toBe(0);
    expect(first.stdout, 'the turn was interrupted').toContain('(interrupted: the turn stopped here');
    expect(nodeTest(first.workspace).fail, 'nothing was fixed yet').toBe(1);

    const resumed = await runChapter('s04', {
      offline: true,
      args: ['-c', '-p', 'continue'],
      folders: { workspace: first.workspace, home: first.home },
      env: DEMO_ENV,
      timeoutMs: RUN_MS,
    });
    expect(resumed.stderr).toMatch(/session \w+ \(resumed with \d+ messages\)/);
    expectFixed(resumed);
  }, TEST_MS * 2);

  it('s05: /compact <focus> keeps the focus, and `history` shows the summary that says so', async () => {
    const run = await runRepl('s05', ['run echo discount-check', 'run ls src', '/compact the discount', 'history', 'exit'], {
      offline: true,
      setup: copyDemo,
      env: DEMO_ENV,
      timeoutMs: RUN_MS,
    });
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/\[compacting \(you asked\): \d+ messages\]/);
    const history = run.stdout.slice(run.stdout.lastIndexOf('s05 >> history'));
    expect(history, 'the summary says what it was asked to keep').toContain('- Kept in particular, as the user asked: the discount');
    expect(history, 'and keeps the lines about it').toMatch(/Kept in particular[^\n]*\n\s+- [^\n]*(discount-check|discounts\.js)/);
    expect(history).toMatch(/1\. Requests\n\s+- run echo discount-check\n\s+- run ls src/);
  }, TEST_MS);

  it('npm run demo <chapter>: copies demo/ once, says where it works, reuses the copy, and --fresh starts over, sessions too', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'lah-demo-script-'));
    const env = { HOME: tmp, TMPDIR: tmp };
    // The first run as npm run demo runs it, through tsx; the others from bundles (runDemo).
    const demo = (...args: string[]) => runDemo(['s04', ...args], env);
    const copy = demoCopy(tmp, 's04'); // ~/.learn-agent-harness/demo/lah-demo-s04: the reader's alone
    const first = await runDemo(['s04', '-p', 'run echo changed > CHANGELOG.md'], env, { viaTsx: true });
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain(`[demo: working in ${copy}, a fresh copy of demo/; npm run demo s04 -- --fresh starts over]`);
    expect(readFileSync(join(copy, 'CHANGELOG.md'), 'utf8'), 'the chapter ran in the copy').toBe('changed\n');
    expect(readFileSync(join(DEMO, 'CHANGELOG.md'), 'utf8'), 'never in the repo').not.toBe('changed\n');
    // The session of that run is kept per folder, in HOME: a fresh copy must not find it (a later
    // -c would otherwise go on from a conversation about files the new copy does not have).
    const again = await demo('--fresh', '--sessions');
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(join(copy, 'CHANGELOG.md'), 'utf8'), '--fresh: a new copy').toContain('# Changelog');
    expect(again.stdout, '--fresh: no session of the old copy').toMatch(/^No sessions in .* yet\.$/m);
    // This run is about the launcher's own words only: -h makes the chapter print its usage and
    // exit, without starting the model or running a command.
    const reused = await demo('-h');
    expect(reused.status, reused.stderr).toBe(0);
    expect(reused.stderr, 'and then reused').toContain(`[demo: working in ${copy}, the copy from before;`);
  }, TEST_MS);
});
