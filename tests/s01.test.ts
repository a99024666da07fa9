import { endTurnBehaviours } from './behaviours/end-turn.ts';
import { jobBehaviours } from './behaviours/jobs.ts';
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse } from '../shared/fake-anthropic.ts';
import { loopBehaviours } from './behaviours/loop.ts';
import { runChapter, toolResults } from './helpers/run-chapter.ts';

loopBehaviours('s01', {
  offlineCommands: ['run', 'read', 'list', 'search', 'write', 'history'],
  ctrlCUnderTsx: true,
  plumbing: true,
});

describe('s01: the bash tool', () => {
  it('cuts a long output between characters, never inside an emoji (the API refuses half of one)', async () => {
    // 9,999 x, an emoji, 500 y, an emoji, 9,999 z: keeping 10,000 at each end splits both emoji.
    const x = (n: number, c: string) => `head -c ${n} /dev/zero | tr '\\0' ${c}`;
    const smile = "printf '\\xf0\\x9f\\x98\\x80'";
    const command = `${x(9999, 'x')}; ${smile}; ${x(500, 'y')}; ${smile}; ${x(9999, 'z')}`;
    const run = await runChapter('s01', {
      args: ['-p', 'print it'],
      replies: [reply(toolUse('bash', { command })), reply(text('done'))],
    });
    expect(run.code, `the strict fake refuses half a character; stderr:\n${run.stderr}`).toBe(0);
    const [result] = toolResults(run.requests[1].body);
    expect(result.content, 'the head ends before the first emoji').toMatch(/x\n… \(/);
    expect(result.content, 'the tail starts after the second').toMatch(/…\nz/);
  });
});

jobBehaviours('s01', { ctrlC: 'exits', viaTsx: true });
endTurnBehaviours('s01');
