/**
 * npm run soak:ctrlc [-- <presses> [<chapter> [<runs at once>]]] — press Ctrl+C many times under
 * `npx tsx` and count what each press did (default: 200 presses, s04, two runs at a time).
 *
 * Each run is the REPL under the tsx CLI on a pseudo-terminal, as a reader runs it, with 20 turns
 * that each start `sleep 30` and get a Ctrl+C (tests/helpers/ctrl-c.ts); two runs at a time by
 * default, which on a small machine is the load that shows timing bugs (more at once: more load).
 * A press should cancel its turn and nothing else: not quit the agent, and not cancel the turn typed
 * after it (as a press tsx relayed late once did, before the REPL read Ctrl+C as a key).
 *
 * A measuring tool, not a test: it prints figures and asserts nothing.
 */
import { pressInputs, respondToPresses, tallyPresses, type Tally } from '../tests/helpers/ctrl-c.ts';
import { cleanupTemp, runRepl } from '../tests/helpers/run-chapter.ts';

const wanted = Number(process.argv[2] ?? 200);
const chapter = process.argv[3] ?? 's04';
const PER_RUN = 20;
const AT_ONCE = Number(process.argv[4] ?? 2);

const total: Tally = {
  presses: 0,
  'turn only': 0,
  'also quit': 0,
  'also the next turn': 0,
  'killed in the turn': 0,
  other: 0,
};
const codes: Record<string, number> = {};
let runs = 0;

async function oneRun(): Promise<void> {
  const run = await runRepl(chapter, pressInputs(PER_RUN), {
    viaTsx: true,
    respond: respondToPresses,
    timeoutMs: 60_000,
    expectTimeout: true,
  });
  const tally = tallyPresses(run, PER_RUN);
  for (const key of Object.keys(total) as (keyof Tally)[]) total[key] += tally[key];
  const code = run.timedOut ? 'timed out' : String(run.code);
  codes[code] = (codes[code] ?? 0) + 1;
  runs++;
  const bad = tally.presses - tally['turn only'];
  process.stderr.write(bad ? `[run ${runs}: ${JSON.stringify(tally)}]\n` : '.');
}

const started = performance.now();
while (total.presses < wanted) {
  await Promise.all(Array.from({ length: AT_ONCE }, oneRun));
}
cleanupTemp();
const seconds = ((performance.now() - started) / 1000).toFixed(0);
console.log(`\n${chapter} under the tsx CLI: ${total.presses} presses in ${runs} runs, ${seconds} s`);
console.log(`  cancelled the turn, and only the turn: ${total['turn only']}`);
console.log(`  cancelled the turn, then the agent quit: ${total['also quit']}`);
console.log(`  cancelled the turn, then the next turn too: ${total['also the next turn']}`);
console.log(`  the agent ended before the turn could stop: ${total['killed in the turn']}`);
console.log(`  no "(interrupted" shown for the turn: ${total.other}`);
console.log(`  runs' exit codes: ${JSON.stringify(codes)}`);
