/**
 * npm run inspect, end to end, in a real browser: s05 runs offline with --trace through tier-1
 * placeholders and an automatic compaction, with tool outputs that hold hostile HTML; the command
 * writes the page; headless Chromium opens it from file:// and a test looks at what a reader
 * would: the chart, the markers, the requests, and that the hostile text ran nothing.
 *
 * Chromium comes from Debian (`sudo apt-get install chromium-headless-shell`), driven by
 * playwright-core. Without it the test is skipped, saying so; under CI (CI set) it fails instead.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO, runRepl } from './helpers/run-chapter.ts';

const BROWSERS = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];
const executablePath = BROWSERS.find((path) => existsSync(path));
const INSTALL = `no Chromium at ${BROWSERS.join(' or ')}; install it: ` +
  'sudo apt-get install chromium-headless-shell';
const TITLE = 'the page of a real s05 run shows its requests, and its hostile outputs run nothing';

// Printed by a tool, shown on the page: each would run script or fetch something if read as HTML.
const HOSTILE = [
  '<script>window.__pwned=1</script>',
  '<img src=x onerror="window.__pwned=2">',
  '</textarea>',
];
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

const session = { browser: undefined as Browser | undefined };
beforeAll(async () => {
  if (!executablePath) return;
  // Started while the chapter runs (below): launching takes a few hundred ms.
  session.browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});
afterAll(async () => {
  await session.browser?.close();
});

if (!executablePath && process.env.CI) it(TITLE, () => expect.fail(INSTALL));
else if (!executablePath) it.skip(`${TITLE} — skipped: ${INSTALL}`);
else it(TITLE, async () => {
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
  const page = await session.browser!.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(3_000); // a click that cannot happen fails now, not at the test's timeout
  const url = `file://${pagePath}`;
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text()); // a CSP refusal says so here
  });
  await page.goto(url);

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

  await page.screenshot({ path: join(run.tempDir, 'inspect.png'), fullPage: true });
  await page.close();
});
