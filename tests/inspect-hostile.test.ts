/**
 * npm run inspect on traces no chapter would write, but a faulty compatible endpoint, a damaged
 * file or a very long run can leave: every field is untrusted, and the page's promise is "shown,
 * never a crash". Values whose toString is not a function, a reply nested 20,000 deep, more
 * requests than the stack has room for as arguments (300,000 crashed the page once; 25,000 here,
 * drawn with 150 KB of stack, not node's 984), a byte-order mark, a line too long to read, a
 * trace larger than the memory of the process that reads it. (page.js, on the same kind of
 * values, is tested in a real browser in tests/inspect-browser.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, readFileSync, statSync }
  from 'node:fs';
import { writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspect, traceLines } from '../scripts/inspect.ts';
import { readTrace, renderPage } from '../scripts/inspector/page.ts';
import { bundleChapter, originalPositions } from './helpers/bundle.ts';
import { REPO } from './helpers/run-chapter.ts';

const HEADER = { type: 'trace', version: 1, chapter: 's05_context_compact', workspace: '/w',
  started: '2026-11-24T10:00:00.000Z' };
const T0 = Date.parse(HEADER.started);
const jsonl = (...lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
const folder = () => mkdtempSync(join(tmpdir(), 'inspect-hostile-'));
const island = (html: string) =>
  JSON.parse(/<script type="application\/json" id="trace-data">([^]*?)<\/script>/.exec(html)![1]);

/** A POST /v1/messages exchange: `fields` replace or add to the usual ones. */
function exchange(n: number, fields: Record<string, unknown> = {}) {
  return {
    type: 'exchange', n, agent: 'main', method: 'POST', path: '/v1/messages', try: 1,
    request: { model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user',
      content: 'hi' }] },
    status: 200,
    response: { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hello' }],
      stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 2 } },
    times: { sent: T0 + n, firstByte: T0 + n + 1, done: T0 + n + 2 },
    ...fields,
  };
}

/**
 * npm run inspect <trace> in a process of its own, started with `flags` (node's limits): its page's
 * path, or a failure with what the process said. It runs on plain node, from scripts/inspect.ts
 * bundled as the chapters are (helpers/bundle.ts): through tsx it would spend 2 CPU-s loading
 * before it read a line. The bundle is copied beside page.js and page.css, which page.ts reads
 * from its own folder; into a folder named as the bundles' is, so that originalPositions() finds
 * its source map and a stack trace names the lines of page.ts.
 */
async function inspectIn(flags: string[], trace: string): Promise<string> {
  const run = spawnSync(process.execPath, [...flags, await bundled(), trace], { encoding: 'utf8' });
  expect(run.status, originalPositions(run.stderr.slice(0, 2000))).toBe(0);
  return run.stdout.trim();
}

function bundled(): Promise<string> {
  command ??= bundleChapter(join(REPO, 'scripts/inspect.ts')).then((bundle) => {
    const dir = join(folder(), 'lah-bundles');
    mkdirSync(dir);
    for (const asset of ['page.js', 'page.css']) {
      copyFileSync(join(REPO, 'scripts/inspector', asset), join(dir, asset));
    }
    copyFileSync(bundle, join(dir, basename(bundle)));
    return join(dir, basename(bundle));
  });
  return command;
}
let command: Promise<string> | undefined;

/**
 * The same bundle, given any file: its exit code and what it said, or killed after 30 s (a read
 * that never ends). Only for what may hang: the rest calls inspect() in this process.
 */
async function inspectWatched(file: string) {
  const run = spawnSync(process.execPath, [await bundled(), file], { encoding: 'utf8',
    timeout: 30_000, maxBuffer: 1 << 20 });
  return { code: run.status, killed: run.signal !== null, stderr: run.stderr };
}

// String() of this throws: "Cannot convert object to primitive value". So do `${…}` and Number().
const ODD = { toString: 1 };

describe('values whose toString is not a function', () => {
  const trace = jsonl(
    { ...HEADER, chapter: ODD, workspace: ODD, started: ODD },
    { type: 'event', event: 'context', at: T0, exchanges: 0, window: ODD, threshold: ODD },
    exchange(1, { request: { model: ODD, max_tokens: ODD, messages: [{ role: ODD, content: [
      { type: ODD, text: ODD }, { type: 'tool_result', tool_use_id: ODD, content: ODD }] }] } }),
    { type: 'event', event: 'compaction', at: T0 + 5, exchanges: 1, why: ODD, messages: ODD,
      before: ODD, after: ODD },
    exchange(2, { status: 529, response: { type: 'error', error: { type: ODD, message: ODD } } }),
    exchange(3, { response: { content: [{ type: 'tool_use', name: ODD, id: ODD, input: ODD }],
      stop_reason: ODD, usage: { input_tokens: ODD } } }),
  );

  it('are shown as their JSON, in a page that is drawn', () => {
    const html = renderPage(trace);
    expect(html).toContain('{&quot;toString&quot;:1}');
    expect(island(html).rows).toHaveLength(3);
    expect(html).toMatch(/<details class="request" id="r2"[^]*?529 \{&quot;toString&quot;:1\}/);
  });

  it('npm run inspect writes the page (exit 0), no TypeError and no stack', () => {
    const dir = folder();
    writeFileSync(join(dir, 'odd.jsonl'), trace);
    const outcome = inspect(['odd.jsonl'], dir);
    expect(outcome.stderr).not.toMatch(/TypeError|\n\s+at /);
    expect(outcome.code).toBe(0);
  });
});

describe('shapes that break a recursive or spread-out reader', () => {
  it('draws a reply nested 20,000 deep, cut where it gets too deep to show', () => {
    // Written as text: JSON.stringify, too, overflows the stack on it.
    const deep = `${'['.repeat(20_000)}"the bottom"${']'.repeat(20_000)}`;
    const reply = JSON.stringify(exchange(1, { response: { content: 'DEEP' } }));
    const request = JSON.stringify(exchange(2, { request: { model: 'm',
      messages: [{ role: 'user', content: 'DEEP' }] } }));
    const html = renderPage([JSON.stringify(HEADER), reply, request]
      .map((line) => line.replace('"DEEP"', deep)).join('\n'));
    const rows = island(html).rows;
    expect(rows).toHaveLength(2);
    expect(JSON.stringify(rows[0].response)).toContain('nested too deep');
  });

  // Math.max(...values) puts each value on the stack, 8 bytes an argument, and throws a
  // RangeError when they do not fit: from about 125,000 values with node's 984 KB of stack, as
  // 300,000 requests did. Drawn by a process given 150 KB, the page of 25,000 requests (200 KB
  // of arguments) shows the same bug at a sixth of the work; node needs under 80 KB to start.
  it('draws 25,000 requests with 150 KB of stack: no Math.max(...) over all of them', async () => {
    const line = (n: number) => `{"type":"exchange","n":${n},"method":"POST",` +
      `"path":"/v1/messages","times":{"sent":${T0 + n}},"response":{"usage":` +
      `{"input_tokens":${n % 97},"output_tokens":1}}}`;
    const lines = [JSON.stringify(HEADER)];
    for (let n = 1; n <= 25_000; n++) lines.push(line(n));
    const file = join(folder(), 'many.jsonl');
    writeFileSync(file, lines.join('\n'));
    const html = readFileSync(await inspectIn(['--stack-size=150'], file), 'utf8');
    expect(html).toContain('25,000 requests');
  });

  it('reads a trace whose header follows a UTF-8 byte-order mark', () => {
    const trace = readTrace(`\uFEFF${jsonl(HEADER, exchange(1))}`);
    expect(trace.exchanges).toHaveLength(1);
  });
});

describe('reading a trace as a stream of lines', () => {
  it('gives every line whole, across the chunks it is read in, and skips one too long', () => {
    const dir = folder();
    const file = join(dir, 'lines.jsonl');
    // Lines of 3 MB and of a few bytes: the reader reads a megabyte at a time.
    const long = (c: string) => c.repeat(3_000_000);
    writeFileSync(file, `a\n${long('b')}\n\ncé€😀\n${long('d')}\ne`);
    const lines = [...traceLines(file)];
    expect(lines.map((l) => [l[0], l.length])).toEqual(
      [['a', 1], ['b', 3_000_000], [undefined, 0], ['c', 5], ['d', 3_000_000], ['e', 1]]);
    expect(lines[3]).toBe('cé€😀');
    const cut = [...traceLines(file, { longest: 2_000_000 })];
    expect(cut.map((l) => l.slice(0, 1)), 'the two long lines, each replaced by a mark')
      .toEqual(['a', '(', '', 'c', '(', 'e']);
    expect(cut[1]).toMatch(/^\(a line of more than 2,000,000 bytes, not read\)$/);
  });

  it('reads a trace larger than the memory of the process that reads it', async () => {
    // 24 requests, each sending the same 1.1 MB conversation again and one new message: a 26 MB
    // trace, a page of about 1 MB, read by a process allowed 20 MB of heap. A line at a time, the
    // reader needs about 11 MB here; one that held the whole trace as a string needs over 32.
    const dir = folder();
    const file = join(dir, 'big.jsonl');
    const old = Array.from({ length: 300 }, (_, i) =>
      ({ role: i % 2 ? 'assistant' : 'user', content: `${i} `.repeat(1_000) }));
    const fd = openSync(file, 'w');
    try {
      writeSync(fd, `${JSON.stringify(HEADER)}\n`);
      for (let n = 1; n <= 24; n++) {
        const messages = [...old, { role: 'user', content: `request ${n}` }];
        writeSync(fd, `${JSON.stringify(exchange(n, { request: { model: 'm', messages } }))}\n`);
      }
    } finally {
      closeSync(fd);
    }
    expect(statSync(file).size).toBeGreaterThan(26e6);
    const page = readFileSync(await inspectIn(['--max-old-space-size=20'], file), 'utf8');
    const once = JSON.stringify(old).length; // 1.1 MB
    expect(page.length, 'the page holds the conversation once').toBeLessThan(2 * once);
    expect(island(page).rows).toHaveLength(24);
  });
});

describe('files that are not traces', () => {
  // Opened and read as a file, /dev/zero gave zeros for ever and a FIFO with no writer blocked
  // the open: npm run inspect never returned. Now: one line, exit 2, before anything is read.
  it('refuses a device, a FIFO and a folder with one line, exit 2, and never waits', async () => {
    const dir = folder();
    const fifo = join(dir, 'pipe.jsonl');
    const made = spawnSync('mkfifo', [fifo]);
    expect(made.status, `mkfifo: ${made.stderr}`).toBe(0);
    for (const [file, kind] of [['/dev/zero', 'device'], [fifo, 'FIFO'], [dir, 'directory']]) {
      const run = await inspectWatched(file);
      expect(run.killed, `${file}: still reading after 30 s`).toBe(false);
      expect(run.code, `${file}: ${run.stderr}`).toBe(2);
      expect(run.stderr.trim().split('\n'), `${file}: one line`).toHaveLength(1);
      expect(run.stderr).toContain(`cannot read ${file}: it is a ${kind}`);
      expect(run.stderr).toContain('not a regular file');
    }
  });

  it('refuses a trace of a version it does not know, saying which', () => {
    const dir = folder();
    for (const [name, lines] of [
      ['v99.jsonl', [{ ...HEADER, version: 99 }, exchange(1)]],
      ['later-run.jsonl', [HEADER, exchange(1), { ...HEADER, version: 2 }, exchange(1)]],
      ['odd.jsonl', [{ ...HEADER, version: '1' }, exchange(1)]],
    ] as const) {
      writeFileSync(join(dir, name), jsonl(...lines));
      const outcome = inspect([name], dir);
      expect(outcome.code, `${name}: ${outcome.stderr}`).toBe(2);
      expect(outcome.stderr.split('\n'), 'one line').toHaveLength(1);
      expect(outcome.stderr).toMatch(/a trace of version \S+, and this inspector reads version 1/);
    }
    writeFileSync(join(dir, 'old.jsonl'), jsonl({ ...HEADER, version: undefined }, exchange(1)));
    expect(inspect(['old.jsonl'], dir).code, 'a header with no version is read as 1').toBe(0);
  });
});
