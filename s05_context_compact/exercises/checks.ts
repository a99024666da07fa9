/**
 * Checks for the s05 exercises. Run them with: npm run check s05
 */
import { reply, text, toolUse, type Reply } from '../../shared/fake-anthropic.ts';
import { need, type ExerciseCheck } from '../../tests/helpers/exercises.ts';
import { runChapter } from '../../tests/helpers/run-chapter.ts';

const PLACEHOLDER = /^\[cleared to save context/;

/**
 * A model that makes one tool call a round, from `calls`, then answers; returns the tool results
 * of the last request, in order, and whether each went out as a placeholder.
 */
async function rounds(
  codePath: string,
  calls: [string, Record<string, unknown>][],
  args: string[] = [],
) {
  let round = 0;
  const respond = (): Reply => {
    const call = calls[round++];
    return call ? reply(toolUse(call[0], call[1], `toolu_ex${round}`)) : reply(text('Done.'));
  };
  const files = { 'big.txt': `${'a line of text that is long enough\n'.repeat(200)}` }; // 7,000
  const argv = [...args, '-p', 'work through it'];
  const run = await runChapter('s05', { codePath, args: argv, respond, files });
  need(
    run.code === 0,
    `The chapter should still run and exit 0 (it exited ${run.code}). stderr:\n${run.stderr}`,
  );
  const last = run.requests.at(-1)!.body;
  const blocks = (last.messages as any[]).flatMap((m) =>
    typeof m.content === 'string' ? [] : m.content,
  );
  const results = blocks.filter((b) => b.type === 'tool_result');
  return results.map((r: any) => ({
    id: r.tool_use_id as string,
    cleared: PLACEHOLDER.test(String(r.content)),
  }));
}
const seq = (n: number): [string, Record<string, unknown>] => [
  'bash',
  { command: `seq ${n} ${n + 999}` },
];

export const checks: ExerciseCheck[] = [
  {
    id: '01-keep-results',
    title: '1. --keep-results <n>: how many recent tool results stay whole',
    async run(codePath) {
      const calls = [seq(1), seq(2), seq(3), seq(4)];
      const one = await rounds(codePath, calls, ['--keep-results', '1']);
      const cleared = one.map((r, i) => (r.cleared ? i + 1 : '')).filter(Boolean);
      need(
        JSON.stringify(one.map((r) => r.cleared)) === JSON.stringify([true, true, false, false]),
        'With --keep-results 1, the last request should clear results 1 and 2 (seen, older ' +
          'than the newest one seen) and keep 3 and 4 (microCompact, compact.ts); it cleared: ' +
          `${cleared.join(', ') || 'none'}`,
      );
      const none = await rounds(codePath, calls, ['--keep-results', '0']);
      need(
        none.filter((r) => r.cleared).length === 3,
        'With --keep-results 0, every result the model has seen should be cleared (3 of 4 in ' +
          'the last request). Careful: what is array.slice(0, -0)?',
      );
      const byDefault = await rounds(codePath, calls);
      need(
        byDefault.every((r) => !r.cleared),
        'Without the flag, nothing changes: 3 results stay whole (KEEP_RESULTS), as before.',
      );
    },
  },
  {
    id: '02-never-cleared',
    title: '2. Never clear read_file results',
    async run(codePath) {
      const read: [string, Record<string, unknown>] = ['read_file', { file_path: 'big.txt' }];
      const results = await rounds(codePath, [read, seq(1), read, seq(2), read, seq(3)]);
      const reads = results.filter((_, i) => i % 2 === 0);
      const commands = results.filter((_, i) => i % 2 === 1);
      need(
        reads.every((r) => !r.cleared),
        'read_file results should always be sent whole, however old (microCompact, compact.ts).',
      );
      need(
        commands.some((r) => r.cleared),
        'Other tools’ old results should still be cleared: the first bash result was not.',
      );
    },
  },
];
