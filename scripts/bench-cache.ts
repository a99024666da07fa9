/**
 * npm run bench:cache — what s06's prompt caching saves, against s05, on one scripted session.
 *
 * The session: 20 turns in a small workspace, each reading a file or running a command, then
 * answering. The "model" is the local fake with a scripted `respond`: its reply depends only on the
 * turn (the `step k:` prompt) and on how many replies it has given in that turn. The fake simulates
 * prompt caching as the API documents it (see shared/fake-anthropic.ts): a prefix up to a breakpoint
 * sent before is read from the cache, a new one is written. s05 sends no breakpoints; s06 sends two.
 *
 * Each run is one REPL session through a pseudo-terminal (runRepl, as the tests do). It prints, for
 * each chapter: the input tokens, the share read from the cache after the first turn, and the
 * estimated cost at the default model's prices. Token figures are the fake's estimate (characters
 * / 4) and the same on every run; wall times vary.
 *
 * A measuring tool, not a test: it prints figures and asserts nothing.
 */
import { reply, text, toolUse, type RecordedRequest, type Reply, type ReplyBlock } from '../shared/fake-anthropic.ts';
import { cleanupTemp, promptOf, runRepl } from '../tests/helpers/run-chapter.ts';

const TURNS = 20;
// Dollars per million tokens for the default model, and the cache multipliers
// (https://platform.claude.com/docs/en/about-claude/pricing): the same figures s06 uses.
const PRICE = { input: 2, output: 10, read: 0.1, write: 1.25 };

const FILES: Record<string, string> = {};
for (let m = 1; m <= 5; m++) {
  const lines = Array.from({ length: 120 }, (_, i) => `export const value_${m}_${i + 1} = ${i * m}; // line ${i + 1}`);
  FILES[`src/mod${m}.ts`] = `${lines.join('\n')}\n`;
}

/** Turn k: its prompt, the tool calls of its one working round, its answer. */
function turn(k: number): { prompt: string; calls: ReplyBlock[]; answer: string } {
  const m = ((k - 1) % 5) + 1;
  if (k % 2 === 1) {
    return {
      prompt: `step ${k}: read src/mod${m}.ts and tell me its largest value`,
      calls: [text(`Reading src/mod${m}.ts.`), toolUse('read_file', { file_path: `src/mod${m}.ts` })],
      answer: `The largest value in src/mod${m}.ts is value_${m}_120.`,
    };
  }
  return {
    prompt: `step ${k}: count the lines of every module`,
    calls: [text('Counting.'), toolUse('bash', { command: 'wc -l src/*.ts' })],
    answer: 'Each module has 120 lines.',
  };
}


function scriptedModel() {
  let current = 0;
  let stage = 0;
  return (body: any): Reply => {
    const asked = promptOf(body.messages.at(-1)).match(/^step (\d+):/);
    if (asked) {
      current = Number(asked[1]);
      stage = 0;
    }
    const t = turn(current);
    return stage++ === 0 ? reply(...t.calls) : reply(text(t.answer));
  };
}

interface Figures {
  requests: number;
  input: number;
  read: number;
  written: number;
  output: number;
  readAfterFirst: number;
  inputAfterFirst: number;
  cost: number;
  wall: number;
}

async function run(chapter: string): Promise<Figures> {
  const prompts = Array.from({ length: TURNS }, (_, i) => turn(i + 1).prompt);
  const started = performance.now();
  const options = { respond: scriptedModel(), files: FILES, timeoutMs: 120_000 };
  const result = await runRepl(chapter, [...prompts, 'exit'], options);
  const wall = (performance.now() - started) / 1000;
  if (result.code !== 0) throw new Error(`${chapter} exited ${result.code}:\n${result.stdout.slice(-2000)}`);
  const figures: Figures = {
    requests: 0,
    input: 0,
    read: 0,
    written: 0,
    output: 0,
    readAfterFirst: 0,
    inputAfterFirst: 0,
    cost: 0,
    wall,
  };
  const served = result.requests.filter((r: RecordedRequest) => r.usage);
  served.forEach((r, i) => {
    const u = r.usage!;
    const read = u.cache_read_input_tokens ?? 0;
    const written = u.cache_creation_input_tokens ?? 0;
    const all = u.input_tokens + read + written;
    figures.requests++;
    figures.input += all;
    figures.read += read;
    figures.written += written;
    figures.output += u.output_tokens;
    if (i >= 2) {
      // after the first turn (its two requests)
      figures.readAfterFirst += read;
      figures.inputAfterFirst += all;
    }
    const inputCost = (u.input_tokens + read * PRICE.read + written * PRICE.write) * PRICE.input;
    figures.cost += (inputCost + u.output_tokens * PRICE.output) / 1e6;
  });
  return figures;
}

console.log(`bench:cache: ${TURNS} turns, one REPL session a chapter (bundled chapter, pseudo-terminal)`);
const results: Record<string, Figures> = {};
for (const chapter of ['s05', 's06']) {
  process.stdout.write(`  running ${chapter} … `);
  results[chapter] = await run(chapter);
  console.log(`${results[chapter].wall.toFixed(1)} s`);
}
cleanupTemp();

const n = (x: number) => x.toLocaleString('en-US');
const pct = (a: number, b: number) => `${b ? ((100 * a) / b).toFixed(1) : '0.0'} %`;
const rows: [string, (f: Figures) => string][] = [
  ['requests', (f) => n(f.requests)],
  ['input tokens, all', (f) => n(f.input)],
  ['  read from the cache', (f) => n(f.read)],
  ['  written to the cache', (f) => n(f.written)],
  ['read from the cache, after the first turn', (f) => pct(f.readAfterFirst, f.inputAfterFirst)],
  ['output tokens', (f) => n(f.output)],
  ['estimated cost (default model)', (f) => `$${f.cost.toFixed(4)}`],
  ['wall time', (f) => `${f.wall.toFixed(1)} s`],
];
console.log('\n── bench:cache ─────────────────────────────────────────────────────────────────────');
console.log(`${''.padEnd(46)}${'s05_context_compact'.padStart(22)}${'s06_prompt'.padStart(14)}`);
for (const [label, value] of rows) {
  console.log(`  ${label.padEnd(44)}${value(results.s05).padStart(22)}${value(results.s06).padStart(14)}`);
}
console.log(`  s06 / s05 estimated cost: ${pct(results.s06.cost, results.s05.cost)}`);
console.log('(token figures are the fake\'s estimate: characters / 4; prices from the API\'s pricing page)');
process.exit(0);
