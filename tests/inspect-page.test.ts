/**
 * npm run inspect's page (scripts/inspector/page.ts) on traces written by hand in the format
 * shared/trace.ts records (helpers/inspect-traces.ts): what the page holds for a given trace,
 * its chart and its list, and that the page grows linearly with the run. What it says to a
 * reader, and that nothing in a trace can become markup: inspect-reader.test.ts; the command
 * and what it loads: inspect-command.test.ts. tests/inspect-browser.test.ts opens the page of
 * a real chapter's run in a browser.
 */
import { describe, expect, it } from 'vitest';
import { NotATraceError, readTrace, renderPage, replay } from '../scripts/inspector/page.ts';
import {
  assistant, call, compaction, conversation, count, exchange, HEADER, HI, island, jsonl, line,
  PLACEHOLDER, result, steps, T0, text, user, type Message,
} from './helpers/inspect-traces.ts';

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
