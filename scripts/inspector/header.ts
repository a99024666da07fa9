/**
 * The page's header: what ran, when, and what it came to (requests, tokens, cost, time, the
 * context window), and whether the offline demo model answered.
 */
import { dollars, duration, escapeHtml, inputOf, number, when } from './html.ts';
import { hasFailed, wasInterrupted, type Context, type Replay, type Row } from './replay.ts';
import type { TraceHeader } from './trace.ts';

export const chapterOf = (header: TraceHeader) => header.chapter ?? 'agent';
export const plural = (n: number, one: string, many = `${one}s`) =>
  `${number(n)} ${n === 1 ? one : many}`;

/** `s05_context_compact trace, 2026-11-24 10:00:00 UTC`, or `…, 3 runs from 2026-11-24 …` */
export function titleOf(runs: TraceHeader[]): string {
  const chapters = [...new Set(runs.map(chapterOf))].join(', ');
  if (runs.length === 1) return `${chapters} trace, ${when(runs[0].started)}`;
  return `${chapters} trace, ${runs.length} runs from ${when(runs[0].started)}`;
}

export function renderHeader(run: Replay, title: string): string {
  const { runs, skipped } = run.trace;
  const requests = run.rows.filter((row) => row.isRequest);
  const byAgent = new Map<string, number>();
  for (const row of requests) byAgent.set(row.agent, (byAgent.get(row.agent) ?? 0) + 1);
  const agents = [...byAgent].map(([agent, n]) => `${number(n)} ${agent}`).join(', ');
  const failed = requests.filter(hasFailed).length;
  const interrupted = requests.filter(wasInterrupted).length;
  const used = requests.flatMap((row) => (row.usage ? [row.usage] : []));
  const sum = (part: (u: NonNullable<Row['usage']>) => number) =>
    used.reduce((total, u) => total + part(u), 0);
  const input = sum(inputOf);
  const fromCache = input ? Math.round((sum((u) => u.read) / input) * 100) : 0;
  // From the first request to the last of each run, added up: runs may be days apart.
  const firsts = new Map<number, number>(); // each run's first time sent, and its last time
  const lasts = new Map<number, number>();
  for (const { run: k, times } of run.rows) {
    if (!firsts.has(k)) firsts.set(k, times.sent);
    lasts.set(k, Math.max(lasts.get(k) ?? -Infinity, times.done ?? times.sent));
  }
  let span = 0;
  for (const [k, first] of firsts) span += lasts.get(k)! - first;
  const contexts = [...new Set(run.contexts.flatMap((c) => (c ? [JSON.stringify(c)] : [])))];
  const context: Context | undefined = contexts.length === 1 ? JSON.parse(contexts[0]) : undefined;

  const facts = [
    `${plural(requests.length, 'request')} to the model${agents ? ` (${agents})` : ''}`,
    ...describeOthers(run.rows.filter((row) => !row.isRequest)),
    failed ? `${number(failed)} failed` : '',
    interrupted ? `${number(interrupted)} interrupted` : '',
    `${number(input)} input tokens, ${fromCache}% read from the cache`,
    `${number(sum((u) => u.output))} output tokens`,
    describeCost(requests),
    run.rows.length === 0 ? '' : `${duration(span)} from the first request to the last` +
      (runs.length > 1 ? ' (each run\'s, added up)' : ''),
    context ? `context window ${number(context.window)} tokens, ` +
      `compaction from ${number(context.threshold)}` : '',
  ].filter(Boolean);
  const where = runs.length === 1
    ? [`${chapterOf(runs[0])}, started ${when(runs[0].started)}`]
    : [`${runs.length} runs, appended to one file: the first started ${when(runs[0].started)}, ` +
      `the last ${when(runs.at(-1)!.started)}`];
  const workspaces = [...new Set(runs.flatMap((h) => (h.workspace ? [h.workspace] : [])))];
  if (workspaces.length === 1) where.push(`in ${workspaces[0]}`);
  else if (workspaces.length > 1) where.push(`in ${workspaces.length} folders`);
  const lines = `line${skipped === 1 ? '' : 's'}`;
  const note = skipped ? `<p class="note">${number(skipped)} ${lines} of the trace skipped: cut ` +
    'off mid-write, too long to read, or of a kind this page does not know.</p>\n' : '';
  const these = runs.length === 1 ? 'this run' : 'these runs';
  return `<header>
<h1>${escapeHtml(title)}</h1>
<p class="lede">Every request ${these} sent to the model, in order: the chart shows each one's \
size in tokens, and opening one shows what it sent and what came back.</p>
<p class="where">${escapeHtml(where.join(' · '))}</p>
${describeOffline(runs)}<ul class="facts">\
${facts.map((fact) => `<li>${escapeHtml(fact)}</li>`).join('')}</ul>
${note}</header>`;
}

/** GET /v1/models/{id}: s05 and s06 ask the API for the model's context window at start-up. */
export const isModelLookup = ({ method, path }: Row) =>
  method === 'GET' && path.startsWith('/v1/models/');

/**
 * The exchanges listed that are not requests to the model, so that the header counts what the
 * list shows: `1 lookup of the model (GET /v1/models/claude-sonnet-5-5): its context window, …`
 */
function describeOthers(others: Row[]): string[] {
  const lookups = others.filter(isModelLookup);
  const paths = [...new Set(lookups.map((row) => row.path))];
  const path = paths.length === 1 ? paths[0] : '/v1/models/{id}';
  return [
    lookups.length ? `${plural(lookups.length, 'lookup')} of the model (GET ${path}): its ` +
      'context window, asked at start-up' : '',
    others.length > lookups.length
      ? `${plural(others.length - lookups.length, 'other exchange')} with the API` : '',
  ];
}

/** `cost $0.0612, an estimate at list prices`: what the tokens would cost, not a bill. */
function describeCost(requests: Row[]): string {
  const paid = requests.filter((row) => !row.offline);
  if (requests.length > 0 && paid.length === 0) return ''; // the offline demo model's only
  const costs = paid.flatMap((row) => (row.cost === undefined ? [] : [row.cost]));
  if (costs.length === 0) return 'cost —';
  const unpriced = paid.filter((row) => row.usage).length - costs.length;
  const offline = paid.length < requests.length ? '; none for the offline runs' : '';
  return `cost ${dollars(costs.reduce((a, b) => a + b, 0))}, an estimate at list prices` +
    `${unpriced ? ` (and ${unpriced} of unknown price)` : ''}${offline}`;
}

/** An offline run: what answered, and that no model ran. */
function describeOffline(runs: TraceHeader[]): string {
  const offline = runs.filter((header) => header.offline).length;
  if (offline === 0) return '';
  const which = runs.length === 1 ? 'This run was offline'
    : offline === runs.length ? 'Every run was offline'
    : `${offline} of the ${runs.length} runs were offline`;
  return `<p class="note offline">${which}: with no API key set, the offline demo model answered \
(shared/offline-model.ts: a few rules, not an AI). So no model ran, nothing was charged, and the \
token counts are its estimates.</p>\n`;
}
