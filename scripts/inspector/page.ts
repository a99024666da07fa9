/**
 * The page `npm run inspect` writes (scripts/inspect.ts): a trace of a chapter's run (--trace,
 * shared/trace.ts) as one self-contained HTML file that replays the run request by request.
 * Tooling for readers, not a chapter's mechanism.
 *
 * Drawn here, in Node: the header, a chart of the run as SVG (one step per request, so it shows
 * with no script), and one line per request. What a request held is drawn by page.js in the
 * browser when its line is opened, from a JSON data island that stores each message once, however
 * many requests sent it again: the page grows with the conversation, not with its square. A file
 * that holds several runs (--trace=<file> appends) shows them one after the other.
 *
 * The page is drawn by the files beside this one, in the order of the page's making:
 *   trace.ts      reading a trace: readTrace, its runs, exchanges and events
 *   requests.ts   what the chapters put in requests: placeholders, a summary, thinking
 *   distinct.ts   each value once, and each message compared with the previous request's
 *   replay.ts     the replay: a row per exchange (tokens, cost, retries, how it ended)
 *   html.ts       escaping, and the formats of numbers, dollars and times
 *   header.ts     the header: what ran, when, and what it came to
 *   chart.ts      the chart: a step per request, as SVG
 *   list.ts       the list: a line per exchange, filled in by page.js when opened
 *   untrusted.ts  the readers of any value a trace holds
 * This file puts them together (renderPage) with page.css and page.js, under a CSP.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { renderChart } from './chart.ts';
import { renderHeader, titleOf } from './header.ts';
import { escapeHtml, jsonForScript } from './html.ts';
import { renderList } from './list.ts';
import { replay, type Row } from './replay.ts';
import { readTrace } from './trace.ts';

export type { Exchange, Trace, TraceEvent, TraceHeader } from './trace.ts';
export { NotATraceError, readTrace } from './trace.ts';
export type { Replay, Row } from './replay.ts';
export { CACHE_PRICE, PRICES, replay } from './replay.ts';
export { escapeHtml, jsonForScript } from './html.ts';

const ASSETS = new URL('.', import.meta.url);
const SCRIPT = readFileSync(new URL('page.js', ASSETS), 'utf8');
const STYLE = readFileSync(new URL('page.css', ASSETS), 'utf8');
// Inlined as they are: neither may hold the tag that would end it early.
if (/<\/script/i.test(SCRIPT) || /<\/style/i.test(STYLE)) {
  throw new Error('page.js or page.css holds a closing </script> or </style> tag');
}
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

/**
 * The page may run its own script and style, and nothing else: no fetch, no image from the
 * network, no form. Anything a trace's text could smuggle in as HTML would be refused too.
 */
export const CSP = [
  "default-src 'none'",
  `script-src 'sha256-${sha256(SCRIPT)}'`,
  `style-src 'sha256-${sha256(STYLE)}'`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The whole page for a trace: its text, or its lines one at a time (scripts/inspect.ts reads a
 * file so). Throws NotATraceError if it is not one.
 */
export function renderPage(trace: string | Iterable<string>, options: { title?: string } = {}) {
  const run = replay(readTrace(trace));
  const title = options.title ?? titleOf(run.trace.runs);
  const rows = JSON.stringify(withSharedLists(run.rows));
  const runs = run.trace.runs.length;
  const island = `{"values":[${run.values.json.join(',')}],"runs":${runs},"rows":${rows}}`;
  // <link rel="icon" href="data:,">: or the browser asks the network for /favicon.ico.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${renderHeader(run, title)}
${renderChart(run)}
${renderList(run)}
<script type="application/json" id="trace-data">${jsonForScript(island)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/**
 * Most requests send the same agent's previous list of messages again, and one or two more. So a
 * row of the island names the earlier row its list starts like, and for how many messages:
 *   { n: 7, shared: [6, 170], messages: [171, 172], marks: 'nn' }  (page.js puts them together)
 * Otherwise the lists alone, a few numbers a message, would grow with the square of the run.
 */
function withSharedLists(rows: Row[]): object[] {
  const latest = new Map<string, Row>(); // each agent's latest request with messages, by run
  return rows.map((row) => {
    if (!row.messages) return row;
    const key = `${row.run} ${row.agent}`;
    const before = latest.get(key);
    latest.set(key, row);
    const ids = row.messages;
    const previous = before?.messages ?? [];
    let same = 0;
    while (same < ids.length && same < previous.length && ids[same] === previous[same]) same++;
    if (same === 0) return row;
    // Those messages were all in the previous request: their marks are all `r`, left out too.
    const marks = row.marks!.slice(same);
    return { ...row, shared: [before!.n, same], messages: ids.slice(same), marks };
  });
}
