import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { firstMiss, mutate, stageTests } from './helpers/grading.ts';
import { Agent, Miss } from './stages/stage.ts';
import { stages } from './stages/s01.ts';

stageTests('s01', stages, {
  mutants: [
    {
      stage: 1,
      does: 'never prints the answer',
      edits: [['code.ts', '    process.stdout.write(delta);\n', '']],
    },
    {
      stage: 2,
      does: 'sends the results without the command’s output',
      edits: [
        ['code.ts', 'ok ? await runBash(command) :', "ok ? (await runBash(command), '[0]') :"],
      ],
    },
    {
      stage: 3,
      does: 'answers the calls in reverse order',
      edits: [['code.ts', 'for (const call of calls)', 'for (const call of [...calls].reverse())']],
    },
    {
      stage: 4,
      does: 'ends the turn when stop_reason says end_turn',
      edits: [
        [
          'code.ts',
          'if (calls.length === 0) {',
          "if (calls.length === 0 || reply.stop_reason === 'end_turn') {",
        ],
      ],
    },
    {
      stage: 6,
      does: 'has no round bound',
      edits: [['code.ts', 'round <= MAX_ROUNDS;', 'round <= MAX_ROUNDS * 100;']],
    },
    {
      stage: 5,
      does: 'keeps the thinking of earlier turns',
      edits: [['code.ts', '  forgetThinking(messages); //', '  // forgetThinking(messages); //']],
    },
  ],
});

// A bug in the reader's loop (a TypeError, say) is caught by main(), which prints what it was and
// the line that threw it (describeError in shared/client.ts): the stage names that file and line.
it('a TypeError in agentLoop fails stage 1 naming the file and line that threw it', async () => {
  const bug = '(messages as any).oops.id;';
  const { code, remove } = mutate('s01', 'loop-crash', [
    ['code.ts', '  forgetThinking(messages); //', `  ${bug} //`],
  ]);
  try {
    const line =
      readFileSync(code, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes(bug)) + 1;
    const { stage, error } = await firstMiss(new Agent('s01', code), stages);
    expect(stage).toBe(1);
    const did = (error as Miss).said.did;
    expect(did).toMatch(/crashed: TypeError: Cannot read properties of undefined \(reading 'id'\)/);
    expect(did).toContain(`at .mutant-s01_agent_loop-loop-crash/code.ts:${line}:`);
  } finally {
    remove();
  }
});
