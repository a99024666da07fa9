import { stageTests } from './helpers/grading.ts';
import { stages } from './stages/s01.ts';

stageTests('s01', stages, {
  mutants: [
    { stage: 1, does: 'never prints the answer', edits: [['code.ts', '    process.stdout.write(delta);\n', '']] },
    {
      stage: 2,
      does: 'sends the results without the command’s output',
      edits: [['code.ts', 'ok ? await runBash(command) :', "ok ? (await runBash(command), '[0]') :"]],
    },
    { stage: 3, does: 'answers the calls in reverse order', edits: [['code.ts', 'for (const call of calls)', 'for (const call of [...calls].reverse())']] },
    {
      stage: 4,
      does: 'ends the turn when stop_reason says end_turn',
      edits: [['code.ts', 'if (calls.length === 0) {', "if (calls.length === 0 || reply.stop_reason === 'end_turn') {"]],
    },
    { stage: 5, does: 'has no round bound', edits: [['code.ts', 'round <= MAX_ROUNDS;', 'round <= MAX_ROUNDS * 100;']] },
    { stage: 6, does: 'keeps the thinking of earlier turns', edits: [['code.ts', '  forgetThinking(messages); //', '  // forgetThinking(messages); //']] },
  ],
});
