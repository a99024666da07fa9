/**
 * The list: one line per exchange, with compactions and the starts of runs between them;
 * page.js fills a line in when it is opened.
 */
import { compactionsOf, describeCompaction, describeRun, sentAfter, tierOf } from './chart.ts';
import { isModelLookup, plural } from './header.ts';
import { dollars, duration, escapeHtml, inputOf, number, seconds } from './html.ts';
import { failure, hasFailed, wasInterrupted, type Replay, type Row } from './replay.ts';
import type { NumberedEvent, TraceEvent } from './trace.ts';

export function renderList(run: Replay): string {
  const compactions = compactionsOf(run);
  const several = run.trace.runs.length > 1;
  const lines: string[] = [];
  let next = 0; // the next compaction to place
  let current = -1; // the run of the last line
  const place = (before: (event: NumberedEvent) => boolean) => {
    while (next < compactions.length && before(compactions[next])) {
      lines.push(compactionLine(compactions[next++]));
    }
  };
  const startRuns = (upTo: number) => {
    for (; current < upTo; current++) if (several) lines.push(runLine(run, current + 1));
  };
  const starts = new Map<number, number>(); // each run's first time sent, for the `+4.2 s`
  for (const row of run.rows) {
    if (!starts.has(row.run)) starts.set(row.run, row.times.sent);
    place((event) => event.run < row.run); // the last compactions of the runs before this one
    startRuns(row.run);
    place((event) => sentAfter(row, event));
    lines.push(requestLine(row, starts.get(row.run)!));
  }
  place(() => true);
  startRuns(run.trace.runs.length - 1); // runs after the last exchange, with none of their own
  const runs = several ? ` The file holds ${run.trace.runs.length} runs, appended one after the \
other: each starts with a line of its own, and numbers on from the last.` : '';
  return `<main>
<h2>Requests</h2>
<p class="note">Each line opens to show the request as sent: what is new since the same \
agent's previous request, set apart from what was sent again.${runs}</p>
<div class="requests">
${lines.join('\n')}
</div>
</main>`;
}

function compactionLine(event: TraceEvent): string {
  const tier = tierOf(event);
  return `<div class="event compaction" data-tier="${tier}">${describeCompaction(event)}</div>`;
}

function runLine(run: Replay, k: number): string {
  return `<div class="event run-start" id="run${k + 1}">${escapeHtml(describeRun(run, k))}</div>`;
}

// The agent's name is text from the trace: it becomes a class only if it is one of these.
const AGENTS = ['main', 'sub-agent', 'compaction'];

/** `#7 +4.2 s main tool_use 9 messages: 2 new … in 3,681 · out 78 $0.0081 20 ms` */
function requestLine(row: Row, start: number): string {
  const agent = AGENTS.includes(row.agent) ? `agent agent-${row.agent}` : 'agent';
  const bits: [string, string][] = [
    ['n', `#${row.n}`],
    ['at', `+${duration(row.times.sent - start)}`],
    [agent, row.agent],
  ];
  if (row.try > 1) bits.push(['retry', `try ${row.try}`]);
  if (!row.isRequest) bits.push(['path', `${row.method} ${row.path}`]);
  if (isModelLookup(row)) bits.push(['what', "the model's context window, looked up at start-up"]);
  if (hasFailed(row)) bits.push(['error', failure(row)]);
  if (wasInterrupted(row)) bits.push(['interrupted', `interrupted: ${row.error}`]);
  if (row.retriedAs) bits.push(['retry', `retried as #${row.retriedAs}`]);
  const stop = (row.response as { stop_reason?: unknown } | null)?.stop_reason;
  if (row.isRequest && typeof stop === 'string') bits.push(['stop', stop]);
  if (row.marks !== undefined) bits.push(['messages', describeMarks(row.marks)]);
  if (row.summary) bits.push(['has-summary', 'summary']);
  if (row.placeholders) {
    bits.push(['has-placeholders', plural(row.placeholders, 'new placeholder')]);
  }
  if (row.usage) {
    const u = row.usage;
    // `in 1,649 (cache: 1,329 read, 320 written) · out 93`
    const cache = [u.read && `${number(u.read)} read`, u.written && `${number(u.written)} written`]
      .filter(Boolean);
    const cached = cache.length ? ` (cache: ${cache.join(', ')})` : '';
    bits.push(['tokens', `in ${number(inputOf(u))}${cached} · out ${number(u.output)}`]);
    if (!row.offline) bits.push(['cost', dollars(row.cost)]); // no price for the offline model
  }
  const { sent, done } = row.times;
  bits.push(['time', seconds(done === null ? null : done - sent)]);
  const summary = bits.map(([kind, text]) => `<span class="${kind}">${escapeHtml(text)}</span>`);
  return `<details class="request${row.isRequest ? '' : ' other'}" id="r${row.n}" \
data-n="${row.n}"><summary>${summary.join(' ')}</summary><div class="body"></div></details>`;
}

/** 'rrrnn' → `5 messages: 2 new`; 'n' → `1 new message` */
function describeMarks(marks: string): string {
  const fresh = marks.split('n').length - 1;
  const changed = marks.split('c').length - 1;
  if (fresh === marks.length) return plural(fresh, 'new message');
  const split = [fresh && `${fresh} new`, changed && `${changed} changed`].filter(Boolean);
  const sent = plural(marks.length, 'message');
  return split.length ? `${sent}: ${split.join(', ')}` : `${sent}, all resent`;
}
