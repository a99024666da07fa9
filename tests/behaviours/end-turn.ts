/**
 * A reply that holds complete tool calls but says `stop_reason: "end_turn"`, as some
 * Anthropic-compatible endpoints send: the loop decides on the tool_use blocks, not on the stop
 * reason, so the calls run (a reply cut off at max_tokens or refused still runs none: the REPL
 * session in loop.ts checks that). Each chapter's test file calls `endTurnBehaviours('sNN')`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse, type Reply } from '../../shared/fake-anthropic.ts';
import { runChapter, toolResults } from '../helpers/run-chapter.ts';

const endTurn = (command: string, id: string): Reply => ({
  content: [text('Running it.'), toolUse('bash', { command }, id)],
  stop_reason: 'end_turn',
});

export function endTurnBehaviours(chapter: string, options: { subagent?: boolean } = {}) {
  describe.concurrent(`${chapter}: tool calls in a reply that says end_turn`, () => {
    it('are run, and their results sent back; the turn goes on to the answer', async () => {
      const run = await runChapter(chapter, {
        args: ['-p', 'make a file'],
        replies: [endTurn('echo made > made.txt', 'toolu_end'), reply(text('Made it.'))],
      });
      expect(run.code, run.stderr).toBe(0);
      expect(existsSync(join(run.workspace, 'made.txt')), 'the complete call was run').toBe(true);
      expect(run.requests, 'one more request, with the result').toHaveLength(2);
      const [result] = toolResults(run.requests[1].body);
      expect(result, 'the result answers the call').toMatchObject({ tool_use_id: 'toolu_end' });
      expect(run.stdout.trim()).toBe('Running it.\nMade it.');
    });

    if (options.subagent) {
      it('in a sub-agent too: its parent gets the report, not "no report"', async () => {
        const task = 'Count the files.';
        let child = 0;
        const run = await runChapter(chapter, {
          args: ['-p', 'how many files?'],
          respond: (body: any) => {
            if (body.messages[0].content === task) {
              return ++child === 1 ? endTurn('ls | wc -l', 'toolu_c1') : reply(text('REPORT: 0 files'));
            }
            const results = JSON.stringify(body.messages.at(-1));
            if (!results.includes('tool_result')) return reply(toolUse('agent', { task }, 'toolu_agent'));
            return reply(text('Parent is done.'));
          },
        });
        expect(run.code, run.stderr).toBe(0);
        const [report] = toolResults(run.requests.at(-1)!.body);
        expect(report.content, 'the sub-agent ran its call, then reported').toContain('REPORT: 0 files');
      });
    }
  });
}
