/**
 * Checks for the s01 exercises. Run them with: npm run check s01
 */
import { reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { need, type ExerciseCheck } from '../../tests/helpers/exercises.ts';
import { runChapter } from '../../tests/helpers/run-chapter.ts';

export const checks: ExerciseCheck[] = [
  {
    id: '01-tool-timing',
    title: '1. Print how long each tool call took',
    async run(codePath) {
      const run = await runChapter('s01', {
        codePath,
        args: ['-p', 'wait a moment'],
        replies: [reply(toolUse('bash', { command: 'sleep 0.3' })), reply(text('done'))],
      });
      need(
        run.code === 0,
        `The chapter should still exit 0 (it exited ${run.code}). stderr:\n${run.stderr}`,
      );
      const took = run.stderr.match(/took\s+(\d+(?:\.\d+)?)\s*(ms|s)\b/i);
      need(
        took,
        'After a tool call, print a line such as "(took 312 ms)" or "(took 0.3 s)" to stderr, ' +
          `where the tool call lines go. None was found in:\n${run.stderr}`,
      );
      const ms = Number(took[1]) * (took[2].toLowerCase() === 's' ? 1000 : 1);
      need(
        ms >= 250,
        `The tool ran "sleep 0.3", but the line says it took ${took[0].slice(5)}. ` +
          'Measure around the runBash() call in agentLoop (code.ts).',
      );
    },
  },
  {
    id: '02-max-rounds-flag',
    title: '2. Make the round bound a flag: --max-rounds N',
    async run(codePath) {
      const run = await runChapter('s01', {
        codePath,
        args: ['--max-rounds', '3', '-p', 'keep going'],
        respond: () => reply(toolUse('bash', { command: 'true' })),
      });
      need(
        run.requests.length === 3,
        'With --max-rounds 3 and a model that always calls a tool, the loop should call the ' +
          `model 3 times; it called it ${run.requests.length} times. stderr:\n${run.stderr}`,
      );
      need(
        /stopped after 3 rounds/.test(run.stderr),
        'The stop message should name the bound you set: "stopped after 3 rounds".',
      );
    },
  },
  {
    id: '03-model-flag',
    title: '3. Choose the model with --model <id>',
    async run(codePath) {
      const run = await runChapter('s01', {
        codePath,
        args: ['--model', 'claude-haiku-5-5', '-p', 'hi'],
        replies: [reply(text('hello'))],
      });
      need(
        run.requests.length === 1,
        `Expected one model call, saw ${run.requests.length}. stderr:\n${run.stderr}`,
      );
      const model = run.requests[0].body.model;
      need(
        model === 'claude-haiku-5-5',
        `With --model claude-haiku-5-5 the request should name that model; it named "${model}".`,
      );
    },
  },
];
