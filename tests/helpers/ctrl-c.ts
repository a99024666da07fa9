/**
 * Ctrl+C pressed many times in one REPL run, and what each press did (s04 on, where Ctrl+C cancels
 * the turn). Used by the loop behaviours (tests/behaviours/loop.ts) and by `npm run soak:ctrlc`.
 *
 *   const run = await runRepl('s04', pressInputs(10), { viaTsx: true, respond: respondToPresses });
 *   tallyPresses(run, 10) → { presses: 10, 'turn only': 10, 'also quit': 0, … }
 *
 * Turn k is the prompt "turn t<k>x"; its reply runs `(sleep 30) & echo $! >> jobs.pid; sleep 30 # t<k>x`,
 * and Ctrl+C is pressed once that command shows. After the last press: "and now?", then exit.
 */
import { reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { startJob } from './jobs.ts';
import type { ReplInput, RunResult } from './run-chapter.ts';

const command = (k: number) => `${startJob()}; sleep 30 # t${k}x`;

/** What to type: each turn, a Ctrl+C once its command runs (or once the turn has ended without it). */
export function pressInputs(presses: number): ReplInput[] {
  const inputs: ReplInput[] = [];
  for (let k = 1; k <= presses; k++) {
    // If a stray signal cancels turn k before its command starts, press anyway, at the prompt: the
    // run then ends, and tallyPresses says which press did it.
    const started = new RegExp(`turn t${k}x\\n[\\s\\S]*(# t${k}x|\\(interrupted)`);
    inputs.push(`turn t${k}x`, { after: started, keys: '\x03' });
  }
  return [...inputs, 'and now?', 'exit'];
}

/** The fake's replies: turn k runs its long command; "and now?" is answered in words. */
export function respondToPresses(body: any) {
  const last = JSON.stringify(body.messages.at(-1));
  const k = /turn t(\d+)x/.exec(last)?.[1];
  if (k) return reply(text('Starting.'), toolUse('bash', { command: command(Number(k)) }, `toolu_t${k}`));
  return reply(text('Still here.'));
}

export interface Tally {
  /** How many presses were made (a run that ends early makes fewer than it was asked to). */
  presses: number;
  /** The press cancelled its turn, and the agent took the next prompt as a new turn. */
  'turn only': number;
  /** The press cancelled its turn, then the agent quit (at the prompt). */
  'also quit': number;
  /** The press cancelled its turn and then the next turn too, before that turn ran its command. */
  'also the next turn': number;
  /**
   * The agent ended before the turn could stop. Under tsx this was how a press that reached tsx
   * too ended, when the agent was too busy to acknowledge it within 60 ms: tsx SIGKILLed it.
   */
  'killed in the turn': number;
  /** The press was made, but its turn did not say it was interrupted. */
  other: number;
}

/** What each press of a run typed with pressInputs(presses) did, read from the run's output. */
export function tallyPresses(run: RunResult, presses: number): Tally {
  const tally: Tally = {
    presses,
    'turn only': 0,
    'also quit': 0,
    'also the next turn': 0,
    'killed in the turn': 0,
    other: 0,
  };
  const out = run.stdout;
  for (let k = 1; k <= presses; k++) {
    // This turn's output: from its prompt to the next one (or the end of the run).
    const from = out.indexOf(`turn t${k}x\n`);
    const next = out.indexOf(k < presses ? `turn t${k + 1}x\n` : 'and now?\n', from + 1);
    const mine = from < 0 ? '' : out.slice(from, next < 0 ? undefined : next);
    if (!mine.includes(`# t${k}x`)) {
      tally.presses = k - 1; // the run ended before this press was made
      break;
    }
    if (next < 0) {
      // The run ended before the next prompt was typed: in the turn, or once back at the prompt.
      tally[mine.includes('(interrupted') ? 'also quit' : 'killed in the turn']++;
      continue;
    }
    if (!mine.includes('(interrupted')) {
      tally.other++;
      continue;
    }
    const after = out.slice(next);
    const nextStarted = k < presses ? `# t${k + 1}x` : 'Still here.';
    if (!after.includes(nextStarted) && after.includes('(interrupted')) tally['also the next turn']++;
    else if (!after.includes(nextStarted)) tally['also quit']++;
    else tally['turn only']++;
  }
  return tally;
}
