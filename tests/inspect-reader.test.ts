/**
 * The inspector's page (scripts/inspector/page.ts) as a reader meets it: what it says, to one
 * who has never seen it too; and that it is safe to open: text from a trace is only ever text,
 * and the page loads nothing.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderPage } from '../scripts/inspector/page.ts';
import { reply, text as replyText } from '../shared/fake-anthropic.ts';
import {
  assistant, call, compaction, conversation, count, exchange, HEADER, HI, island, jsonl, line,
  PLACEHOLDER, result, T0, text, user,
} from './helpers/inspect-traces.ts';
import { runChapter } from './helpers/run-chapter.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));

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
