import { describe, expect, it } from 'vitest';
import { firstMiss, fixture, stageTests } from './helpers/grading.ts';
import { stages } from './stages/s04.ts';
import { Agent, Miss } from './stages/stage.ts';

stageTests('s04', stages, {
  previousFailsAt: 1,
  mutants: [
    {
      stage: 1,
      does: 'logs a reply only once its tools have run',
      edits: [
        [
          'code.ts',
          "keep({ role: 'assistant', content }); // logged before its tools run",
          "messages.push({ role: 'assistant', content });",
        ],
        [
          'code.ts',
          'const results = await runToolCalls(calls, agent, signal);',
          'const results = await runToolCalls(calls, agent, signal);\n' +
            "    agent.log?.append({ role: 'assistant', content });",
        ],
        [
          'code.ts',
          '    if (calls.length === 0) {',
          '    if (calls.length === 0) {\n' +
            "      if (content.length > 0) agent.log?.append({ role: 'assistant', content });",
        ],
      ],
    },
    {
      stage: 2,
      does: 'ends the program on Ctrl+C, as s03 does',
      edits: [
        [
          'code.ts',
          "exitingOnSignals(['SIGTERM', 'SIGHUP'], loop)",
          "exitingOnSignals(['SIGINT', 'SIGTERM', 'SIGHUP'], loop)",
        ],
      ],
    },
    {
      stage: 3,
      does: 'resumes the oldest session on -c',
      edits: [
        ['session.ts', 'const { id, file } = matches[0];', 'const { id, file } = matches.at(-1)!;'],
      ],
    },
    {
      stage: 4,
      does: 'takes no lock',
      edits: [
        [
          'session.ts',
          'function lock(file: string): void {',
          'function lock(file: string): void {\n  if (file) return;',
        ],
      ],
    },
    {
      stage: 5,
      does: 'sends the log as it is, unrepaired',
      edits: [
        [
          'repair.ts',
          'export function repairForSending(messages: MessageParam[]): MessageParam[] {',
          'export function repairForSending(messages: MessageParam[]): MessageParam[] {\n' +
            '  if (messages) return messages;',
        ],
      ],
    },
  ],
});

// Written on s03 as another reader might: a journal with the message's fields at the top of each
// line, ids from the time, a claim file, the mending in code.ts, other words everywhere.
describe('s04: a solution in another style', () => {
  it('the fixture s04-alt passes every s04 stage', async () => {
    const { code, remove } = fixture('s04-alt', 's03');
    try {
      const { stage, error } = await firstMiss(new Agent('s04', code), stages);
      const said = error instanceof Miss ? error.message : String((error as Error)?.stack ?? error);
      expect(stage, said).toBe(0);
    } finally {
      remove();
    }
  });
});
