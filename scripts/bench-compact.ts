/**
 * npm run bench:compact — what s05's compaction saves, against s04, on one scripted long session.
 *
 * The session: 40 turns in a workspace of a dozen source files of 300 lines, each turn reading files,
 * running commands with large outputs (`seq 1 3000`, `cat` of two files), editing with edit_file or
 * grepping; at turn 30 the model calls `compact` (s04 has no such tool: it gets an error result).
 * The "model" is the local fake of the Messages API with a scripted `respond`: its reply depends only
 * on the turn (the `step k:` prompt the request ends with) and on how many replies it has already
 * given in that turn, never on what compaction left of the conversation; requests without tools are
 * s05's summary requests, answered with a fixed summary. So both chapters get the same script.
 *
 * Each run is one REPL session through a pseudo-terminal (runRepl, as the tests do), one process from
 * the cached bundle: 40 `-c -p` processes a run would spend most of their time starting up. Two runs:
 *   (a) a window s04 fits in (the fake takes 1,000,000 tokens; s05 gets CONTEXT_WINDOW=200000, the
 *       real window, so its tiers act as by default): cumulative input tokens, s05/s04;
 *   (b) a 32,000-token window (the fake, and CONTEXT_WINDOW for s05): where s04 stops, how far s05 gets.
 * It prints a table and writes s05_context_compact/context.svg (the context sent on each request in
 * run (a)). Token figures are the fake's estimate (characters / 4), the same on every run; wall times vary.
 *
 * A measuring tool, not a test: it prints figures and asserts nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reply, text, toolUse, type RecordedRequest, type Reply, type ReplyBlock } from '../shared/fake-anthropic.ts';
import { cleanupTemp, REPO, runRepl } from '../tests/helpers/run-chapter.ts';

// ── The workspace: a dozen modules of unique lines ──────────────────────────────────────────────
const MODULES = 12;
const LINES = 300;
const TURNS = 40;
const COMPACT_TURN = 30; // the turn in which the model calls `compact`
const pad = (n: number) => String(n).padStart(2, '0');
const file = (m: number) => `src/mod${pad(m)}.ts`;

const FILES: Record<string, string> = {};
for (let m = 1; m <= MODULES; m++) {
  const lines = [`// Module ${m}: generated for bench:compact.`, `import { compute } from './compute.ts';`];
  for (let i = 1; i <= LINES - 2; i++) {
    // → export const item_3_17 = compute(17, 3); // entry 17 of module 3, see docs/mod03.md
    const line = `export const item_${m}_${i} = compute(${i}, ${m});`;
    lines.push(`${line} // entry ${i} of module ${m}, see docs/mod${pad(m)}.md`);
  }
  FILES[file(m)] = `${lines.join('\n')}\n`;
}
FILES['src/compute.ts'] = 'export const compute = (i: number, m: number) => i * 31 + m;\n';

// ── The script: turn k → its prompt, its rounds of tool calls, its final answer ─────────────────
interface Turn {
  prompt: string;
  rounds: ReplyBlock[][];
  answer: string;
}

function turn(k: number): Turn {
  const f = ((k - 1) % MODULES) + 1; // the module this turn is about
  const g = (k % MODULES) + 1; // and the next one
  const say = (what: string, ...calls: ReplyBlock[]) => [text(what), ...calls];
  let t: Turn;
  switch ((k - 1) % 5) {
    case 0:
      t = {
        prompt: `read ${file(f)} and tell me what it exports`,
        rounds: [say(`Reading ${file(f)}.`, toolUse('read_file', { file_path: file(f) }))],
        answer: `${file(f)} exports item_${f}_1 to item_${f}_${LINES - 2}, each a compute() call.`,
      };
      break;
    case 1:
      t = {
        prompt: 'count to 3000 with seq and check that nothing is missing',
        rounds: [say('Running seq.', toolUse('bash', { command: 'seq 1 3000' }))],
        answer: 'seq printed 1 to 3000, one per line, nothing missing.',
      };
      break;
    case 2:
      t = {
        prompt: `in ${file(f)}, make item_${f}_${k} use module ${f + 1}`,
        rounds: [
          say(`Reading ${file(f)} first.`, toolUse('read_file', { file_path: file(f) })),
          say(
            'Changing that line.',
            toolUse('edit_file', {
              file_path: file(f),
              old_string: `compute(${k}, ${f})`, // once in the file: compute(13, 1) is not in compute(13, 12)
              new_string: `compute(${k}, ${f + 1})`,
            }),
          ),
        ],
        answer: `item_${f}_${k} now calls compute(${k}, ${f + 1}).`,
      };
      break;
    case 3:
      t = {
        prompt: `show me ${file(f)} and ${file(g)} together, then find items 10 to 19 of module ${f}`,
        rounds: [
          say('Printing both.', toolUse('bash', { command: `cat ${file(f)} ${file(g)}` })),
          say('Searching.', toolUse('grep', { pattern: `item_${f}_1\\d `, path: 'src' })),
        ],
        answer: `Items 10 to 19 of module ${f} are in ${file(f)}, lines 12 to 21.`,
      };
      break;
    default:
      t = {
        prompt: `how long are the modules, and what is in lines 100 to 159 of ${file(f)}?`,
        rounds: [
          say(
            'Counting lines and reading that part.',
            toolUse('bash', { command: 'wc -l src/*.ts' }),
            toolUse('read_file', { file_path: file(f), offset: 100, limit: 60 }),
          ),
        ],
        answer: `Each module has ${LINES} lines; lines 100 to 159 of ${file(f)} are items 98 to 157.`,
      };
  }
  if (k === COMPACT_TURN) {
    t.prompt += ', then compact the conversation';
    t.rounds.push(say('Compacting.', toolUse('compact', { focus: 'the edits made so far and the files read' })));
  }
  // Ids of our own, so the figures can follow each call: toolu_bench_<turn>_<round>_<call>.
  const rounds = t.rounds.map((blocks, r) =>
    blocks.map((b, j) => (b.type === 'tool_use' ? { ...b, id: `toolu_bench_${k}_${r}_${j}` } : b)),
  );
  return { prompt: `step ${k}: ${t.prompt}`, rounds, answer: `Step ${k} done: ${t.answer}` };
}
const SCRIPT = Array.from({ length: TURNS }, (_, i) => turn(i + 1));

const SUMMARY =
  'Requests: the user is going through numbered steps over the modules in src/ (mod01.ts to mod12.ts): ' +
  'reading them, running seq and cat, grepping, and one-line edits with edit_file. Files: src/mod*.ts, ' +
  'several edited (an item_m_k line made to call compute(k, m + 1)). Errors: none. Decisions: one edit per ' +
  'step, nothing else touched. State: every step so far is done. Next step: wait for the next step.';

/** The scripted model of one run, and what it saw. */
function scriptedModel() {
  let current = 0; // the turn being answered
  let stage = 0; // replies given in this turn so far
  const answered = new Set<number>(); // turns whose final answer was sent
  const called = new Set<string>(); // the ids of the tool calls sent, but `compact`'s (its result is compacted)
  const respond = (body: any): Reply => {
    const last = body.messages.at(-1);
    const prompt = typeof last.content === 'string' ? last.content : '';
    if (body.tools === undefined) {
      // s05 asking for a summary: no tools offered, and the last message asks to summarise.
      if (!/summari[sz]e/i.test(prompt)) return reply(text('(a request without tools that asks for no summary)'));
      return reply(text(SUMMARY));
    }
    // A request that ends with a `step k:` prompt opens turn k; any other continues the turn.
    const opens = last.role === 'user' ? prompt.match(/^step (\d+):/) : null;
    if (opens) [current, stage] = [Number(opens[1]), 0];
    else stage++;
    const t = SCRIPT[current - 1];
    if (!t) return reply(text('(no step was asked for)'));
    if (stage < t.rounds.length) {
      for (const b of t.rounds[stage]) if (b.type === 'tool_use' && b.name !== 'compact') called.add(b.id!);
      return reply(...t.rounds[stage]);
    }
    answered.add(current);
    return reply(text(t.answer));
  };
  return { respond, answered, called };
}

// ── One run ─────────────────────────────────────────────────────────────────────────────────────
interface Figures {
  chapter: string;
  /** Each request the fake accepted, in order: its input tokens, its turn, whether it asked for a summary. */
  sent: { tokens: number; turn: number; summary: boolean }[];
  refused: { turn: number; message: string }[];
  completed: number;
  placeholders: number;
  /** Tool calls whose result never reached the model whole: compacted away (or refused) before it was sent. */
  unseen: number;
  /** Tool calls whose result was an error. */
  errors: number;
  compactions: Record<string, number>;
  fallbacks: number;
  seconds: number;
}

/** The turn a request belongs to: its last `step k:` prompt (0 if a compaction left none). */
function turnOf(body: any): number {
  const steps = (body?.messages ?? []).map((m: any) => (typeof m.content === 'string' ? m.content : ''));
  const last = steps.findLast((content: string) => /^step \d+:/.test(content));
  return Number(last?.match(/^step (\d+):/)[1] ?? 0);
}

async function run(chapter: 's04' | 's05', fakeWindow: number, contextWindow: number): Promise<Figures> {
  const model = scriptedModel();
  const started = performance.now();
  const result = await runRepl(chapter, [...SCRIPT.map((t) => t.prompt), 'exit'], {
    respond: model.respond,
    fake: { contextWindow: fakeWindow },
    env: { CONTEXT_WINDOW: String(contextWindow) },
    files: FILES,
    expectRefused: true, // s04 is meant to hit the window in run (b); the figures say so
    timeoutMs: 300_000,
  });
  const seconds = (performance.now() - started) / 1000;
  const messages = result.requests.filter((r) => r.path === '/v1/messages');
  const accepted = messages.filter((r) => !r.refused);
  // Tier 1: each tool result counted once, the first time it went out as a placeholder.
  const [cleared, whole, errors] = [new Set<string>(), new Set<string>(), new Set<string>()];
  for (const r of accepted) {
    for (const m of r.body.messages) {
      if (typeof m.content === 'string') continue;
      for (const b of m.content) {
        if (b.type !== 'tool_result') continue;
        const content = typeof b.content === 'string' ? b.content : '';
        (content.startsWith('[cleared to save context') ? cleared : whole).add(b.tool_use_id);
        if (b.is_error) errors.add(b.tool_use_id);
      }
    }
  }
  // Tiers 2 and 3: s05 says why it compacts, "[compacting (auto): …]" (stderr, which the terminal shows).
  const compactions: Record<string, number> = {};
  for (const [, why] of result.stdout.matchAll(/\[compacting \(([^)]*)\)/g)) {
    compactions[why] = (compactions[why] ?? 0) + 1;
  }
  return {
    chapter,
    sent: accepted.map((r: RecordedRequest) => ({
      tokens: r.inputTokens,
      turn: turnOf(r.body),
      summary: r.body.tools === undefined,
    })),
    refused: messages.filter((r) => r.refused).map((r) => ({ turn: turnOf(r.body), message: r.refused!.message })),
    completed: model.answered.size,
    placeholders: cleared.size,
    unseen: [...model.called].filter((id) => !whole.has(id)).length,
    errors: errors.size,
    compactions,
    fallbacks: (result.stdout.match(/the summary request failed/g) ?? []).length,
    seconds,
  };
}

// ── The plot: hand-written SVG, explicit colours on a white ground (GitHub's dark mode too) ──────
const COLORS = { s04: '#c2410c', s05: '#1d4ed8', grid: '#e5e7eb', axis: '#374151', text: '#111827', limit: '#6b7280' };
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A round step for about `count` ticks up to `max`: 1, 2 or 5 times a power of ten. */
function niceStep(max: number, count: number): number {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
}

function svgPlot(a04: Figures, a05: Figures, realWindow: number): string {
  const [W, H] = [880, 460];
  const m = { left: 84, right: 24, top: 56, bottom: 56 };
  const [pw, ph] = [W - m.left - m.right, H - m.top - m.bottom];
  const n = Math.max(a04.sent.length, a05.sent.length);
  const top = Math.max(...a04.sent.map((s) => s.tokens), ...a05.sent.map((s) => s.tokens), realWindow);
  const yStep = niceStep(top, 6);
  const yMax = Math.ceil(top / yStep) * yStep;
  const xStep = niceStep(n, 10);
  const x = (i: number) => m.left + ((i - 1) / Math.max(1, n - 1)) * pw; // request i, 1-based
  const y = (v: number) => m.top + ph - (v / yMax) * ph;
  const p = (v: number) => v.toFixed(1);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      `font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${m.left}" y="24" font-size="15" font-weight="600" fill="${COLORS.text}">` +
      `Context sent on each request: the same ${TURNS}-turn session in s04 and s05</text>`,
    `<text x="${m.left}" y="42" fill="${COLORS.limit}">npm run bench:compact, run (a); ` +
      'tokens as the local fake counts them (characters / 4)</text>',
  );
  for (let v = 0; v <= yMax; v += yStep) {
    out.push(
      `<line x1="${m.left}" y1="${p(y(v))}" x2="${W - m.right}" y2="${p(y(v))}" stroke="${COLORS.grid}"/>`,
      `<text x="${m.left - 8}" y="${p(y(v) + 4)}" text-anchor="end" fill="${COLORS.text}">${fmt(v)}</text>`,
    );
  }
  for (let i = xStep; i <= n; i += xStep) {
    out.push(
      `<line x1="${p(x(i))}" y1="${m.top + ph}" x2="${p(x(i))}" y2="${m.top + ph + 5}" stroke="${COLORS.axis}"/>`,
      `<text x="${p(x(i))}" y="${m.top + ph + 19}" text-anchor="middle" fill="${COLORS.text}">${i}</text>`,
    );
  }
  out.push(
    `<line x1="${m.left}" y1="${m.top + ph}" x2="${W - m.right}" y2="${m.top + ph}" stroke="${COLORS.axis}"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${m.top + ph}" stroke="${COLORS.axis}"/>`,
    `<text x="${m.left + pw / 2}" y="${H - 14}" text-anchor="middle" fill="${COLORS.text}">request number</text>`,
    `<text transform="translate(18 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="${COLORS.text}">` +
      'input tokens sent</text>',
    // The window s05 was told it has: s04's requests above it are what a real 200k model refuses.
    `<line x1="${m.left}" y1="${p(y(realWindow))}" x2="${W - m.right}" y2="${p(y(realWindow))}" ` +
      `stroke="${COLORS.limit}" stroke-dasharray="6 4"/>`,
    `<text x="${m.left + 8}" y="${p(y(realWindow) - 6)}" fill="${COLORS.limit}">` +
      `${fmt(realWindow)}: a real context window (s05's CONTEXT_WINDOW)</text>`,
  );
  for (const f of [a04, a05]) {
    const color = COLORS[f.chapter as 's04' | 's05'];
    const points = f.sent.map((s, i) => `${p(x(i + 1))},${p(y(s.tokens))}`).join(' ');
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" stroke-linejoin="round" points="${points}"/>`);
    const marker = (cx: number, cy: number) =>
      `<circle cx="${p(cx)}" cy="${p(cy)}" r="4" fill="#ffffff" stroke="${color}" stroke-width="2"/>`;
    f.sent.forEach((s, i) => s.summary && out.push(marker(x(i + 1), y(s.tokens))));
  }
  const legend = [
    [COLORS.s04, `s04_session: everything, every time (${fmt(sum(a04))} tokens in all)`],
    [COLORS.s05, `s05_context_compact: three tiers (${fmt(sum(a05))} tokens in all)`],
  ];
  const [lx, ly] = [m.left + 16, y(realWindow) + 30]; // under the window line, above s04's rise
  out.push(`<rect x="${lx - 8}" y="${ly - 12}" width="430" height="66" fill="#ffffff" stroke="${COLORS.grid}"/>`);
  legend.forEach(([color, label], i) => {
    const yy = ly + i * 20;
    out.push(
      `<line x1="${lx}" y1="${yy - 4}" x2="${lx + 24}" y2="${yy - 4}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${lx + 32}" y="${yy}" fill="${COLORS.text}">${label}</text>`,
    );
  });
  out.push(
    `<circle cx="${lx + 12}" cy="${ly + 36}" r="4" fill="#ffffff" stroke="${COLORS.s05}" stroke-width="2"/>`,
    `<text x="${lx + 32}" y="${ly + 40}" fill="${COLORS.text}">a summary request (tiers 2 and 3)</text>`,
    '</svg>',
  );
  return `${out.join('\n')}\n`;
}

// ── Main ────────────────────────────────────────────────────────────────────────────────────────
const sum = (f: Figures) => f.sent.reduce((total, s) => total + s.tokens, 0);
const peak = (f: Figures) => Math.max(0, ...f.sent.map((s) => s.tokens));

const BIG = 1_000_000;
const REAL = 200_000;
const SMALL = 32_000;
const started = performance.now();
const calls = SCRIPT.reduce((n, t) => n + t.rounds.flat().filter((b) => b.type === 'tool_use').length, 0);
console.log(
  `bench:compact: ${TURNS} turns, ${calls} tool calls, in a workspace of ${MODULES} files of ${LINES} lines; ` +
    'one REPL session a run (bundled chapter, pseudo-terminal)',
);
let figures: Figures[];
try {
  figures = [];
  for (const [chapter, fake, window] of [
    ['s04', BIG, REAL],
    ['s05', BIG, REAL],
    ['s04', SMALL, SMALL],
    ['s05', SMALL, SMALL],
  ] as const) {
    process.stdout.write(`  running ${chapter}, window ${fmt(fake === BIG ? window : fake)} …`);
    const f = await run(chapter, fake, window);
    figures.push(f);
    console.log(` ${f.seconds.toFixed(1)} s`);
  }
} finally {
  cleanupTemp();
}
const [a04, a05, b04, b05] = figures;

function table(title: string, left: Figures, right: Figures) {
  /** Compactions whose reason matches: 'auto', 'the API said the prompt is too long', 'the model asked'… */
  const tier = (reason: RegExp) => (f: Figures) =>
    Object.entries(f.compactions).reduce((n, [why, count]) => n + (reason.test(why) ? count : 0), 0);
  const refusedAt = ({ refused: r }: Figures) => (r.length ? `${r.length} (first in turn ${r[0].turn})` : '0');
  const asked = (f: Figures) => `${tier(/model asked/)(f)} / ${tier(/you asked/)(f)}`;
  const rows: [string, (f: Figures) => string][] = [
    ['turns completed', (f) => `${f.completed} of ${TURNS}`],
    ['requests (summary requests)', (f) => `${f.sent.length} (${f.sent.filter((s) => s.summary).length})`],
    ['requests refused as too long', refusedAt],
    ['cumulative input tokens', (f) => fmt(sum(f))],
    ['peak context (one request)', (f) => fmt(peak(f))],
    ['tool results that were errors', (f) => String(f.errors)],
    ['tool results the model never saw whole', (f) => String(f.unseen)],
    ['tier 1: results sent as placeholders', (f) => String(f.placeholders)],
    ['tier 2: auto compactions', (f) => String(tier(/^auto$/)(f))],
    ['tier 2: on "prompt is too long"', (f) => String(tier(/too long/)(f))],
    ['tier 3: the model / you asked', asked],
    ['summaries that failed (fallback used)', (f) => String(f.fallbacks)],
    ['wall time', (f) => `${f.seconds.toFixed(1)} s`],
  ];
  console.log(`\n${title}`);
  console.log(`  ${''.padEnd(38)}${'s04_session'.padStart(22)}${'s05_context_compact'.padStart(22)}`);
  for (const [name, value] of rows) {
    console.log(`  ${name.padEnd(38)}${value(left).padStart(22)}${value(right).padStart(22)}`);
  }
  const whys = [left, right].flatMap((f) => Object.keys(f.compactions));
  const other = whys.filter((why) => !/^auto$|too long|asked/.test(why));
  if (other.length) console.log(`  (compactions for other reasons: ${[...new Set(other)].join(', ')})`);
}

console.log('\n── bench:compact ───────────────────────────────────────────────────────────────────────');
table(`(a) the fake takes ${fmt(BIG)} tokens; s05 runs with CONTEXT_WINDOW=${REAL}`, a04, a05);
const ratio = sum(a05) / sum(a04);
console.log(`  s05 / s04 cumulative input tokens: ${(ratio * 100).toFixed(1)} % (the goal: at most 35 %)`);
const over = a04.sent.findIndex((s) => s.tokens > REAL);
if (over >= 0) {
  const where = `in turn ${a04.sent[over].turn} (request ${over + 1})`;
  console.log(`  s04 first sent more than ${fmt(REAL)} tokens ${where}: a real window that size refuses it from there`);
}
table(`(b) a ${fmt(SMALL)}-token window: the fake's, and CONTEXT_WINDOW=${SMALL} for s05`, b04, b05);
for (const { chapter, refused } of [b04, b05]) {
  if (refused.length) console.log(`  ${chapter} first refused in turn ${refused[0].turn}: ${refused[0].message}`);
}
const svg = join(REPO, 's05_context_compact/context.svg');
writeFileSync(svg, svgPlot(a04, a05, REAL));
console.log(`\nplot of run (a): ${svg.slice(REPO.length + 1)}`);
const total = (performance.now() - started) / 1000;
console.log(`total wall time ${total.toFixed(1)} s (token figures are the fake's estimate: characters / 4)`);
