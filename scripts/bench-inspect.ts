/**
 * npm run bench:inspect — how `npm run inspect` copes with a long trace: about 1,000 requests.
 *
 * The trace: ONE s05 REPL session (runRepl, as the tests do) with --trace, against the local fake
 * of the Messages API through a small window (CONTEXT_WINDOW=40000, and the fake's window the
 * same), so tier 1 placeholders and several automatic compactions happen, and the model asks for
 * one with the `compact` tool once. Each of the 36 prompts is answered by 27 rounds of scripted
 * tool calls (`seq` with a few KB of output, read_file of a file of a few KB, a small `wc`) and a
 * final text; the summary requests get a fixed summary.
 *
 * Then, each with its target: the wall time of `npx tsx scripts/inspect.ts <trace>` as a
 * subprocess, and of renderPage in-process; the page's size; and, in headless Chromium, the page's
 * DOMContentLoaded and load times (Navigation Timing) over three loads, and whether the chart and
 * the first request line are there and visible at DOMContentLoaded, before any later script ran,
 * and the whole chart with them (no scrolling sideways to see the end of the run).
 *
 *   npm run bench:inspect            the figures; the temporary folder goes
 *   npm run bench:inspect -- --keep  the figures; the trace and its page stay (paths printed)
 *   npm run bench:inspect -- --large instead: a 600 MB trace, past the longest string Node can
 *                                    make (512 MB), and what inspect makes of it (see largeTrace)
 *
 * A measuring tool, not a test: it prints figures and asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync }
  from 'node:fs';
import { writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { reply, text, toolUse, type Reply, type ReplyBlock } from '../shared/fake-anthropic.ts';
import { cleanupTemp, REPO, runRepl } from '../tests/helpers/run-chapter.ts';

const TURNS = 36;
const ROUNDS = 27; // tool rounds a turn: with the final text, 28 requests (s05 allows 30)
const COMPACT_TURN = 20; // in this turn the model also calls `compact`, in a round of its own
// Tokens. s05 keeps half of a small window free, so compaction starts at 20,000.
const WINDOW = 40_000;
const KEEP = process.argv.includes('--keep');

// The targets: the page is for a reader's browser, opened right after a run.
const TARGET = { inspectSeconds: 3, pageMb: 10, loadSeconds: 2 };
type Figure = [name: string, value: string, target: string]; // target: '< 3 s ✓', or ''
const mark = (ok: boolean, target: string) => `${target} ${ok ? '✓' : '✗'}`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const seconds = (since: number) => (performance.now() - since) / 1000;

// ── The workspace and the script: turn k, round r → one tool call ──────────────────────────────
// data/log.txt: 60 lines of about 60 characters, 3.7 KB: over s05's 2,000 characters, so tier 1
// replaces it once three newer results came.
const LOG = Array.from({ length: 60 }, (_, i) => {
  const n = String(i + 1).padStart(2, '0');
  return `2026-11-24T10:${n}:00Z worker-${(i % 4) + 1} finished job ${1000 + i} in ${i * 7} ms`;
});
const FILES = { 'data/log.txt': `${LOG.join('\n')}\n`, 'data/small.txt': 'one\ntwo\nthree\n' };

/** Round r of turn k: what the model says, and the one call it makes. */
function round(k: number, r: number): ReplyBlock[] {
  const id = `toolu_bench_${k}_${r}`; // ids of our own, unique in the whole session
  const call = (name: string, input: unknown) => toolUse(name, input, id);
  // seq 1000 1699: 700 lines of 5 characters, 3.5 KB; the numbers move, so no two are alike.
  const from = k * 1000 + r * 10;
  const seq = `seq ${from} ${from + 699}`;
  if (r % 3 === 0) return [text('Counting.'), call('bash', { command: seq })];
  const read = { file_path: 'data/log.txt' };
  if (r % 3 === 1) return [text('Reading the log.'), call('read_file', read)];
  return [text('Checking.'), call('bash', { command: 'wc -l data/small.txt data/log.txt' })];
}

const prompt = (k: number) => `step ${k}: go through the log and the counts, part ${k}`;
const answer = (k: number) => `Step ${k} done: the log has 60 lines, the counts are complete.`;
const SUMMARY =
  'Requests: numbered steps over data/log.txt and seq counts. Files: data/log.txt (60 lines), ' +
  'data/small.txt. Errors: none. Decisions: none. State: the steps so far are done. Next step: ' +
  'wait for the next step.';

/** The scripted model: its reply depends on the turn (`step k:`) and the replies given in it. */
function scriptedModel(): (body: any) => Reply {
  let current = 0;
  let stage = 0;
  return (body) => {
    // s05's summary request offers no tools.
    if (body.tools === undefined) return reply(text(SUMMARY));
    const last = body.messages.at(-1);
    const opens = typeof last.content === 'string' && last.content.match(/^step (\d+):/);
    if (opens) [current, stage] = [Number(opens[1]), 0];
    else stage++;
    if (stage < ROUNDS) return reply(...round(current, stage));
    if (current === COMPACT_TURN && stage === ROUNDS) {
      const focus = 'the steps done so far';
      return reply(text('Compacting.'), toolUse('compact', { focus }, 'toolu_compact'));
    }
    return reply(text(answer(current)));
  };
}

// ── Making the trace ────────────────────────────────────────────────────────────────────────────
interface Made {
  figures: Figure[];
  exchanges: number; // lines of the trace that are exchanges: the page's request lines
  requests: number; // of them POST /v1/messages: the chart's steps
}

/** One long s05 session with --trace, and what the trace holds. */
async function makeTrace(trace: string): Promise<Made> {
  const started = performance.now();
  const prompts = Array.from({ length: TURNS }, (_, i) => prompt(i + 1));
  let run;
  try {
    run = await runRepl('s05', [...prompts, 'exit'], {
      args: [`--trace=${trace}`],
      respond: scriptedModel(),
      fake: { contextWindow: WINDOW },
      env: { CONTEXT_WINDOW: String(WINDOW) },
      files: FILES,
      // A summary request over five turns of results is too long for this window: s05 is refused,
      // then asks again without the older half (compact.ts). The page shows those 400s too.
      expectRefused: true,
      timeoutMs: 600_000,
    });
  } finally {
    cleanupTemp();
  }
  const took = seconds(started);
  const compactions = [...run.stdout.matchAll(/\[compacting \(([^)]*)\)/g)].map((m) => m[1]);

  // What the trace holds, read as any tool would: one JSON object a line.
  const lines = readFileSync(trace, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const exchanges = lines.filter((l) => l.type === 'exchange');
  const requests = exchanges.filter((l) => l.method === 'POST' && l.path === '/v1/messages');
  const placeholders = new Set<string>();
  for (const { request } of requests) {
    for (const message of request.messages) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content) {
        const content = typeof block.content === 'string' ? block.content : '';
        if (content.startsWith('[cleared to save context')) placeholders.add(block.tool_use_id);
      }
    }
  }
  const summaries = requests.filter((r) => r.agent === 'compaction').length;
  const refused = requests.filter((r) => r.status === 400).length;
  const auto = compactions.filter((why) => why === 'auto').length;
  const figures: Figure[] = [
    ['requests to /v1/messages', fmt(requests.length), mark(requests.length >= 950, 'about 1,000')],
    ['  of them summary requests', fmt(summaries), ''],
    ['  of them refused (400 prompt is too long)', fmt(refused), ''],
    ['tool results sent as placeholders', fmt(placeholders.size), ''],
    ['compactions: automatic / asked for', `${auto} / ${compactions.length - auto}`, ''],
    ['trace size', mb(statSync(trace).size), ''],
    ['time to make the trace', `${took.toFixed(1)} s`, ''],
  ];
  return { figures, exchanges: exchanges.length, requests: requests.length };
}

// ── Making the page ─────────────────────────────────────────────────────────────────────────────
/** `npx tsx scripts/inspect.ts <trace>`, as a reader runs it: the page's path, or '' on failure. */
function runInspect(trace: string, figures: Figure[]): string {
  const started = performance.now();
  const options = { cwd: REPO, encoding: 'utf8' } as const;
  const made = spawnSync('npx', ['tsx', 'scripts/inspect.ts', trace], options);
  const took = seconds(started);
  const page = made.stdout.trim().split('\n').at(-1) ?? '';
  if (made.status !== 0 || !page || !existsSync(page)) {
    console.log(`\n  inspect failed (exit ${made.status}):\n${made.stderr}`);
    return '';
  }
  const ok = mark(took < TARGET.inspectSeconds, `< ${TARGET.inspectSeconds} s`);
  figures.push(['npx tsx scripts/inspect.ts', `${took.toFixed(2)} s`, ok]);
  return resolve(page);
}

/** renderPage in this process, if the inspector exports it: the first call, then the best of 3. */
async function renderInProcess(trace: string): Promise<Figure[]> {
  const module: any = await import('./inspector/page.ts').catch(() => ({}));
  if (typeof module.renderPage !== 'function') return [['renderPage in-process', 'not found', '']];
  const text = readFileSync(trace, 'utf8');
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    module.renderPage(text);
    times.push(seconds(started));
  }
  const first = mark(times[0] < TARGET.inspectSeconds, `< ${TARGET.inspectSeconds} s`);
  return [
    ['renderPage in-process, first call', `${times[0].toFixed(2)} s`, first],
    ['renderPage in-process, best of 3', `${Math.min(...times).toFixed(2)} s`, ''],
  ];
}

// ── The page in a browser ───────────────────────────────────────────────────────────────────────
// What the page draws in Node (scripts/inspector/page.ts): the chart's steps and the request lines.
const CHART = 'section.chart svg';
const STEPS = 'section.chart svg .step';
const ROWS = '.requests details.request';
const BROWSERS = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];

/** What is on the page at DOMContentLoaded: before any script that runs later could draw more. */
interface AtReady {
  steps: number;
  rows: number;
  chartVisible: boolean;
  chartWhole: boolean;
  firstRowVisible: boolean;
}

// Runs in the page before its own scripts (Playwright injects it, past the page's CSP). Plain
// JavaScript in a string, like the expressions below: tsx would wrap a function's named inner
// functions in a helper (__name) that the page does not have. Visible: laid out with a size, not
// hidden, and begun in the first view.
const AT_READY = `
document.addEventListener('DOMContentLoaded', () => {
  const visible = (el) => {
    if (!el) return false;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    const shown = style.visibility !== 'hidden' && style.display !== 'none';
    return shown && box.width > 0 && box.height > 0 && box.top < innerHeight;
  };
  window.__atReady = {
    steps: document.querySelectorAll(${JSON.stringify(STEPS)}).length,
    rows: document.querySelectorAll(${JSON.stringify(ROWS)}).length,
    chartVisible: visible(document.querySelector(${JSON.stringify(CHART)})),
    chartWhole: (() => {
      const box = document.querySelector(${JSON.stringify(CHART)})?.getBoundingClientRect();
      return Boolean(box) && box.left >= 0 && box.right <= document.documentElement.clientWidth;
    })(),
    firstRowVisible: visible(document.querySelector(${JSON.stringify(ROWS)})),
  };
});`;

// Navigation Timing: milliseconds from the start of the navigation.
const NAVIGATION = "performance.getEntriesByType('navigation')[0]";

/** Three loads of the page at 1280×800, each in a fresh context, so nothing is cached. */
async function inBrowser(file: string, made: Made): Promise<Figure[]> {
  const executablePath = BROWSERS.find((path) => existsSync(path));
  if (!executablePath) return [['browser', 'none (apt-get install chromium-headless-shell)', '']];
  const { chromium } = await import('playwright-core');
  const args = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'];
  args.push('--disable-component-update', '--disable-sync', '--no-first-run');
  const browser = await chromium.launch({ executablePath, args });
  const loads: { ready: number; load: number; at: AtReady }[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const tab = await context.newPage();
      await tab.addInitScript({ content: AT_READY });
      await tab.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 60_000 });
      // loadEventEnd is set once the load handlers are done: just after goto returns.
      await tab.waitForFunction(NAVIGATION + '.loadEventEnd > 0');
      const timing: { ready: number; load: number } = await tab.evaluate(
        `({ ready: ${NAVIGATION}.domContentLoadedEventEnd, load: ${NAVIGATION}.loadEventEnd })`,
      );
      const at: AtReady = await tab.evaluate('window.__atReady');
      loads.push({ ...timing, at });
      await context.close();
    }
  } finally {
    await browser.close();
  }
  type Load = (typeof loads)[number];
  const each = (pick: (l: Load) => number) => loads.map((l) => `${(pick(l) / 1000).toFixed(2)} s`);
  const worst = (pick: (l: Load) => number) => Math.max(...loads.map(pick));
  const ok = (ms: number) => mark(ms < TARGET.loadSeconds * 1000, `< ${TARGET.loadSeconds} s`);
  const yes = (b: boolean) => (b ? 'yes ✓' : 'no ✗');
  const { at } = loads[0];
  const all = (count: number, expected: number) => mark(count === expected, `all ${fmt(expected)}`);
  return [
    ['DOMContentLoaded, 3 loads', each((l) => l.ready).join(', '), ok(worst((l) => l.ready))],
    ['load, 3 loads', each((l) => l.load).join(', '), ok(worst((l) => l.load))],
    ['at DOMContentLoaded: chart steps', fmt(at.steps), all(at.steps, made.requests)],
    ['at DOMContentLoaded: request lines', fmt(at.rows), all(at.rows, made.exchanges)],
    ['at DOMContentLoaded: chart visible', yes(at.chartVisible), ''],
    ['at DOMContentLoaded: the whole chart in view', yes(at.chartWhole), ''],
    ['at DOMContentLoaded: first request line visible', yes(at.firstRowVisible), ''],
  ];
}

// ── --large: a trace larger than a string can be ───────────────────────────────────────────────
const LARGE_BYTES = 600e6;
const LARGE_WINDOW_CHARS = 700_000; // about 175,000 tokens: a session near a 200K window

/**
 * A synthetic trace of 600 MB, shaped like a long s05/s06 session near a 200K window: each request
 * sends the whole conversation again, which grows by a tool call and its 3.5 KB result a request
 * until a compaction starts it again from a summary. About 1,700 requests. Written a line at a
 * time, never as one string. Then inspect() makes its page, in this process, to see its peak
 * memory (the command's main() calls the same function).
 */
async function largeTrace(folder: string): Promise<Figure[]> {
  const file = join(folder, 'large.jsonl');
  const fd = openSync(file, 'w', 0o600);
  const T0 = Date.parse('2026-11-24T10:00:00Z');
  const header = { type: 'trace', version: 1, run: 'large', chapter: 's05_context_compact',
    workspace: '/bench', started: new Date(T0).toISOString() };
  const start = [JSON.stringify({ role: 'user', content: 'go through the counts' })];
  let [written, n, size, compactions] = [writeSync(fd, `${JSON.stringify(header)}\n`), 0, 0, 0];
  let messages = [...start];
  const made = performance.now();
  try {
    while (written < LARGE_BYTES) {
      n++;
      const id = `toolu_large_${n}`;
      const command = `seq ${n} ${n + 699}`;
      const call = { type: 'tool_use', id, name: 'bash', input: { command } };
      const response = { id: `msg_${n}`, type: 'message', role: 'assistant', content: [call],
        stop_reason: 'tool_use', usage: { input_tokens: 30 + Math.round(size / 4),
          output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
      const sent = T0 + n * 2000;
      const times = { sent, firstByte: sent + 300, done: sent + 900 };
      const body = `{"model":"claude-sonnet-5-5","max_tokens":8000,"stream":true,` +
        `"system":"You are a coding agent.","messages":[${messages.join(',')}]}`;
      written += writeSync(fd, `{"type":"exchange","run":"large","n":${n},"agent":"main",` +
        `"method":"POST","path":"/v1/messages","try":1,"request":${body},"status":200,` +
        `"response":${JSON.stringify(response)},"times":${JSON.stringify(times)}}\n`);
      const output = Array.from({ length: 700 }, (_, i) => n + i).join('\n');
      const added = [JSON.stringify({ role: 'assistant', content: [call] }), JSON.stringify(
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] })];
      messages.push(...added);
      size += added.join('').length;
      if (size > LARGE_WINDOW_CHARS) { // a compaction: a summary, and the conversation again
        compactions++;
        const summary = `[Earlier conversation, compacted. ${n} requests so far.]`;
        messages = [JSON.stringify({ role: 'user', content: summary }), ...start];
        size = 0;
      }
    }
  } finally {
    closeSync(fd);
  }
  const figures: Figure[] = [
    ['trace size', mb(statSync(file).size), '> 512 MB'],
    ['  requests / compactions', `${fmt(n)} / ${compactions}`, ''],
    ['  time to write it', `${seconds(made).toFixed(1)} s`, ''],
  ];
  const { inspect } = await import('./inspect.ts');
  const before = performance.now();
  const outcome = inspect([file], REPO);
  const took = seconds(before);
  figures.push(['inspect: exit code', String(outcome.code), mark(outcome.code === 0, '0')]);
  if (outcome.code !== 0) figures.push(['  it said', outcome.stderr.slice(0, 120), '']);
  else figures.push(['  page size', mb(statSync(outcome.stdout).size), '']);
  figures.push(['  time', `${took.toFixed(1)} s`, '']);
  const peak = process.resourceUsage().maxRSS * 1024; // bytes (maxRSS is in KB)
  figures.push(['  peak memory of this process (RSS)', mb(peak), mark(peak < 2e9, '< 2 GB')]);
  return figures;
}

// ── Main ────────────────────────────────────────────────────────────────────────────────────────
if (process.argv.includes('--large')) {
  const folder = mkdtempSync(join(tmpdir(), 'lah-bench-inspect-large-'));
  console.log(`bench:inspect --large: a ${mb(LARGE_BYTES)} synthetic trace, and its page`);
  try {
    const figures = await largeTrace(folder);
    for (const [name, value, target] of figures) {
      console.log(`  ${name.padEnd(40)}${value.padStart(24)}  ${target}`);
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  process.exit(0);
}

const folder = mkdtempSync(join(tmpdir(), 'lah-bench-inspect-'));
const trace = join(folder, 'trace.jsonl'); // inspect writes trace.html beside it
const figures: Figure[] = [];
let page = '';
console.log(
  `bench:inspect: one s05 REPL session of ${TURNS} prompts, ${ROUNDS} tool rounds each, ` +
    `CONTEXT_WINDOW=${WINDOW}, with --trace`,
);
const started = performance.now();
try {
  process.stdout.write('  making the trace …');
  const made = await makeTrace(trace);
  figures.push(...made.figures);
  console.log(` ${seconds(started).toFixed(1)} s`);

  if (!existsSync(join(REPO, 'scripts/inspect.ts'))) {
    console.log('  (scripts/inspect.ts does not exist yet: no page to measure)');
  } else {
    process.stdout.write('  making the page and loading it in Chromium …');
    const before = performance.now();
    page = runInspect(trace, figures);
    if (page) {
      figures.push(...(await renderInProcess(trace)));
      const size = statSync(page).size;
      const ok = mark(size < TARGET.pageMb * 1e6, `< ${TARGET.pageMb} MB`);
      figures.push(['page size', mb(size), ok]);
      figures.push(...(await inBrowser(page, made)));
    }
    console.log(` ${seconds(before).toFixed(1)} s`);
  }
} finally {
  if (!KEEP) rmSync(folder, { recursive: true, force: true }); // the page too
}

console.log(`\n── bench:inspect ${'─'.repeat(80)}`);
for (const [name, value, target] of figures) {
  console.log(`  ${name.padEnd(48)}${value.padStart(24)}  ${target}`);
}
console.log(`total wall time ${seconds(started).toFixed(1)} s`);
if (KEEP) console.log(`trace: ${trace}${page ? `\npage:  ${page}` : ''}`);
