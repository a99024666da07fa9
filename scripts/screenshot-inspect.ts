/**
 * npm run screenshot:inspect — makes docs/inspect.png, the README's picture of the page that
 * `npm run inspect` writes.
 *
 * s05 runs OFFLINE (the demo model of shared/offline-model.ts, no key needed) in the REPL with
 * --trace and CONTEXT_WINDOW=10000, through a few prompts whose results are a few KB: old results
 * go out as placeholders, and the context passes the threshold, so s05 compacts. The trace is
 * made stable before it is drawn (the temporary paths, the session's ids and the clock are
 * replaced by fixed ones), so a second run draws the same page. scripts/inspect.ts makes the page;
 * headless Chromium opens it at 1280×1200 in the light scheme, opens the first request after the
 * compaction (as a click on its step in the chart does) and saves the picture: the header, the
 * chart, the list around the compaction, and that request's messages, the summary first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { cleanupTemp, REPO, runRepl } from '../tests/helpers/run-chapter.ts';

const OUT = join(REPO, 'docs/inspect.png');
// Tall enough for the opened request's messages under the chart and the list.
const VIEWPORT = { width: 1280, height: 1200 };
const BROWSERS = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];

// A small project to look at: one module of about 3 KB, over s05's 2,000 characters a result.
const ORDERS = [
  '// Orders: totals, discounts and the shipping rule.',
  ...Array.from({ length: 40 }, (_, i) => {
    const n = i + 1;
    const factor = (1 - n / 200).toFixed(3);
    return `export const rule${n} = (total: number) => total * ${factor}; // tier ${n}`;
  }),
].join('\n');
const FILES = { 'src/orders.ts': `${ORDERS}\n`, 'README.md': '# shop\n\nA small web shop.\n' };

// What the reader types: the offline model's commands (`run`, `read`, `then`).
const PROMPTS = [
  'read src/orders.ts then run seq 1 1000',
  'run seq 1001 1800 then run seq 1801 2600',
  'run seq 2601 3100',
  'run wc -l src/orders.ts',
  'run ls -la',
];

/**
 * The trace with what changes from run to run made fixed: the temporary folder, the session's
 * ids, the offline model's tag in tool ids and its thinking signatures, the process id, and the
 * clock. Exchange n is sent at 10:00:01 + (n - 1) × 120 ms and done 80 ms later (the offline model
 * answers in a few ms anyway); an event that came after exchange N, 20 ms before exchange N + 1.
 */
function stable(text: string, tempDir: string): string {
  const fixed = text
    .replaceAll(tempDir, '/home/reader')
    .replace(/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/g, '2b7e1d4c-0000-4000-8000-000000000000')
    .replace(/workspace-[0-9a-f]{8}/g, 'workspace-5f3a9c21')
    .replace(/compacted-[0-9a-f]{8}/g, 'compacted-9d41e7b0')
    .replace(/toolu_fake_[0-9a-f]{6}_/g, 'toolu_fake_0a1b2c_')
    .replace(/"signature":"[^"]*"/g, '"signature":"c2lnbmF0dXJl"')
    .replace(/"pid":\d+/, '"pid":4242');
  const started = Date.parse('2026-11-24T10:00:00.000Z');
  const sent = (n: number) => started + 1000 + (n - 1) * 120;
  const lines = fixed.trimEnd().split('\n').map((line) => JSON.parse(line));
  for (const line of lines) {
    if (line.type === 'trace') line.started = new Date(started).toISOString();
    if (line.type === 'event') line.at = sent(line.exchanges + 1) - 20;
    if (line.type !== 'exchange') continue;
    const { firstByte, done } = line.times;
    line.times = {
      sent: sent(line.n),
      firstByte: firstByte === null ? null : sent(line.n) + 40,
      done: done === null ? null : sent(line.n) + 80,
    };
  }
  return `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
}

const folder = mkdtempSync(join(tmpdir(), 'lah-screenshot-'));
try {
  // The run: one REPL session of the offline demo model, with --trace.
  const raw = join(folder, 'raw.jsonl');
  const run = await runRepl('s05', [...PROMPTS, 'exit'], {
    offline: true,
    args: [`--trace=${raw}`],
    env: { CONTEXT_WINDOW: '10000' },
    files: FILES,
    timeoutMs: 60_000,
  });
  const compactions = run.stdout.match(/\[compacting \(/g)?.length ?? 0;
  const placeholders = readFileSync(raw, 'utf8').match(/\[cleared to save context/g)?.length ?? 0;
  if (compactions === 0 || placeholders === 0) {
    const made = `${compactions} compactions and ${placeholders} placeholders`;
    throw new Error(`the run made ${made}; the picture needs both: change PROMPTS\n${run.stdout}`);
  }
  const trace = join(folder, 'trace.jsonl');
  writeFileSync(trace, stable(readFileSync(raw, 'utf8'), run.tempDir));
  cleanupTemp();

  // The page, as `npm run inspect` makes it: trace.html beside the trace.
  const options = { cwd: REPO, encoding: 'utf8' } as const;
  const made = spawnSync('npx', ['tsx', 'scripts/inspect.ts', trace], options);
  const page = made.stdout.trim().split('\n').at(-1) ?? '';
  if (made.status !== 0 || !existsSync(page)) throw new Error(`inspect failed:\n${made.stderr}`);

  // The picture: the page, light, with the first request after the compaction open.
  const executablePath = BROWSERS.find((path) => existsSync(path));
  if (!executablePath) throw new Error('no Chromium: apt-get install chromium-headless-shell');
  const args = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'];
  args.push('--disable-component-update', '--disable-sync', '--no-first-run');
  args.push('--font-render-hinting=none'); // the same glyphs from run to run
  const browser = await chromium.launch({ executablePath, args });
  try {
    const context = await browser.newContext({
      viewport: VIEWPORT,
      colorScheme: 'light',
      reducedMotion: 'reduce',
    });
    const tab = await context.newPage();
    await tab.goto(pathToFileURL(page).href, { waitUntil: 'load' });
    // The line after the compaction's own, its summary request aside: the first main request.
    const after = tab.locator('.event.compaction ~ details.request:not(.other)');
    const n = await after.evaluateAll((lines) => {
      const main = lines.find((line) => line.querySelector('.agent-main'));
      return main?.getAttribute('data-n') ?? null;
    });
    if (n === null) throw new Error('no request line after the compaction on the page');
    await tab.locator(`section.chart a.step[data-n="${n}"]`).click();
    await tab.locator(`details#r${n}[open] .body > *`).first().waitFor();
    // Back to the top: the header, the chart, the list, and the open request's first lines.
    await tab.evaluate('scrollTo(0, 0)');
    await tab.mouse.move(0, 0); // no hover effect in the picture
    mkdirSync(join(REPO, 'docs'), { recursive: true });
    await tab.screenshot({ path: OUT });
  } finally {
    await browser.close();
  }
  console.log(OUT);
} finally {
  cleanupTemp();
  rmSync(folder, { recursive: true, force: true });
}
