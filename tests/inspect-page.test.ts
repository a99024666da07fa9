/**
 * npm run inspect's page (scripts/inspector/page.ts) and command (scripts/inspect.ts), on traces
 * written here by hand in the format shared/trace.ts records: what the page holds for a given
 * trace, that nothing in a trace can become markup, and that the page grows linearly with the
 * run. tests/inspect-browser.test.ts opens the page of a real chapter's run in a browser.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readFileSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { inspect, newestTrace, pagePath } from '../scripts/inspect.ts';
import { CACHE_PRICE, NotATraceError, PRICES, readTrace, renderPage, replay }
  from '../scripts/inspector/page.ts';
import { reply, text as replyText } from '../shared/fake-anthropic.ts';
import { traceFolder } from '../shared/trace.ts';
import { runChapter } from './helpers/run-chapter.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));

// ── Traces by hand ─────────────────────────────────────────────────────────────────────────────

const HEADER = {
  type: 'trace', version: 1, chapter: 's05_context_compact', workspace: '/home/me/app',
  started: '2026-11-24T10:00:00.000Z',
};
const T0 = Date.parse(HEADER.started);
const MODEL = 'claude-sonnet-5-5';
const TOOLS = [{ name: 'bash', description: 'Run a command.', input_schema: { type: 'object' } }];

type Message = { role: 'user' | 'assistant'; content: any };
const user = (content: any): Message => ({ role: 'user', content });
const assistant = (content: any[]): Message => ({ role: 'assistant', content });
const text = (t: string) => ({ type: 'text', text: t });
const call = (id: string, command: string) =>
  ({ type: 'tool_use', id, name: 'bash', input: { command } });
const result = (id: string, content: string) => ({ type: 'tool_result', tool_use_id: id, content });
const PLACEHOLDER = '[cleared to save context: the result of bash {"command":"seq 1 2000"}, ' +
  '8906 characters. Run it again if needed.]';
const HI = [user('hi')];

interface ExchangeOptions {
  agent?: string;
  try?: number;
  status?: number;
  response?: unknown;
  usage?: Record<string, number>;
  model?: string;
  error?: string;
}

/** A POST /v1/messages exchange, sent at T0 + n seconds, answered with `reply`. */
function exchange(n: number, messages: Message[], reply: any[], options: ExchangeOptions = {}) {
  const usage = options.usage ?? {
    input_tokens: 100 * n, output_tokens: 20, cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const stop = reply.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const response = options.response !== undefined ? options.response : {
    id: `msg_${n}`, type: 'message', role: 'assistant', model: MODEL, content: reply,
    stop_reason: stop, usage,
  };
  const model = options.model ?? MODEL;
  return {
    type: 'exchange', n, agent: options.agent ?? 'main', method: 'POST', path: '/v1/messages',
    try: options.try ?? 1,
    request: { model, max_tokens: 8000, system: 'Be brief.', tools: TOOLS, messages, stream: true },
    status: options.status ?? 200, response, ...(options.error ? { error: options.error } : {}),
    times: { sent: T0 + n * 1000, firstByte: T0 + n * 1000 + 50, done: T0 + n * 1000 + 400 },
  };
}

const compaction = (exchanges: number, why: string, more: object = {}) => ({
  type: 'event', event: 'compaction', at: T0 + exchanges * 1000 + 500, exchanges, agent: 'main',
  why, messages: 7, before: 12_000, after: 3_000, ...more,
});
const jsonl = (...lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

/**
 * A run of `turns` turns, each a prompt, a tool call with an output of `outputSize` characters
 * and an answer: two requests a turn, each sending the whole conversation so far, as chapters do.
 */
function conversation(turns: number, outputSize = 2_000): unknown[] {
  const messages: Message[] = [];
  const lines: unknown[] = [HEADER];
  let n = 0;
  for (let k = 1; k <= turns; k++) {
    messages.push(user(`turn ${k}: count to ${k}`));
    const calling = [text(`Counting to ${k}.`), call(`toolu_${k}`, `seq 1 ${k}`)];
    lines.push(exchange(++n, [...messages], calling));
    messages.push(assistant(calling));
    const output = `${k} `.repeat(outputSize / 2).slice(0, outputSize);
    messages.push(user([result(`toolu_${k}`, output)]));
    const answer = [text(`Done: turn ${k}.`)];
    lines.push(exchange(++n, [...messages], answer));
    messages.push(assistant(answer));
  }
  return lines;
}

// ── Reading what the page holds ────────────────────────────────────────────────────────────────

/** The data island page.js reads: each distinct value once, and a row per exchange. */
function island(html: string): { values: any[]; rows: any[]; runs: number } {
  const found = /<script type="application\/json" id="trace-data">([^]*?)<\/script>/.exec(html);
  expect(found, 'the page must keep its data in <script type="application/json">').not.toBeNull();
  return JSON.parse(found![1]);
}
const steps = (html: string) =>
  [...html.matchAll(/<a class="step[^"]*" data-n="(\d+)"/g)].map((m) => Number(m[1]));
const count = (html: string, pattern: RegExp) => (html.match(pattern) ?? []).length;
/** The one line of the list for request `n`. */
const line = (html: string, n: number) =>
  new RegExp(`<details class="request" id="r${n}"[^]*?</summary>`).exec(html)?.[0] ?? '';

// ── readTrace ──────────────────────────────────────────────────────────────────────────────────

describe('readTrace', () => {
  it('reads the header, the exchanges in the order sent and the events', () => {
    const context = {
      type: 'event', event: 'context', at: T0, exchanges: 0, agent: 'main',
      window: 20_000, threshold: 10_000,
    };
    // Lines land as exchanges complete: the second may be written first.
    const trace = readTrace(jsonl(HEADER, context, exchange(2, HI, []), exchange(1, HI, [])));
    expect(trace.header.chapter).toBe('s05_context_compact');
    expect(trace.exchanges.map((e) => e.n), 'sorted by n: as sent').toEqual([1, 2]);
    expect(trace.events.map((e) => e.event)).toEqual(['context']);
    expect(trace.skipped).toBe(0);
  });

  it('skips a last line cut off mid-write, and lines of kinds it does not know: says so', () => {
    const whole = jsonl(HEADER, exchange(1, HI, [text('hello')]),
      { type: 'something-new', at: T0 }, { type: 'event', event: 'unheard-of', at: T0 });
    const cut = JSON.stringify(exchange(2, HI, [])).slice(0, 80);
    const trace = readTrace(whole + cut);
    expect(trace.exchanges.map((e) => e.n)).toEqual([1]);
    expect(trace.skipped, 'the unknown line, the unknown event and the cut-off line').toBe(3);
    expect(renderPage(whole + cut)).toContain('3 lines of the trace skipped');
  });

  it('refuses what is not a trace: another JSON Lines file, a JSON file, nothing', () => {
    for (const notATrace of ['{"type":"session"}\n', '{\n  "name": "x"\n}\n', '', '\n\n']) {
      expect(() => readTrace(notATrace), JSON.stringify(notATrace)).toThrow(NotATraceError);
    }
  });

  it('draws a page from odd shapes too: a message that is not one, usage not numbers', () => {
    const odd = exchange(1, [1, null, { role: 'user' }, user([{ no: 'type' }, 'text'])] as any, [],
      { usage: { input_tokens: 'many' } as any, response: { content: 'not a list', usage: {} } });
    const html = renderPage(jsonl(HEADER, odd, { ...exchange(2, HI, []), request: 'not JSON' }));
    expect(steps(html)).toEqual([1, 2]);
  });
});

// ── The chart ──────────────────────────────────────────────────────────────────────────────────

describe('the chart', () => {
  it('has one step per POST /v1/messages exchange, failed tries and retries included', () => {
    const error = { type: 'overloaded_error', message: 'Overloaded' };
    const overloaded = { type: 'error', error };
    const models = {
      type: 'exchange', n: 1, agent: 'main', method: 'GET', try: 1, request: null, status: 200,
      path: '/v1/models/claude-sonnet-5-5', response: { max_input_tokens: 200_000 },
      times: { sent: T0, firstByte: T0 + 5, done: T0 + 9 },
    };
    const html = renderPage(jsonl(HEADER, models,
      exchange(2, HI, [], { status: 529, response: overloaded }),
      exchange(3, HI, [text('hello')], { try: 2 })));
    expect(steps(html), 'the Models API call is in the list, not in the chart').toEqual([2, 3]);
    expect(html).toMatch(/<details class="request other" id="r1"/);
    expect(html).toMatch(/<a class="step main failed" data-n="2"/);
    // The list says what failed, and that the SDK tried again.
    expect(line(html, 2)).toContain('529 overloaded_error');
    expect(line(html, 2)).toContain('retried as #3');
    expect(line(html, 3)).toContain('try 2');
    expect(island(html).rows.find((r) => r.n === 3).retryOf).toBe(2);
  });

  it('stacks each step: cache reads, cache writes, uncached input, then output', () => {
    const usage = {
      input_tokens: 300, cache_read_input_tokens: 5_000, cache_creation_input_tokens: 700,
      output_tokens: 90,
    };
    const html = renderPage(jsonl(HEADER, exchange(1, HI, [text('x')], { usage })));
    const step = /<a class="step main" data-n="1"[^]*?<\/a>/.exec(html)![0];
    const bars = [...step.matchAll(/<rect class="(\w+)" x="[\d.]+" y="([\d.]+)"/g)]
      .filter(([, kind]) => kind !== 'hit');
    expect(bars.map(([, kind]) => kind)).toEqual(['read', 'written', 'uncached', 'output']);
    const tops = bars.map(([, , y]) => Number(y));
    expect(tops, 'each on top of the one before').toEqual([...tops].sort((a, b) => b - a));
    expect(step).toContain('6,000 in (5,000 read from the cache, 700 written to it, ' +
      '300 uncached), 90 out');
  });

  it('marks compactions with their tier, placeholders, sub-agents, window and threshold', () => {
    const seen: Message[] = [
      user('count'),
      assistant([call('t1', 'seq 1 2000')]),
      user([result('t1', 'x'.repeat(5_000))]),
      assistant([text('done')]),
      user('again'),
    ];
    const cleared = seen.map((m, i) => (i === 2 ? user([result('t1', PLACEHOLDER)]) : m));
    const summary = user('[Earlier conversation, compacted. The full text is in /t.jsonl]\n\nSum.');
    const html = renderPage(jsonl(HEADER,
      { type: 'event', event: 'context', at: T0, agent: 'main', window: 20_000, threshold: 10_000 },
      exchange(1, seen, [text('ok')], { usage: { input_tokens: 9_000, output_tokens: 20 } }),
      exchange(2, [...cleared, assistant([text('ok')]), user('more')], [text('ok')]),
      exchange(3, [user('summarise')], [text('Sum.')], { agent: 'compaction' }),
      compaction(3, 'auto'), // after its summary request (3), before the next request
      exchange(4, [summary, user('go on')], [call('t9', 'ls')]),
      exchange(5, [user('list')], [text('a b')], { agent: 'sub-agent' })));

    expect(steps(html)).toEqual([1, 2, 3, 4, 5]);
    expect(count(html, /<g class="compaction tier-2" data-tier="2">/g), 'a tier-2 marker').toBe(1);
    const list = html.slice(html.indexOf('<main>'));
    const event = list.indexOf('<div class="event compaction" data-tier="2">');
    expect(event, 'a compaction line in the list, after request 3').toBeGreaterThan(
      list.indexOf('id="r3"'));
    expect(event, 'and before request 4').toBeLessThan(list.indexOf('id="r4"'));
    const placeholders = [...html.matchAll(/<path class="placeholders" data-n="(\d+)"/g)];
    expect(placeholders.map((m) => m[1]), 'where a tool result was first replaced').toEqual(['2']);
    expect(html).toMatch(/<a class="step sub-agent" data-n="5"/);
    expect(html).toMatch(/<a class="step summariser" data-n="3"/);
    expect(html).toMatch(/<g class="window">[^]*?context window 20,000/);
    expect(html).toMatch(/<g class="threshold">[^]*?compaction threshold 10,000/);
    expect(line(html, 4), 'request 4 starts with a new summary').toContain('summary');
  });

  it('calls a compaction you or the model asked for tier 3, and places it by the count', () => {
    // Written first, as a line can be: the count of exchanges before it says where it goes.
    const html = renderPage(jsonl(HEADER, compaction(1, 'you asked'),
      compaction(2, 'the model asked'),
      exchange(1, HI, [text('a')]), exchange(2, HI, [text('b')]), exchange(3, HI, [text('c')])));
    const marker = /<g class="compaction tier-(\d)" data-tier="\d"><line x1="([\d.]+)"/g;
    const markers = [...html.matchAll(marker)];
    expect(markers.map((m) => m[1])).toEqual(['3', '3']);
    const left = (n: number) => Number(new RegExp(`data-n="${n}" href="#r${n}"><title>[^<]*` +
      '</title><rect class="hit" x="([\\d.]+)"').exec(html)![1]);
    expect(markers.map((m) => Number(m[2])), 'at the left of requests 2 and 3')
      .toEqual([left(2), left(3)]);
  });

  it('draws no window or threshold line when the trace has no context event', () => {
    const html = renderPage(jsonl(HEADER, exchange(1, HI, [text('x')])));
    expect(html).not.toMatch(/<g class="(window|threshold)">/);
    expect(html).not.toContain('off-scale');
  });

  it('stops short of a window far above every request, and says where it is', () => {
    // A short run under a 200,000-token window: drawn to scale, its steps would be flat.
    const context = {
      type: 'event', event: 'context', at: T0, exchanges: 0, agent: 'main',
      window: 200_000, threshold: 179_000,
    };
    const html = renderPage(jsonl(HEADER, context, exchange(1, HI, [text('x')])));
    expect(html).not.toMatch(/<g class="(window|threshold)">/);
    expect(html).toContain('Above the top of the chart: the context window, 200,000 tokens, ' +
      'and the compaction threshold, 179,000.');
    const ticks = [...html.matchAll(/<text class="tick"[^>]*>([^<]+)</g)].map((m) => m[1]);
    expect(ticks.at(-1), 'the top of the chart, near the 120 tokens of the request').toBe('150');
  });

  it('fills the panel: a few requests are bars of at most 48 px, 1,200 are all there', () => {
    const box = (html: string) => {
      const rects = (kind: string) => [...html.matchAll(
        new RegExp(`<rect class="${kind}" x="([\\d.]+)" y="[\\d.]+" width="([\\d.]+)"`, 'g'))]
        .map((m) => ({ x: Number(m[1]), width: Number(m[2]) }));
      const [hits, bars] = [rects('hit'), rects('uncached')];
      const svg = /<svg[^>]* width="(\d+)"/.exec(html)!;
      return { hits, bars, width: Number(svg[1]) };
    };
    const three = [1, 2, 3].map((n) => exchange(n, HI, [text('x')]));
    const short = box(renderPage(jsonl(HEADER, ...three)));
    expect(short.hits).toHaveLength(3);
    const end = short.hits[2].x + short.hits[2].width;
    expect(end, 'the last step ends at the right of the plot').toBeCloseTo(short.width - 16, 0);
    for (const [i, bar] of short.bars.entries()) {
      expect(bar.width, 'a few requests: wide bars, not walls').toBe(48);
      const middle = short.hits[i].x + short.hits[i].width / 2;
      expect(bar.x + bar.width / 2, 'in the middle of its step').toBeCloseTo(middle, 0);
    }

    const many = Array.from({ length: 1_200 }, (_, i) => exchange(i + 1, HI, [text('x')]));
    const html = renderPage(jsonl(HEADER, ...many));
    const long = box(html);
    expect(steps(html), 'every request has its step').toHaveLength(1_200);
    expect(long.width, 'the same width: no scrolling sideways').toBe(short.width);
    expect(long.hits.at(-1)!.x + long.hits.at(-1)!.width).toBeCloseTo(long.width - 16, 0);
    expect(Math.max(...long.bars.map((bar) => bar.width)), 'a pixel or so each').toBeLessThan(1);
    expect(html).toContain('<svg class="dense"');
  });

  it('marks placeholders once a stretch, not on each of the many requests that send one', () => {
    // Request k sends the results of the calls before it, all but the newest as placeholders:
    // from #3 on, each request sends one more. A compaction after #5 starts a new stretch.
    const summary = user('[Earlier conversation, compacted. The full text is in /t.jsonl]');
    const send = (k: number, from: number, start: Message[]) => {
      const messages = [...start];
      for (let j = from; j < k; j++) {
        messages.push(assistant([call(`t${j}`, 'seq 1 2000')]));
        messages.push(user([result(`t${j}`, j < k - 1 ? PLACEHOLDER : 'x'.repeat(3_000))]));
      }
      return exchange(k, messages, [call(`t${k}`, 'seq 1 2000')]);
    };
    const html = renderPage(jsonl(HEADER,
      ...[1, 2, 3, 4, 5].map((k) => send(k, 1, [user('go')])),
      compaction(5, 'auto'),
      ...[6, 7, 8, 9, 10].map((k) => send(k, 6, [summary, user('go on')]))));
    const listed = steps(html).filter((n) => line(html, n).includes('placeholder'));
    expect(listed, 'the list still says it on each request').toEqual([3, 4, 5, 8, 9, 10]);
    for (const n of listed) expect(line(html, n)).toContain('1 new placeholder<');
    const mark = /<path class="placeholders" data-n="(\d+)"[^>]*\/><title>([^<]*)/g;
    const marks = [...html.matchAll(mark)];
    expect(marks.map((m) => m[1]), 'one mark before the compaction, one after').toEqual(['3', '8']);
    expect(marks[0][2]).toBe('3 tool results sent as placeholders from #3 to #5');
  });

  it('puts compaction labels in rows of their own above the plot, two close ones apart', () => {
    const clearing = [user('go'), assistant([call('t1', 'ls')]), user([result('t1', PLACEHOLDER)])];
    const html = renderPage(jsonl(HEADER, exchange(1, HI, [text('a')]),
      compaction(1, 'auto'), compaction(1, 'you asked'),
      exchange(2, clearing, [text('b')]), exchange(3, HI, [text('c')])));
    const label = /<g class="compaction tier-(\d)"[^]*?<text x="([\d.]+)" y="([\d.]+)">C\d/g;
    const labels = [...html.matchAll(label)];
    expect(labels.map((m) => m[1]), 'both labels drawn').toEqual(['2', '3']);
    const [first, second] = labels.map((m) => Number(m[3]));
    expect(first, 'on top of each other, not over each other').not.toBe(second);
    const mark = /<path class="placeholders" data-n="2" d="M[\d.]+ ([\d.]+)/.exec(html)!;
    const plotTop = Math.min(...[...html.matchAll(/<rect class="hit" x="[\d.]+" y="([\d.]+)"/g)]
      .map((m) => Number(m[1])));
    expect(Math.max(first, second) + 2, 'the labels above the placeholder marks')
      .toBeLessThan(Number(mark[1]));
    expect(Number(mark[1]) + 7, 'and the marks above the plot').toBeLessThanOrEqual(plotTop);
  });
});

// ── The requests ───────────────────────────────────────────────────────────────────────────────

describe('the requests', () => {
  it('sets apart what is new since the same agent\'s last request from what was sent again', () => {
    // Each request resends the last, plus its reply and then a tool result or a prompt.
    const rows = replay(readTrace(jsonl(...conversation(2)))).rows;
    expect(rows.map((r) => r.marks), 'r: resent, n: new').toEqual(['n', 'rnn', 'rrrnn', 'rrrrrnn']);
    expect(line(renderPage(jsonl(...conversation(2))), 3)).toContain('5 messages: 2 new');
  });

  it('calls a resent message with a placeholder, or without its thinking, changed: and how', () => {
    const thinking = { type: 'thinking', thinking: 'Let me count.', signature: 'sig' };
    const before = [user('count'), assistant([thinking, call('t1', 'seq 1 2000')]),
      user([result('t1', '1\n2\n3')])];
    const after = [before[0], assistant([call('t1', 'seq 1 2000')]),
      user([result('t1', PLACEHOLDER)]), assistant([text('Counted.')]),
      user('count')]; // the same words again: new, not "changed"
    const trace = jsonl(HEADER, exchange(1, before, [text('Counted.')]), exchange(2, after, []));
    const row = replay(readTrace(trace)).rows[1];
    expect(row.marks).toBe('rccnn');
    expect(row.why).toEqual({ 1: 'thinking dropped', 2: 'placeholder' });
    expect(row.placeholders).toBe(1);
  });

  it('stores each message once however often it is resent, cache breakpoint or not', () => {
    // s06 marks the last block of the last message with cache_control; resent, it has none.
    const marked = (t: string) => [{ ...text(t), cache_control: { type: 'ephemeral' } }];
    const trace = jsonl(HEADER, exchange(1, [user(marked('hi'))], [text('hello')]),
      exchange(2, [user([text('hi')]), assistant([text('hello')]), user(marked('bye'))], []));
    const messages = island(renderPage(trace)).values.filter((v) => v.role);
    expect(messages, 'hi, hello and bye, once each').toHaveLength(3);
    const rows = replay(readTrace(trace)).rows;
    expect(rows[1].marks).toBe('rnn');
    expect(rows.map((r) => r.breakpoints), '[message, block]').toEqual([[[0, 0]], [[2, 0]]]);
  });

  it('lists a request\'s messages as the start of an earlier list, and what follows it', () => {
    // So the lists of numbers, too, grow with the run and not with its square.
    const rows = island(renderPage(jsonl(...conversation(2)))).rows;
    expect(rows[3]).toMatchObject({ n: 4, shared: [3, 5], marks: 'nn' });
    expect(rows[3].messages).toHaveLength(2);
  });

  it('grows linearly with the run, though each request resends the whole conversation', () => {
    const [small, large] = [jsonl(...conversation(20)), jsonl(...conversation(40))];
    expect(large.length / small.length, 'the trace grows with the square').toBeGreaterThan(3.5);
    const growth = renderPage(large).length / renderPage(small).length;
    expect(growth, 'twice the requests, about twice the page').toBeLessThan(2.2);
  });

  it('prices the model it knows, and says "—" for one it does not', () => {
    const trace = jsonl(HEADER, exchange(1, HI, [text('x')]),
      exchange(2, HI, [text('x')], { model: 'some-other-model', agent: 'sub-agent' }));
    const rows = replay(readTrace(trace)).rows;
    expect(rows[0].cost, '100 in, 20 out at $2 and $10 a million').toBeCloseTo(400 / 1e6, 10);
    expect(rows[1].cost).toBeUndefined();
    expect(line(renderPage(trace), 2)).toContain('<span class="cost">—</span>');
  });

  it('shows a reply that never completed as a failure, saying why', () => {
    const html = renderPage(jsonl(HEADER,
      exchange(1, HI, [], { response: null, error: 'Connection error.' })));
    expect(line(html, 1)).toContain('Connection error.');
    expect(html).toMatch(/<a class="step main failed" data-n="1"/);
    expect(html).toContain('1 failed');
  });

  // What shared/trace.ts writes for a request Ctrl+C stopped: before the response began (the
  // SDK's or fetch's abort), in the middle of a stream, or as the program exited.
  it('counts a request Ctrl+C stopped as interrupted, not failed', () => {
    const html = renderPage(jsonl(HEADER,
      exchange(1, HI, [], { response: null, error: 'Request was aborted.' }),
      exchange(2, HI, [], { response: null, error: 'This operation was aborted' }),
      exchange(3, HI, [text('half')], { error: 'aborted before the reply was complete' }),
      exchange(4, HI, [], { response: null, error: 'the program exited before the end' }),
      exchange(5, HI, [], { status: 529, response: { type: 'error', error: { type: 'x' } } })));
    for (const n of [1, 2, 3, 4]) {
      expect(html, `#${n}`).toMatch(new RegExp(`<a class="step main interrupted" data-n="${n}"`));
      expect(line(html, n), `#${n}`).toMatch(/<span class="interrupted">interrupted: /);
    }
    expect(line(html, 3)).toContain('aborted before the reply was complete');
    expect(html).toMatch(/<a class="step main failed" data-n="5"/);
    expect(html, 'the header counts them apart').toMatch(/1 failed[^]*4 interrupted/);
    expect(html).not.toContain('5 failed');
  });
});

// ── Several runs in one file ───────────────────────────────────────────────────────────────────

describe('a file that holds several runs', () => {
  // --trace=<file> appends: run 2 starts with its own header line, and counts from n = 1 again.
  const RUN2 = { ...HEADER, chapter: 's06_prompt', started: '2026-11-24T11:00:00.000Z' };
  const at = (line: ReturnType<typeof exchange>, hours: number) => {
    const shift = (t: number) => t + hours * 3_600_000;
    return { ...line, times: { sent: shift(line.times.sent), firstByte: shift(line.times.firstByte),
      done: shift(line.times.done) } };
  };
  const followUp = [...HI, assistant([text('a')]), user('more')];
  const context = (window: number) =>
    ({ type: 'event', event: 'context', at: T0, exchanges: 0, agent: 'main', window,
      threshold: window / 2 });
  const trace = jsonl(
    HEADER, context(500), exchange(1, HI, [text('a')]), exchange(2, followUp, [text('b')]),
    compaction(2, 'you asked'),
    // The same n, the same first message, an hour later: another conversation.
    // Its first exchange says try 2 (the first try left no line): it repeats nothing of run 1's.
    RUN2, at(exchange(1, HI, [text('a')], { try: 2 }), 1), compaction(1, 'the model asked'),
    at(exchange(2, followUp, [text('b')]), 1),
  );
  const html = renderPage(trace);

  it('reads each header as the start of a run, and numbers on through the file', () => {
    const read = readTrace(trace);
    expect(read.runs.map((run) => run.chapter)).toEqual(['s05_context_compact', 's06_prompt']);
    expect(read.exchanges.map((e) => [e.n, e.run, e.inRun])).toEqual(
      [[1, 0, 1], [2, 0, 2], [3, 1, 1], [4, 1, 2]]);
    expect(read.events.filter((e) => e.event === 'compaction').map((e) => e.exchanges),
      'events placed by the count of their own run, numbered on too').toEqual([2, 3]);
    expect(read.skipped, 'a second header is not a line to skip').toBe(0);
    expect(steps(html)).toEqual([1, 2, 3, 4]);
  });

  it('places a line that names its run in that run, wherever in the file it lands', () => {
    // Two runs writing one file at once: run B's header comes before run A's later lines.
    const [a, b] = [{ ...HEADER, run: 'aaa' }, { ...RUN2, run: 'bbb' }];
    const named = (line: object, run: string) => ({ ...line, run });
    const read = readTrace(jsonl(a, named(exchange(1, HI, [text('a')]), 'aaa'), b,
      named(exchange(1, HI, [text('b')]), 'bbb'), named(exchange(2, followUp, []), 'aaa'),
      named(compaction(2, 'auto'), 'aaa'), named(exchange(2, followUp, []), 'bbb'),
      named(exchange(9, HI, []), 'no such run')));
    expect(read.exchanges.map((e) => [e.n, e.run, e.inRun])).toEqual(
      [[1, 0, 1], [2, 0, 2], [3, 1, 1], [4, 1, 2]]);
    expect(read.events.map((e) => [e.run, e.exchanges])).toEqual([[0, 2]]);
    expect(read.skipped, 'the line of a run with no header').toBe(1);
  });

  it('compares a request only with those of its own run', () => {
    const rows = replay(readTrace(trace)).rows;
    expect(rows.map((r) => r.marks), 'run 2 starts afresh: all new')
      .toEqual(['n', 'rnn', 'n', 'rnn']);
    expect(rows[2].retryOf, 'a retry of nothing in its own run').toBeUndefined();
    expect(rows[1].retriedAs, 'run 1\'s last request was not retried').toBeUndefined();
    const island_ = island(html).rows;
    expect(island_[2].shared, 'nor is its list stored as the start of run 1\'s').toBeUndefined();
    expect(island_[3].shared).toEqual([3, 1]);
    expect(island(html).runs).toBe(2);
  });

  it('marks where each run starts, in the list and in the chart', () => {
    const list = html.slice(html.indexOf('<main>'));
    const order = ['id="run1"', 'id="r1"', 'id="r2"', 'data-tier="3">', 'id="run2"', 'id="r3"',
      'data-tier="3">compaction, tier 3 (the model asked)', 'id="r4"'];
    const places = order.map((text, i) => list.indexOf(text, i && list.indexOf(order[i - 1])));
    expect(places.every((place) => place !== -1), JSON.stringify(places)).toBe(true);
    expect(places, `in this order: ${order.join(' ')}`).toEqual([...places].sort((a, b) => a - b));
    expect(list)
      .toContain('run 2 of 2: s06_prompt, started 2026-11-24 11:00:00 UTC, in /home/me/app');
    expect(line(html, 3), 'times from the start of its own run').toContain('+0 ms');

    const marker = /<g class="run-start"><line x1="([\d.]+)"[^]*?<text[^>]*>run 2</.exec(html);
    expect(marker, 'a thin line where run 2 starts, named').not.toBeNull();
    const hit3 = /href="#r3"><title>[^<]*<\/title><rect class="hit" x="([\d.]+)"/.exec(html)!;
    expect(Number(marker![1]), 'at the left of run 2\'s first step').toBe(Number(hit3[1]));
    // Run 1 said its window, run 2 did not: the line stops where run 2 starts.
    const window = /<g class="window"><line x1="([\d.]+)" x2="([\d.]+)"/.exec(html)!;
    expect(Number(window[2])).toBe(Number(hit3[1]));
    expect(html).toMatch(/<h1>s05_context_compact, s06_prompt trace, 2 runs from 2026-11-24/);
  });
});

// ── What the page says ─────────────────────────────────────────────────────────────────────────

describe('wording', () => {
  it('says "1 new message", "2 new placeholders", and never "(s)"', () => {
    const two = [user('go'), assistant([call('t1', 'ls'), call('t2', 'ls')]),
      user([result('t1', PLACEHOLDER), result('t2', PLACEHOLDER)])];
    const html = renderPage(jsonl(HEADER, exchange(1, HI, [text('a')]), exchange(2, two, [])));
    expect(line(html, 1)).toContain('1 new message<');
    expect(line(html, 2)).toContain('3 new messages<');
    expect(line(html, 2)).toContain('2 new placeholders<');
    const hedged = /[a-z]\(s\)/i; // `placeholder(s)`; not the `(s) =>` of an arrow function
    expect(html, 'the page').not.toMatch(hedged);
    const script = readFileSync(join(REPO, 'scripts/inspector/page.js'), 'utf8');
    expect(script, 'what page.js writes').not.toMatch(hedged);
  });
});

// ── For a reader who has never seen the page (issue 26) ───────────────────────────────────────

describe('for a reader who has never seen it', () => {
  const header = (html: string) => /<header>[^]*?<\/header>/.exec(html)?.[0] ?? '';
  // What the page itself says: the header, the chart and the list, not page.js's source.
  const said = (html: string) => html.slice(0, html.indexOf('<script'));
  const models = {
    type: 'exchange', n: 1, agent: 'main', method: 'GET', try: 1, request: null, status: 200,
    path: '/v1/models/claude-sonnet-5-5', response: { max_input_tokens: 200_000 },
    times: { sent: T0, firstByte: T0 + 5, done: T0 + 9 },
  };

  it('says at the top, in one line, what the page shows', () => {
    const html = renderPage(jsonl(HEADER, exchange(1, HI, [text('x')])));
    const top = /<h1>[^]*?<\/h1>\n<p class="lede">([^<]*)<\/p>/.exec(html);
    expect(top, 'a line under the title that says what the page is').not.toBeNull();
    expect(top![1]).toMatch(/^Every request this run sent to the model, in order: the chart /);
    expect(top![1]).toContain('opening one shows what it sent and what came back');
  });

  it('calls the cost an estimate at list prices', () => {
    const html = renderPage(jsonl(HEADER, exchange(1, HI, [text('x')])));
    expect(header(html)).toContain('cost $0.0004, an estimate at list prices');
  });

  it('finds in the trace whether the offline demo model answered (shared/client.ts)', async () => {
    const args = ['--trace=trace.jsonl', '-p', 'hi'];
    const [online, offline] = await Promise.all([
      runChapter('s01', { args, replies: [reply(replyText('Hello.'))] }),
      runChapter('s01', { args, offline: true }),
    ]);
    const first = (run: typeof online) =>
      JSON.parse(readFileSync(join(run.workspace, 'trace.jsonl'), 'utf8').split('\n')[0]);
    expect(online.code, online.stderr).toBe(0);
    expect(offline.code, offline.stderr).toBe(0);
    expect(first(online), 'with a key: a model answered').toMatchObject({ offline: false });
    expect(first(offline), 'no key: the offline demo model').toMatchObject({ offline: true });
  });

  it('says that no model ran in an offline run, and shows no cost', () => {
    const offline = { ...HEADER, offline: true };
    const html = renderPage(jsonl(offline, exchange(1, HI, [text('x')]), exchange(2, HI, [])));
    expect(header(html), 'what answered').toContain('offline demo model');
    expect(header(html)).toContain('no model ran');
    expect(said(html), 'no dollar figure for a model that did not run').not.toMatch(/\$\d/);
    expect(island(html).rows.map((row) => row.cost)).toEqual([undefined, undefined]);
  });

  it('draws every step above the axis: a summary request\'s and a sub-agent\'s too', () => {
    const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Over' } };
    const html = renderPage(jsonl(HEADER, exchange(1, HI, [text('a')]),
      exchange(2, [user('summarise')], [text('Sum.')], { agent: 'compaction' }),
      exchange(3, HI, [text('b')], { agent: 'sub-agent' }),
      exchange(4, HI, [], { agent: 'compaction', status: 529, response: overloaded })));
    const zero = Number(/<line class="grid" [^>]*y1="([\d.]+)"[^>]*\/><text class="tick"[^>]*>0</
      .exec(html)![1]);
    for (const n of [1, 2, 3, 4]) {
      const step = new RegExp(`<a class="step[^"]*" data-n="${n}"[^]*?</a>`).exec(html)![0];
      const rects = step.matchAll(/<rect [^>]*y="([\d.]+)" [^>]*height="([\d.]+)"/g);
      for (const [rect, y, height] of rects) {
        expect(Number(y) + Number(height), `step ${n}: ${rect} goes below 0`)
          .toBeLessThanOrEqual(zero);
      }
    }
    expect(html, 'a summary request still marked as one').toMatch(
      /<a class="step summariser" data-n="2"[^]*?<rect class="band"/);
  });

  it('counts what it lists: the requests to the model, and the lookup of the model', () => {
    const html = renderPage(jsonl(HEADER, models, exchange(2, HI, [text('a')]),
      exchange(3, HI, [text('b')])));
    const listed = count(html, /<details class="request[^"]*" id="r\d+"/g);
    expect(listed).toBe(3);
    expect(header(html)).toContain('2 requests to the model (2 main)');
    expect(header(html), 'and the lookup, said what it is').toContain('1 lookup of the model ' +
      '(GET /v1/models/claude-sonnet-5-5): its context window, asked at start-up');
    const lookup = /<details class="request other" id="r1"[^]*?<\/summary>/.exec(html)![0];
    expect(lookup, 'its line says what it is').toContain('context window, looked up at start-up');
  });
});

// ── Prices, and what the command loads ─────────────────────────────────────────────────────────

describe('the inspector on its own', () => {
  it('prices as s06_prompt/cache.ts does (read as text: importing it starts the SDK)', () => {
    const source = readFileSync(join(REPO, 's06_prompt/cache.ts'), 'utf8');
    const table = /const PRICES\b[^=]*= \{\n([^]*?)\n\};/.exec(source);
    expect(table, 's06_prompt/cache.ts must still have its PRICES table').not.toBeNull();
    const entry = /^ {2}'([^']+)': \{ input: ([\d.]+), output: ([\d.]+) \},?$/;
    const lines = table![1].split('\n').filter((l) => l.trim() && !l.trim().startsWith('//'));
    const prices = Object.fromEntries(lines.map((l) => {
      const m = entry.exec(l);
      expect(m, `a PRICES line of cache.ts this test cannot read: ${l}`).not.toBeNull();
      return [m![1], { input: Number(m![2]), output: Number(m![3]) }];
    }));
    expect(PRICES, 'scripts/inspector/page.ts has the prices of s06_prompt/cache.ts')
      .toEqual(prices);
    const read = /\(read \?\? 0\) \* ([\d.]+)/.exec(source);
    const written = /\(written \?\? 0\) \* ([\d.]+)/.exec(source);
    expect(read && written, 'cache.ts still prices reads and writes as `(read ?? 0) * 0.1`')
      .toBeTruthy();
    expect(CACHE_PRICE).toEqual({ read: Number(read![1]), written: Number(written![1]) });
  });

  it("loads no chapter (s06's would start the offline model): node's modules and its own", () => {
    const OWN = ['./inspector/page.ts', '../shared/trace.ts'];
    for (const file of ['scripts/inspect.ts', 'scripts/inspector/page.ts']) {
      const source = readFileSync(join(REPO, file), 'utf8');
      const loaded = [...source.matchAll(/^import (?!type )[^;]*?from '([^']+)'/gm)]
        .map((m) => m[1]);
      expect(loaded.length, file).toBeGreaterThan(0);
      const others = loaded
        .filter((name) => !name.startsWith('node:') && !OWN.includes(name));
      expect(others, `${file} imports only node: modules, the inspector and the tracer`).toEqual([]);
      expect(source, `${file}: no import() either`).not.toMatch(/\bimport\(/);
    }
  });

  it('loads of the SDK only what the tracer needs: not its client, which brings every resource', async () => {
    // What node would load for `npm run inspect`, as esbuild finds it by following the imports.
    const found = await build({
      entryPoints: [join(REPO, 'scripts/inspect.ts')], bundle: true, platform: 'node', format: 'esm',
      write: false, metafile: true, logLevel: 'silent',
    });
    const sdk = Object.keys(found.metafile.inputs).filter((f) => f.includes('node_modules/@anthropic-ai/sdk/'));
    expect(sdk, 'the SDK is reached through shared/trace.ts').not.toEqual([]);
    expect(sdk.filter((f) => /sdk\/(client|index)\.mjs$/.test(f)), 'no client, no index').toEqual([]);
  });
});

// ── Text from a trace is only ever text ────────────────────────────────────────────────────────

describe('hostile text', () => {
  const HOSTILE = '</script><script>window.__pwned=1</script><!-- <img src=x onerror="alert(1)"> ' +
    '</textarea>\u2028\u2029 & "quotes" \'too\'';
  const html = renderPage(jsonl(
    { ...HEADER, chapter: HOSTILE, workspace: HOSTILE },
    compaction(1, HOSTILE, { messages: HOSTILE }),
    exchange(1, [user(HOSTILE)], [call('t1', HOSTILE)], { agent: HOSTILE }),
    exchange(2, [user([result('t1', HOSTILE)])], [text(HOSTILE)],
      { response: { type: 'error', error: { type: HOSTILE, message: HOSTILE } }, status: 500 }),
  ));

  it('opens no element: the page has its own two scripts, and no img', () => {
    expect(count(html, /<script/gi), 'the data island and page.js, no more').toBe(2);
    expect(count(html, /<\/script/gi)).toBe(2);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<!--/);
    expect(html).not.toContain('</textarea>');
  });

  it('keeps the text whole in the data island', () => {
    const data = island(html);
    expect(data.values.some((v) => v.role === 'user' && v.content === HOSTILE)).toBe(true);
    expect(data.rows[0].agent).toBe(HOSTILE);
    const raw = /id="trace-data">([^]*?)<\/script>/.exec(html)![1];
    expect(raw, 'no raw <, and neither line separator').not.toMatch(/[\u2028\u2029<]/);
  });

  it('escapes what it writes into the HTML itself', () => {
    expect(html).toContain('&lt;/script&gt;&lt;script&gt;window.__pwned=1');
    expect(html).toContain('&quot;quotes&quot; &#39;too&#39;');
  });
});

// ── Self-contained ─────────────────────────────────────────────────────────────────────────────

describe('self-contained', () => {
  const html = renderPage(jsonl(...conversation(3)));
  const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

  it('says in a Content-Security-Policy that it runs its own script and style, no more', () => {
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html);
    expect(meta, 'a CSP <meta> in the head').not.toBeNull();
    const csp = meta![1].replaceAll('&#39;', "'");
    const directives = csp.split('; ');
    expect(directives).toContain("default-src 'none'");
    expect(directives).toContain('img-src data:');
    expect(csp).not.toMatch(/unsafe|https?:|\*/);
    // The hashes are those of the script and the style as they stand in this page.
    const script = /<script>([^]*?)<\/script>/.exec(html)![1];
    const style = /<style>([^]*?)<\/style>/.exec(html)![1];
    expect(directives).toContain(`script-src 'sha256-${sha256(script)}'`);
    expect(directives).toContain(`style-src 'sha256-${sha256(style)}'`);
    expect(html.indexOf('Content-Security-Policy'), 'before the style it governs')
      .toBeLessThan(html.indexOf('<style>'));
  });

  it('names nothing to load: no http(s), no src, no link but to its own requests', () => {
    const markup = html.replace(/<script type="application\/json"[^]*?<\/script>/, '');
    expect(markup).not.toMatch(/https?:\/\//);
    expect(markup).not.toMatch(/\ssrc=/);
    expect(markup).not.toMatch(/url\(|@import/);
    const links = [...markup.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    const others = links.filter((href) => !/^#r\d+$/.test(href));
    expect(others, 'the favicon, inline').toEqual(['data:,']);
    expect(count(markup, /\sstyle="/g), 'no style attribute (the CSP would refuse it)').toBe(0);
  });
});

// ── The command ────────────────────────────────────────────────────────────────────────────────

describe('npm run inspect', () => {
  const folder = () => mkdtempSync(join(tmpdir(), 'inspect-'));

  it('writes the page beside the trace, readable by you alone, and prints where', () => {
    const dir = folder();
    writeFileSync(join(dir, 'run.jsonl'), jsonl(...conversation(2)));
    const outcome = inspect(['run.jsonl'], dir); // a relative path is from where you ran it
    expect(outcome).toMatchObject({ code: 0, stdout: join(dir, 'run.html') });
    expect(outcome.stderr).toMatch(/^inspect: [\d.]+ MB page written in \d+ ms$/);
    expect(statSync(join(dir, 'run.html')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'run.html'), 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('replaces an earlier page, and a link where the page goes, never what it links to', () => {
    const dir = folder();
    writeFileSync(join(dir, 'run.jsonl'), jsonl(...conversation(1)));
    writeFileSync(join(dir, 'elsewhere.txt'), 'not to be overwritten', { mode: 0o644 });
    symlinkSync(join(dir, 'elsewhere.txt'), join(dir, 'run.html'));
    expect(inspect([join(dir, 'run.jsonl')], '/').code).toBe(0);
    expect(readFileSync(join(dir, 'elsewhere.txt'), 'utf8')).toBe('not to be overwritten');
    expect(lstatSync(join(dir, 'run.html')).isFile()).toBe(true);
    expect(statSync(join(dir, 'run.html')).mode & 0o777).toBe(0o600);
  });

  it('takes the newest trace of a folder', () => {
    const dir = folder();
    for (const [name, age] of [['old.jsonl', 60], ['new.jsonl', 0], ['newer.txt', -60]] as const) {
      writeFileSync(join(dir, name), '');
      const when = Date.now() / 1000 - age;
      utimesSync(join(dir, name), when, when);
    }
    expect(newestTrace(dir)).toBe(join(dir, 'new.jsonl'));
    expect(newestTrace(join(dir, 'missing'))).toBeUndefined();
  });

  it('with no trace named, takes the newest of npm run demo’s too: a demo run files its traces under its copy', () => {
    const home = folder();
    const trace = (copy: string, name: string, age: number) => {
      mkdirSync(join(home, '.learn-agent-harness', 'demo', copy), { recursive: true });
      const traces = traceFolder(join(home, '.learn-agent-harness', 'demo', copy), home);
      mkdirSync(traces, { recursive: true });
      writeFileSync(join(traces, name), jsonl(...conversation(1)));
      const when = Date.now() / 1000 - age;
      utimesSync(join(traces, name), when, when);
      return join(traces, name);
    };
    trace('lah-demo-s01', 'older.jsonl', 60);
    const newest = trace('lah-demo-s05', 'newest.jsonl', 0);
    const outcome = inspect([], folder(), home); // from a folder with no trace of its own: the repo
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe(pagePath(newest));
    expect(outcome.stderr, 'and says which trace it took').toContain(newest);
  });

  it('with no trace to read, says where it looked and how to make one (exit 2)', () => {
    const outcome = inspect([], folder(), folder()); // a fresh folder and home: nothing traced
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^inspect: no trace in \/.*\.learn-agent-harness\/traces\//);
    expect(outcome.stderr).toContain('--trace');
  });

  it('refuses a file that is not a trace, or is not there (exit 2)', () => {
    const dir = folder();
    writeFileSync(join(dir, 'package.json'), '{\n  "name": "x"\n}\n');
    const notATrace = inspect(['package.json'], dir);
    expect(notATrace.code).toBe(2);
    expect(notATrace.stderr).toBe(`inspect: ${join(dir, 'package.json')} is not a trace: its ` +
      'first line is not {"type":"trace",…}');
    const missing = inspect(['gone.jsonl'], dir);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('no such file') });
  });
});
