/**
 * A job a command leaves running in the background, its output sent elsewhere, as a model starts a
 * dev server (`npm run dev > dev.log 2>&1 &`): bash exits at once, and the job lives on in the
 * command's process group. The model is told, and the job does not outlive the agent (nor, from
 * s04 on, a Ctrl+C). Each chapter's test file calls `jobBehaviours('sNN', …)`.
 */
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { jobsLeft, startJob } from '../helpers/jobs.ts';
import { runChapter, runRepl, toolResults } from '../helpers/run-chapter.ts';

export interface JobOptions {
  /** What Ctrl+C during a turn does: ends the agent (s01–s03), or ends only the turn (s04 on). */
  ctrlC: 'exits' | 'cancels the turn';
  /** Run under the tsx CLI (what readers run) instead of plain node. */
  viaTsx?: boolean;
}

const LEFT_RUNNING = /still running in the background: process group (\d+)/;

export function jobBehaviours(chapter: string, { ctrlC, viaTsx = false }: JobOptions) {
  const under = viaTsx ? 'npx tsx' : 'node';
  describe(`${chapter}: a job left running in the background`, () => {
    if (ctrlC === 'exits') {
      it(`is named to the model, and killed when the agent exits (under ${under})`, async () => {
        const run = await runChapter(chapter, {
          args: ['-p', 'start the server'],
          viaTsx,
          replies: [reply(toolUse('bash', { command: startJob(true) })), reply(text('Started.'))],
        });
        expect(run.code, run.stderr).toBe(0);
        const [result] = toolResults(run.requests[1].body);
        expect(result.content, 'the result names the group the job is in').toMatch(LEFT_RUNNING);
        expect(await jobsLeft(run.workspace), 'the job must not outlive the agent').toEqual([]);
      });
      return;
    }

    it(`is named to the model, killed by Ctrl+C in a later turn, and at exit (under ${under})`, async () => {
      // Turn 1 leaves a job running. Turn 2 runs a long command and gets a Ctrl+C. Turn 3 looks at
      // turn 1's job (its pid is the first line of jobs.pid) and leaves another. Then exit.
      const look = 'ps -o stat= -p "$(head -1 jobs.pid)" | grep -qv Z && echo running || echo gone';
      const run = await runRepl(
        chapter,
        ['start one', 'wait', { after: /\$ sleep 30/, keys: '\x03' }, 'look', 'exit'],
        {
          viaTsx,
          respond: (body: any) => {
            const last = JSON.stringify(body.messages.at(-1));
            if (last.includes('tool_result')) return reply(text('Noted.'));
            if (last.includes('start one')) return reply(toolUse('bash', { command: startJob(true) }));
            if (last.includes('wait')) return reply(toolUse('bash', { command: 'sleep 30' }));
            return reply(toolUse('bash', { command: `${look}; ${startJob(true)}` }));
          },
        },
      );
      expect(run.code, run.stdout).toBe(0);
      const [started] = toolResults(run.requests[1].body);
      expect(started.content, 'the result names the group the job is in').toMatch(LEFT_RUNNING);
      const [looked] = toolResults(run.requests.at(-1)!.body);
      expect(looked.content, 'Ctrl+C in turn 2 killed the job turn 1 left').toMatch(/^gone/);
      expect(looked.content, 'turn 3 left one more').toMatch(LEFT_RUNNING);
      expect(await jobsLeft(run.workspace), 'no job outlives the agent').toEqual([]);
    });
  });
}
