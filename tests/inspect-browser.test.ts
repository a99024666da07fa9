/**
 * npm run inspect, end to end, in a real browser: s05 runs offline with --trace through tier-1
 * placeholders and an automatic compaction, with tool outputs that hold hostile HTML; the command
 * writes the page; headless Chromium opens it from file:// and a test looks at what a reader
 * would: the chart, the markers, the requests, and that the hostile text ran nothing. A second
 * test runs s06 offline twice with the same --trace=<file>: two runs in one file, with the system
 * prompt's sections and the cache breakpoints. A third opens every part of every request of a
 * trace written by hand with values no chapter sends ({"toString":1} as a tool's name, a block's
 * type, a role…), as a faulty compatible endpoint can: page.js shows them, and throws nothing.
 *
 * Chromium comes from Debian (`sudo apt-get install chromium-headless-shell`), driven by
 * playwright-core; CHROMIUM=<path> names another (a Chrome on a Mac). Without one the tests are
 * skipped, and the run says why on its first lines; under CI (CI set) they fail instead.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inspect } from '../scripts/inspect.ts';
import { REPO, runChapter, runRepl } from './helpers/run-chapter.ts';

const BROWSERS = process.env.CHROMIUM
  ? [process.env.CHROMIUM]
  : ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];
const executablePath = BROWSERS.find((path) => existsSync(path));
const INSTALL = `no Chromium at ${BROWSERS.join(' or ')}. On Debian: ` +
  'sudo apt-get install chromium-headless-shell; elsewhere, name a Chromium or Chrome you have: ' +
  'CHROMIUM=<its path> npm test';
const TITLE = 'the page of a real s05 run shows its requests, and its hostile outputs run nothing';
const TITLE_S06 = 'two s06 runs in one file: the runs apart, the sections, the cache breakpoints';
const TITLE_ODD = 'values whose toString is not a function: every part of every request opens';

// Printed by a tool, shown on the page: each would run script or fetch something if read as HTML.
const HOSTILE = [
  '<script>window.__pwned=1</script>',
  '<img src=x onerror="window.__pwned=2">',
  '</textarea>',
];
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

const session = { browser: undefined as Promise<Browser> | undefined };
beforeAll(() => {
  if (!executablePath) return;
  // Not waited for here: it starts while the first test's chapter runs, and open() waits for it.
  session.browser = chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  session.browser.catch(() => {}); // a failed launch fails the test that waits for it, not here
});
afterAll(async () => {
  await (await session.browser?.catch(() => undefined))?.close();
});

// The default reporter counts skipped tests and names none: say it where the run shows it.
if (!executablePath && !process.env.CI) {
  console.warn(`tests/inspect-browser.test.ts: its 3 browser tests are skipped: ${INSTALL}`);
}

/** A test that needs the browser: skipped without one, saying why; failed without one under CI. */
function inBrowser(title: string, test: () => Promise<void>): void {
  if (!executablePath && process.env.CI) it(title, () => expect.fail(INSTALL));
  else if (!executablePath) it(title, (ctx) => ctx.skip(INSTALL)); // verbose reporter: the note
  else it(title, test);
}

/** A fresh tab on `path`, recording what it requests and any script error or CSP refusal. */
async function open(path: string) {
  const browser = await session.browser!;
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(3_000); // a click that cannot happen fails now, not at the test's timeout
  const url = `file://${path}`;
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text()); // a CSP refusal says so here
  });
  await page.goto(url);
  return { page, url, requested, errors };
}

// A count hedged with "(s)", as in `placeholder(s)`: the page says "1 placeholder", "2 placeholders"
// instead.
const HEDGED = /[a-z]\(s\)/i;

inBrowser(TITLE, async () => {
  // 1. The run. CONTEXT_WINDOW=10000: compaction starts at about 5,000 tokens.
  const run = await runRepl('s05', [
    `run printf '%s\\n' ${HOSTILE.map(quote).join(' ')}`,
    // Four results over 2,000 characters: the next turn sends the oldest as a placeholder.
    'run seq 1 600 then run seq 2 601 then run seq 3 602 then run seq 4 603',
    'run seq 1 2000',
    'run seq 1 2000', // past the threshold: an automatic compaction first
    'exit',
  ], { offline: true, args: ['--trace'], env: { CONTEXT_WINDOW: '10000' } });
  expect(run.code, `the chapter failed:\n${run.stderr}`).toBe(0);

  // 2. npm run inspect, as you would type it in the workspace: the newest trace of that folder.
  const inspect = spawnSync(join(REPO, 'node_modules/.bin/tsx'), ['scripts/inspect.ts'], {
    cwd: REPO, // npm runs scripts in the repo's root, and says where you were in INIT_CWD
    env: { ...process.env, HOME: run.home, INIT_CWD: run.workspace },
    encoding: 'utf8',
  });
  expect(inspect.status, `npm run inspect failed:\n${inspect.stderr}`).toBe(0);
  const pagePath = inspect.stdout.trim();
  expect(pagePath).toMatch(/\.learn-agent-harness\/traces\/workspace-[0-9a-f]{8}\/.*\.html$/);
  const folder = join(pagePath, '..');
  const traceFile = join(folder, readdirSync(folder).find((name) => name.endsWith('.jsonl'))!);
  const lines = readFileSync(traceFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  const exchanges = lines.filter((l) => l.type === 'exchange' && l.path === '/v1/messages');

  // 3. The page, from file://, watched for any request it makes.
  const { page, url, requested, errors } = await open(pagePath);

  // The chart: a step per request, a compaction marker, a placeholder marker.
  const steps = await page.locator('svg .step').count();
  expect(steps, 'one chart step per request').toBe(exchanges.length);
  expect(await page.locator('svg g.compaction[data-tier="2"]').count(), 'a tier-2 compaction')
    .toBeGreaterThan(0);
  expect(await page.locator('svg path.placeholders').count(), 'a placeholder marker')
    .toBeGreaterThan(0);

  // The request after the compaction: it starts with the summary.
  const afterCompaction = page.locator('details.request:has(.has-summary)').first();
  await afterCompaction.locator('summary').click();
  await expect.poll(() => afterCompaction.locator('.msg.summary.new').count()).toBe(1);
  expect(await afterCompaction.locator('.msg.summary').textContent())
    .toContain('[Earlier conversation, compacted.');
  expect(await afterCompaction.locator('.part.system > summary').textContent(),
    's01–s05 send the system prompt as one string, not as sections')
    .toMatch(/^System prompt: one string, [\d,]+ characters \(≈[\d,]+ tokens\) · as in #\d+$/);

  // A summary request: a box for each thinking block of its reply that holds thinking, and none
  // for an empty one (the offline model's summary starts with one).
  const thought = (reply: any) =>
    reply.content.filter((b: any) => b.type === 'thinking' && b.thinking.trim()).length;
  const summary = exchanges.find((e) => e.agent === 'compaction');
  const summariser = page.locator(`#r${summary.n}`);
  await summariser.locator('summary').first().click();
  await expect.poll(() => summariser.locator('.part.reply .block.text').count()).toBe(1);
  expect(await summariser.locator('.block.thinking').count(), 'no box without thinking')
    .toBe(thought(summary.response));
  const first = page.locator(`#r${exchanges[0].n}`);
  await first.locator('summary').first().click();
  await expect.poll(() => first.locator('.part.reply .block.text').count()).toBeGreaterThan(0);
  expect(thought(exchanges[0].response), 'the main agent thinks aloud').toBeGreaterThan(0);
  expect(await first.locator('.part.reply .block.thinking').count(), 'its thinking is shown')
    .toBe(thought(exchanges[0].response));

  // An offline run: its header line says so, and the page says that no model ran.
  expect(lines[0].offline, 'the trace knows the offline demo model answered').toBe(true);
  expect(await page.locator('header').textContent()).toContain('no model ran');

  // The request that first sends a placeholder: new messages set apart from resent and changed.
  const placeholder = page.locator('details.request:has(.has-placeholders)').first();
  await placeholder.locator('summary').click();
  await expect.poll(() => placeholder.locator('.msg.changed .block.placeholder').count()).toBe(1);
  expect(await placeholder.locator('.msg.new').count(), 'its new prompt').toBeGreaterThan(0);
  expect(await placeholder.locator('.resent-group, .msg.resent').count(), 'what it resent')
    .toBeGreaterThan(0);
  expect(await placeholder.locator('.msg.changed:has(.block.placeholder) .state').textContent())
    .toBe('changed: placeholder');

  // The request that carried the hostile output, opened from its step of the chart.
  // (Your prompt holds it too, as typed; the tool's result follows in the next request.)
  const isCarrier = (block: any) =>
    block.type === 'tool_result' && block.content.includes('__pwned=2');
  const carrier = exchanges.find((e) => e.request.messages.at(-1).content.some?.(isCarrier));
  await page.locator(`svg .step[data-n="${carrier.n}"]`).click();
  const opened = page.locator(`#r${carrier.n}`);
  const message = 'a click on a step opens its request';
  await expect.poll(() => opened.getAttribute('open'), { message }).not.toBeNull();
  const result = await opened.locator('.block.tool_result pre').last().textContent();
  for (const text of HOSTILE) expect(result, 'the output, shown as text').toContain(text);

  // Nothing ran, nothing was made, nothing was fetched.
  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  expect(await page.locator('img').count(), 'no <img> element').toBe(0);
  expect(await page.locator('script').count(), 'the data island and page.js only').toBe(2);
  expect(requested, 'the page requests nothing but itself').toEqual([url]);
  expect(errors, 'no script errors and no CSP refusals').toEqual([]);
  const shown = await page.locator('body').innerText();
  expect(shown, 'counts said as "1 placeholder" or "2 placeholders"').not.toMatch(HEDGED);
  await page.close();
});

inBrowser(TITLE_S06, async () => {
  // 1. Two runs of s06's offline demo model, the second in the first one's folders, both with
  // --trace=trace.jsonl: the second appends to the first one's file.
  const prompt = 'run ls then read package.json';
  const args = ['--trace=trace.jsonl', '-p', prompt];
  const files = { 'package.json': '{ "name": "shop" }\n' };
  const first = await runChapter('s06', { offline: true, args, files });
  expect(first.code, `the first run failed:\n${first.stderr}`).toBe(0);
  const folders = { workspace: first.workspace, home: first.home };
  const second = await runChapter('s06', { offline: true, args, folders });
  expect(second.code, `the second run failed:\n${second.stderr}`).toBe(0);

  // What the file holds: numbered on through the file, as the page numbers it.
  const traceFile = join(first.workspace, 'trace.jsonl');
  const lines = readFileSync(traceFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  expect(lines.filter((l) => l.type === 'trace'), 'two header lines: two runs').toHaveLength(2);
  const posts: { n: number; run: number; request: any }[] = [];
  let [run, offset, highest] = [-1, 0, 0];
  for (const l of lines) {
    if (l.type === 'trace') [run, offset, highest] = [run + 1, offset + highest, 0];
    if (l.type !== 'exchange') continue;
    highest = Math.max(highest, l.n);
    if (l.path === '/v1/messages') posts.push({ n: offset + l.n, run, request: l.request });
  }
  expect(posts.map((p) => p.run), 'two requests a run').toEqual([0, 0, 1, 1]);
  const [, , firstOfRun2, last] = posts;

  // 2. The page, written by the command's own function: the first test runs the command as npm
  // does, through tsx (2 CPU-s of loading, not to be spent twice for the same code).
  const made = inspect([traceFile], REPO);
  expect(made.code, `npm run inspect failed:\n${made.stderr}`).toBe(0);
  const { page, requested, url, errors } = await open(made.stdout);

  // The runs apart: a divider a run in the list, a marker where run 2 starts in the chart.
  expect(await page.locator('svg .step').count()).toBe(4);
  expect(await page.locator('svg g.run-start').count(), 'a marker where run 2 starts').toBe(1);
  expect(await page.locator('.requests .event.run-start').count(), 'a line a run').toBe(2);
  const numbers = await page.locator('details.request').evaluateAll((all) =>
    all.map((line) => Number(line.getAttribute('data-n'))));
  expect(numbers, 'numbered on through the file').toEqual(numbers.map((_, i) => i + 1));

  // The cache: the second request of a run reads what the first wrote.
  const step = page.locator(`svg .step[data-n="${last.n}"]`);
  expect(await step.locator('rect.read').count(), 'read from the cache').toBe(1);
  expect(await step.locator('rect.written').count(), 'written to it').toBe(1);

  // The last request, opened from its step: compared with its own run's first, not run 1's.
  await step.click();
  const opened = page.locator(`#r${last.n}`);
  await expect.poll(() => opened.locator('.part.messages h3').count()).toBe(1);
  expect(await opened.locator('.meta').textContent()).toContain('run 2 of 2');
  expect(await opened.locator('.part.messages h3').textContent())
    .toContain(`against #${firstOfRun2.n}, this agent's previous request`);

  // Run 2's first request: the first of its run, whatever run 1 sent before it.
  const start = page.locator(`#r${firstOfRun2.n}`);
  await start.locator('summary').first().click();
  await expect.poll(() => start.locator('.part.messages h3').count()).toBe(1);
  expect(await start.locator('.part.messages h3').textContent())
    .toMatch(/this agent's first request in this run\)$/);
  expect(await start.locator('.part.system > summary').textContent()).not.toContain(' as in #');

  // The system prompt: its sections, with sizes, the breakpoint on the last.
  const sections = last.request.system.length;
  expect(sections, 's06 sends its system prompt as sections').toBeGreaterThan(1);
  const system = opened.locator('.part.system');
  const title = await system.locator('> summary').textContent();
  const shape = new RegExp(String.raw`^System prompt: (\d+) sections, [\d,]+ characters ` +
    String.raw`\(≈[\d,]+ tokens\) · a cache breakpoint at its end · as in #(\d+)$`);
  expect(title).toMatch(shape);
  expect(shape.exec(title!)!.slice(1).map(Number)).toEqual([sections, firstOfRun2.n]);
  await system.locator('> summary').click();
  await expect.poll(() => system.locator('.section').count()).toBe(sections);
  expect(await system.locator('.section').last().locator('.breakpoint').count()).toBe(1);
  expect(await system.locator('.section .breakpoint').count(), 'on the last section only').toBe(1);
  for (const size of await system.locator('.section > summary .size').allTextContents()) {
    expect(size).toMatch(/^[\d,]+ characters \(≈[\d,]+ tokens\)$/);
  }

  // The messages' breakpoint: on the last message's last block, and nowhere else.
  const lastMessage = opened.locator('.part.messages > .msg').last();
  expect(await opened.locator('.part.messages .breakpoint').count()).toBe(1);
  expect(await lastMessage.locator('.block').last().locator('+ .breakpoint').count()).toBe(1);

  expect(await page.locator('body').innerText()).not.toMatch(HEDGED);
  expect(requested, 'the page requests nothing but itself').toEqual([url]);
  expect(errors, 'no script errors and no CSP refusals').toEqual([]);
  await page.close();
});

inBrowser(TITLE_ODD, async () => {
  // String() of this throws, and so does `${…}`: a page that builds text so would stop drawing.
  const odd = { toString: 1 };
  const blocks = [
    { type: odd }, { type: 'text', text: odd }, { type: 'thinking', thinking: odd },
    { type: 'redacted_thinking', data: odd }, { type: 'tool_use', id: 'toolu_1', name: odd,
      input: odd }, { type: 'tool_result', tool_use_id: 'toolu_1', is_error: odd,
      content: [{ type: 'text', text: odd }, { type: odd }] },
    { type: 'tool_result', tool_use_id: odd, content: odd },
    { type: 'image', source: { type: odd, media_type: odd, data: odd } },
  ];
  const sent = (n: number) => ({
    model: odd, max_tokens: odd, stream: odd, thinking: odd,
    system: [{ type: 'text', text: odd }, { type: 'text', text: '# Rules\nBe brief.' }],
    tools: [{ name: odd, input_schema: { type: 'object' }, cache_control: odd }, odd],
    messages: [{ role: odd, content: blocks }, { role: 'user', content: odd }, odd,
      ...(n > 1 ? [{ role: 'assistant', content: blocks }, { role: 'user', content: 'x' }] : [])],
  });
  const times = (n: number) => ({ sent: 1e12 + n, firstByte: null, done: 1e12 + n + 5 });
  const lines = [
    { type: 'trace', version: 1, chapter: odd, workspace: odd, started: odd },
    { type: 'exchange', n: 1, agent: 'main', method: 'POST', path: '/v1/messages', try: 1,
      request: sent(1), status: 200, times: times(1),
      response: { content: blocks, stop_reason: odd, usage: { input_tokens: odd } } },
    { type: 'exchange', n: 2, agent: 'main', method: 'POST', path: '/v1/messages', try: 1,
      request: sent(2), status: 500, times: times(2), error: 'cut',
      response: { type: 'error', error: { type: odd, message: odd } } },
    { type: 'exchange', n: 3, agent: 'main', method: 'GET', path: '/v1/models/x', try: 1,
      request: null, status: 200, times: times(3), response: odd },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'inspect-odd-'));
  writeFileSync(join(dir, 'odd.jsonl'), lines.map((line) => JSON.stringify(line)).join('\n'));
  const made = inspect(['odd.jsonl'], dir);
  expect(made.code, made.stderr).toBe(0);
  const { page, errors } = await open(made.stdout);

  // Open every <details>, the ones each opening makes too, until none is left closed.
  for (let round = 0; round < 6; round++) {
    const closed = await page.evaluate(() => {
      const all = [...document.querySelectorAll('details:not([open])')] as HTMLDetailsElement[];
      for (const details of all) details.open = true;
      return all.length;
    });
    if (closed === 0) break;
    await page.waitForTimeout(50); // each opening draws its part on its toggle event
  }
  expect(errors, 'page.js threw nothing while drawing').toEqual([]);
  for (const n of [1, 2, 3]) {
    expect(await page.locator(`#r${n} .body`).textContent(), `request ${n} was drawn`)
      .toMatch(n < 3 ? '{"toString":1}' : /\{\s*"toString": 1\s*\}/); // #3: a reply shown whole
  }
  expect(await page.locator('#r1 .block-head').allTextContents())
    .toContain('tool call: {"toString":1} (toolu_1)');
  await page.close();
});

