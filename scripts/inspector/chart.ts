/**
 * The chart: one step per request, drawn here as SVG so it needs no script; the context window
 * and threshold, compactions, the start of each run, where placeholders begin, the legend.
 */
import { chapterOf, plural } from './header.ts';
import { escapeHtml, inputOf, number, when } from './html.ts';
import {
  failure,
  hasFailed,
  wasInterrupted,
  type Context,
  type Replay,
  type Row,
} from './replay.ts';
import type { NumberedEvent, TraceEvent } from './trace.ts';
import { finite } from './untrusted.ts';

// Pixels. As wide as the page's column, and page.css scales it down to a narrower window. Above
// the plot: two rows of labels (compactions, the start of each run), then the placeholder marks.
const CHART = { width: 1158, left: 64, right: 16, top: 52, height: 200, bottom: 18 };
const LABEL_ROWS = [14, 28]; // the baselines of the label rows
const MARK_ROW = CHART.top - 11; // the top of the placeholder marks
const MAX_BAR = 48; // a short run's bars stay bars, not a wall
type Scale = (tokens: number) => number; // tokens → y

/**
 * An event goes before the first exchange sent after it: the recorder counts the exchanges sent
 * before each event. (A trace without that count: the first sent later, its summary's aside.)
 */
export function sentAfter(row: Row, event: NumberedEvent): boolean {
  if (finite(event.exchanges)) return row.n > event.exchanges;
  if (row.run !== event.run) return row.run > event.run;
  return row.agent !== 'compaction' && row.times.sent >= event.at;
}

/** Tier 3 is a compaction you or the model asked for; tier 2, one that had to happen. */
export function tierOf(event: TraceEvent): number {
  return event.why === 'you asked' || event.why === 'the model asked' ? 3 : 2;
}

export function describeCompaction(event: TraceEvent): string {
  const show = (value: unknown) => escapeHtml(finite(value) ? number(value) : value ?? '?');
  const [why, messages, before, after] = [event.why, event.messages, event.before, event.after]
    .map(show);
  return `compaction, tier ${tierOf(event)} (${why}): ${messages} messages replaced by a ` +
    `summary; context ${before} → ${after} tokens (estimated)`;
}

export const compactionsOf = (run: Replay) =>
  run.trace.events.filter((e) => e.event === 'compaction');

/** `run 2 of 3: s06_prompt, started 2026-11-24 10:00:00 UTC, in /home/me/app` */
export function describeRun(run: Replay, k: number): string {
  const header = run.trace.runs[k];
  const where = header.workspace ? `, in ${header.workspace}` : '';
  return `run ${k + 1} of ${run.trace.runs.length}: ${chapterOf(header)}, started ` +
    `${when(header.started)}${where}`;
}

export function renderChart(run: Replay): string {
  const steps = run.rows.filter((row) => row.isRequest);
  if (steps.length === 0) return '<section class="chart"><p>No requests.</p></section>';
  // The steps share the plot's width: a short run's are wide, a long run's a pixel or so.
  const right = CHART.width - CHART.right;
  const width = (right - CHART.left) / steps.length;
  const xOf = (i: number) => CHART.left + i * width; // the left of step i; of steps.length: the end
  const totals = steps.map((row) => (row.usage ? inputOf(row.usage) + row.usage.output : 0));
  // Not Math.max(...totals): a spread of 300,000 arguments overflows the stack.
  const highest = totals.reduce((a, b) => Math.max(a, b), 1);
  // A window far above every request (200,000 tokens, and a short run) would flatten the steps
  // to nothing: then the chart stops short of it, and says so under it.
  const shown = run.contexts.map((c) => (c && c.threshold <= highest * 2.5 ? c : undefined));
  const reach = shown.reduce((a, c) => Math.max(a, c?.window ?? 0), highest) * 1.05;
  const tick = tickStep(reach);
  const top = Math.ceil(reach / tick) * tick;
  const y: Scale = (value) => round(CHART.top + CHART.height - (value / top) * CHART.height);

  // Where each run's steps start, and where each compaction falls: before the step sent after it.
  const starts = run.trace.runs.map(() => steps.length); // then the first step of each run
  for (let i = steps.length - 1; i >= 0; i--) starts[steps[i].run] = i;
  for (let k = starts.length - 2; k >= 0; k--) starts[k] = Math.min(starts[k], starts[k + 1]);
  const compactions = compactionsOf(run).map((event) =>
    ({ event, at: indexOr(steps.findIndex((row) => sentAfter(row, event)), steps.length) }));
  let previous: Context | undefined; // the last run's before this one that said its window
  const limitLines = shown.flatMap((context, k) => {
    if (!context) return [];
    const before = previous;
    previous = context;
    const named = !before || JSON.stringify(before) !== JSON.stringify(context);
    return limits(context, y, xOf(starts[k]), xOf(starts[k + 1] ?? steps.length), { named });
  });
  const markers = placeLabels([
    ...starts.slice(1).map((at, i) => ({ x: round(xOf(at)), label: `run ${i + 2}`,
      draw: (row: number | undefined) => runMarker(describeRun(run, i + 1), xOf(at), row) })),
    ...compactions.map(({ event, at }) => ({ x: round(xOf(at)), label: `C${tierOf(event)}`,
      draw: (row: number | undefined) => compactionMarker(event, xOf(at), row) })),
  ]);
  const stretches = new Set([...starts.slice(1), ...compactions.map((c) => c.at)]);
  const parts = [
    axis(top, tick, y, right),
    ...steps.map((row, i) => step(row, xOf(i), width, y)),
    ...limitLines,
    ...placeholderMarks(steps, stretches, (i) => xOf(i) + width / 2),
    ...markers,
  ];
  const height = CHART.top + CHART.height + CHART.bottom;
  const label = `Tokens of each of the ${plural(steps.length, 'request')}`;
  const offScale = [...new Set(run.contexts.flatMap((c, k) =>
    (c && !shown[k] ? [describeOffScale(c)] : [])))];
  const note = offScale.length ? `<p class="note off-scale">${offScale.join(' ')}</p>\n` : '';
  return `<section class="chart">
<div class="plot"><svg${width < 4 ? ' class="dense"' : ''} width="${CHART.width}" \
height="${height}" viewBox="0 0 ${CHART.width} ${height}" aria-label="${escapeHtml(label)}">
${parts.join('\n')}
</svg></div>
<p class="hover" id="chart-info">Point at a step to see its tokens; click it to open its \
request.</p>
${note}${legend({ lines: limitLines.length > 0, runs: run.trace.runs.length > 1 })}
</section>`;
}

const indexOr = (index: number, otherwise: number) => (index === -1 ? otherwise : index);
const round = (value: number) => Math.round(value * 10) / 10;
const short = (n: number) => (n >= 1000 ? `${round(n / 1000)}k` : String(Math.round(n)));

/** A round step between grid lines, four or five of them: 1, 2, 2.5 or 5 times a power of 10. */
function tickStep(highest: number): number {
  const rough = highest / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((step) => step >= rough)!;
}

function axis(top: number, tick: number, y: Scale, right: number): string {
  const lines: string[] = [];
  for (let value = 0; value <= top; value += tick) {
    const grid = `<line class="grid" x1="${CHART.left}" x2="${right}" y1="${y(value)}" \
y2="${y(value)}"/>`;
    lines.push(`${grid}<text class="tick" x="${CHART.left - 6}" y="${y(value) + 4}">\
${short(value)}</text>`);
  }
  return lines.join('\n');
}

const STEP_CLASS: Record<string, string> = { main: 'main', 'sub-agent': 'sub-agent' };

/**
 * One request, a link to its line in the list: its input (read from the cache, written to it,
 * uncached) and its output stacked, a red foot if it failed, a band on top if an agent other
 * than the main one sent it. All above the axis: nothing is drawn below zero tokens.
 */
function step(row: Row, x: number, width: number, y: Scale): string {
  // Bars with a gap between them while there is room for one; past that, side by side.
  const bar = width >= 4 ? Math.min(MAX_BAR, width * 0.8) : width;
  const left = round(x + (width - bar) / 2);
  const base = CHART.top + CHART.height;
  const rect = (kind: string, top: number, height: number) =>
    `<rect class="${kind}" x="${left}" y="${top}" width="${round(bar)}" height="${height}"/>`;
  // A hit area of the step's full height: a short bar is as easy to point at as a tall one.
  const parts = [`<rect class="hit" x="${round(x)}" y="${CHART.top}" width="${round(width)}" \
height="${CHART.height}"/>`];
  const u = row.usage;
  const stack: [string, number][] = u
    ? [['read', u.read], ['written', u.written], ['uncached', u.uncached], ['output', u.output]]
    : [];
  let level = 0;
  for (const [kind, value] of stack) {
    if (value <= 0) continue;
    const bottom = y(level);
    level += value;
    parts.push(rect(kind, y(level), round(bottom - y(level))));
  }
  const foot = hasFailed(row) ? 'failure' : wasInterrupted(row) ? 'interrupted' : undefined;
  if (foot) parts.push(rect(foot, base - 6, 6));
  // The band sits on the bar: under the axis it would read as tokens below zero.
  const top = Math.min(y(level), foot ? base - 6 : base);
  if (row.agent !== 'main') parts.push(rect('band', round(top - 8), 6));
  const classes = ['step', STEP_CLASS[row.agent] ?? 'summariser'];
  if (hasFailed(row)) classes.push('failed');
  if (wasInterrupted(row)) classes.push('interrupted');
  return `<a class="${classes.join(' ')}" data-n="${row.n}" href="#r${row.n}"><title>\
${escapeHtml(stepTitle(row))}</title>${parts.join('')}</a>`;
}

function stepTitle(row: Row): string {
  const who = `#${row.n} ${row.agent}${row.try > 1 ? `, try ${row.try}` : ''}`;
  if (!row.usage) return `${who}: ${failure(row) || 'no usage'}`;
  const u = row.usage;
  const input = `${number(inputOf(u))} in (${number(u.read)} read from the cache, ` +
    `${number(u.written)} written to it, ${number(u.uncached)} uncached)`;
  const cleared = row.placeholders ? `; ${placeholders(row.placeholders)} for the first time` : '';
  return `${who}: ${input}, ${number(u.output)} out${cleared}`;
}

/** `1 tool result sent as a placeholder`, `3 tool results sent as placeholders` */
const placeholders = (n: number) =>
  `${plural(n, 'tool result')} sent as ${n === 1 ? 'a placeholder' : 'placeholders'}`;

/**
 * Tier 1 sends old results as placeholders on nearly every request of a long run: a mark on each
 * would be a solid band. So one mark a stretch (from a compaction or the start of a run to the
 * next), on the first request of it that sent one, saying how many the stretch sent in all.
 */
function placeholderMarks(steps: Row[], stretches: Set<number>, middleOf: (i: number) => number) {
  const marks: { i: number; first: Row; last: Row; results: number }[] = [];
  let open: (typeof marks)[number] | undefined;
  steps.forEach((row, i) => {
    if (stretches.has(i)) open = undefined;
    if (!row.placeholders) return;
    if (!open) marks.push(open = { i, first: row, last: row, results: 0 });
    open.last = row;
    open.results += row.placeholders;
  });
  return marks.map(({ i, first, last, results }) => {
    const middle = round(middleOf(i));
    const until = last === first ? `in #${first.n}` : `from #${first.n} to #${last.n}`;
    const what = `${placeholders(results)} ${until}`;
    return `<a class="placeholder-mark" href="#r${first.n}"><path class="placeholders" \
data-n="${first.n}" d="M${middle - 4} ${MARK_ROW}h8l-4 7z"/><title>${what}</title></a>`;
  });
}

/**
 * Each marker's label goes in the first row where it clears the label before it; a label with no
 * room left is not drawn (its line, and its title, still are).
 */
function placeLabels(markers: { x: number; label: string; draw: (row?: number) => string }[]) {
  const ends = LABEL_ROWS.map(() => -Infinity);
  return markers.sort((a, b) => a.x - b.x).map(({ x, label, draw }) => {
    const row = ends.findIndex((end) => x + 3 >= end);
    if (row !== -1) ends[row] = x + 3 + label.length * 7 + 4; // 11px text: about 7px a letter
    return draw(row === -1 ? undefined : row);
  });
}

/** A dashed line down from the label rows, and `C2` or `C3` in the row it was given. */
function compactionMarker(event: TraceEvent, x: number, row: number | undefined): string {
  const tier = tierOf(event);
  const left = round(x);
  const text = row === undefined ? '' : `<text x="${left + 3}" y="${LABEL_ROWS[row]}">C${tier}\
</text>`;
  return `<g class="compaction tier-${tier}" data-tier="${tier}"><line x1="${left}" \
x2="${left}" y1="${LABEL_ROWS[0] - 10}" y2="${CHART.top + CHART.height}"/>${text}\
<title>${describeCompaction(event)}</title></g>`;
}

/** A thin line where a run appended to the same file starts, and `run 2`. */
function runMarker(description: string, x: number, row: number | undefined): string {
  const left = round(x);
  const label = /^run \d+/.exec(description)![0];
  const text = row === undefined ? '' : `<text x="${left + 3}" y="${LABEL_ROWS[row]}">${label}\
</text>`;
  return `<g class="run-start"><line x1="${left}" x2="${left}" y1="${LABEL_ROWS[0] - 10}" \
y2="${CHART.top + CHART.height + 14}"/>${text}<title>${escapeHtml(description)}</title></g>`;
}

function describeOffScale({ window, threshold }: Context): string {
  return `Above the top of the chart: the context window, ${number(window)} tokens, and the \
compaction threshold, ${number(threshold)}.`;
}

/** The window and threshold of one run, from its first step to the next run's. */
function limits({ window, threshold }: Context, y: Scale, from: number, to: number,
  options: { named: boolean }) {
  const lines: [string, number, string][] = [
    ['window', window, 'context window'],
    ['threshold', threshold, 'compaction threshold'],
  ];
  // A name only where there is room for it, and once for a value the runs share.
  const named = options.named && to - from > 180;
  return lines.map(([kind, value, name]) => `<g class="${kind}"><line x1="${round(from)}" \
x2="${round(to)}" y1="${y(value)}" y2="${y(value)}"/>${named ? `<text x="${round(from) + 4}" \
y="${y(value) - 4}">${name} ${number(value)}</text>` : ''}</g>`);
}

function legend(options: { lines: boolean; runs: boolean }): string {
  const items: [string, string][] = [
    ['read', 'input read from the cache'],
    ['written', 'input written to the cache'],
    ['uncached', 'input, uncached'],
    ['output', 'output'],
    ['sub-agent', 'sent by a sub-agent'],
    ['summariser', 'a compaction summary request'],
    ['failure', 'failed (an error, or no complete reply)'],
    ['interrupted', 'interrupted (Ctrl+C, or a silent stream given up on)'],
    ['compaction', 'compaction (C2 automatic, C3 asked for)'],
    ['placeholders', 'where tool results start going out as placeholders'],
  ];
  if (options.runs) items.push(['run-start', 'the start of a run (appended to the same file)']);
  if (options.lines) {
    items.push(['window', 'context window'], ['threshold', 'compaction threshold']);
  }
  const shown = items.map(([kind, name]) =>
    `<li><span class="swatch swatch-${kind}"></span>${name}</li>`);
  return `<ul class="legend">${shown.join('')}</ul>`;
}
