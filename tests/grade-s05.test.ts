import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stageTests } from './helpers/grading.ts';
import { chapterCode } from './helpers/run-chapter.ts';
import { sessionFiles } from './helpers/sessions.ts';
import { Agent } from './stages/stage.ts';
import { compaction, FIRST, P1, replay, stages, type Seen } from './stages/s05.ts';

// s05's five stages read one REPL run: the chapter (1 run), s04's folder (1), a mutant each (5).
const agent = new Agent('s05', chapterCode('s05'));
stageTests('s05', stages, {
  agent,
  previousFailsAt: 1,
  mutants: [
    {
      stage: 1,
      does: 'sends every old tool result whole',
      edits: [['compact.ts', 'if (old.length === 0) return', 'if (old.length >= 0) return']],
    },
    {
      stage: 2,
      does: 'summarises without saving a transcript',
      edits: [['compact.ts', 'agent.log?.transcript(old) ??', '']],
    },
    {
      stage: 3,
      does: 'cuts between the model’s latest calls and their results',
      edits: [
        ['compact.ts', 'isResults(last) ? lastReply :', 'isResults(last) ? lastReply + 1 :'],
        ['compact.ts', '&& isResults(messages[start])) start++;', '&& false) start++;'],
      ],
    },
    {
      stage: 4,
      does: 'answers the compact tool but never compacts',
      edits: [['compact.ts', 'state.requested = { why:', 'void { why:']],
    },
    {
      stage: 5,
      does: 'ends the turn on "prompt is too long"',
      edits: [['code.ts', 'if (!agent.compaction || !isTooLong(err)) throw err;', 'throw err;']],
    },
  ],
});

const PLACEHOLDER = /^\[cleared to save context: the result of /;
const blocksOf = (m: any): any[] => (typeof m.content === 'string' ? [] : m.content);
const thinkingIn = (messages: any[]) =>
  messages.flatMap(blocksOf).filter((b) => b.type === 'thinking').length;
const repliesIn = (messages: any[]) => messages.filter((m) => m.role === 'assistant').length;

// What s05 itself does beyond the stages, read from the same run (no run of its own).
describe.concurrent('s05 as the chapter does it (on the stages’ run)', () => {
  const tier1 = 'tier 1: the newest three seen results whole, thinking up to a placeholder, log';
  it(tier1, async () => {
    const run = await compaction(agent);
    const seen = replay(run);
    const first = seen.findIndex((s) => s.kind === 'summary');
    const counting = seen.slice(0, first).filter((s) => s.phase === P1);
    expect(counting, 'four requests before the first summary').toHaveLength(4);
    let replaced: string[] = [];
    for (const { n, request } of counting) {
      const messages = request.body.messages as any[];
      const placeholders = messages
        .flatMap(blocksOf)
        .filter((b) => PLACEHOLDER.test(String(b.content ?? '')));
      // The results the model has seen (before its latest reply): all but the newest three go.
      const read = messages.slice(
        0,
        messages.findLastIndex((m) => m.role === 'assistant'),
      );
      const results = read.flatMap(blocksOf).filter((b) => b.type === 'tool_result');
      const old = results.slice(0, -3).map((b) => b.tool_use_id);
      replaced = placeholders.map((b) => b.tool_use_id);
      expect(replaced, `request ${n}: the seen results past the newest three`).toEqual(old);
      // Each reply's two thinking blocks go back, up to the first result sent as a placeholder; a
      // block after it would be bound to what changed (the fake refuses that, so none can be).
      const at = messages.findIndex((m) => blocksOf(m).some((b) => placeholders.includes(b)));
      const [before, after] = at < 0 ? [messages, []] : [messages.slice(0, at), messages.slice(at)];
      const each = `request ${n}: each reply’s thinking before it`;
      expect(thinkingIn(before), each).toBe(2 * repliesIn(before));
      expect(thinkingIn(after), `request ${n}: none from the first placeholder on`).toBe(0);
    }
    expect(replaced, 'two by the fourth request').toHaveLength(2);
    const log = readFileSync(sessionFiles(run)[0], 'utf8');
    expect(log, 'the log keeps every result whole').not.toMatch(/cleared to save context/);
    for (const { output, command } of FIRST) {
      expect(log.includes(output), `the log holds ${command}`).toBe(true);
    }
  });

  it('says whose words a focus is in, and answers the compact call first', async () => {
    const run = await compaction(agent);
    const seen = replay(run);
    const summaries = seen.filter((s) => s.kind === 'summary');
    const asks = (s: Seen) => s.request.body.messages.at(-1).content as string;
    const tool = summaries.find((s) => asks(s).includes('the running totals'))!;
    expect(asks(tool), 'the compact tool’s focus, in the model’s words').toContain(
      'The assistant asked to keep in particular: the running totals',
    );
    const slash = summaries.find((s) => asks(s).includes('keep the file list'))!;
    expect(asks(slash), '/compact’s, in yours').toContain(
      'The user asked to keep in particular: keep the file list',
    );
    const after = seen[seen.indexOf(tool) + 1].request.body.messages as any[];
    const call = after.flatMap(blocksOf).find((b) => b.tool_use_id === 'toolu_grade_compact');
    expect(call.content, 'the compact call answered first').toMatch(/compacted when this round/);
  });

  // A small window (20,000: half of it kept free) fills fast: each compaction must shrink the
  // context, and compacting must not be needed before every request, nor keep failing.
  it('a small window: compacts when full, each one shrinks it, none "keeps failing"', async () => {
    const run = await compaction(agent);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).not.toMatch(/keeps failing/);
    // "[compacting (why): N messages]", then "[compacted: … context X → Y tokens (estimated)]".
    const said = new RegExp(
      String.raw`\[compacting \(([^)]*)\): \d+ messages\][^[]*` +
        String.raw`\[compacted: [^\]]*context (\d+) → (\d+)`,
      'g',
    );
    const sizes = [...run.stdout.matchAll(said)].map(([, why, x, y]) => ({ why, x: +x, y: +y }));
    const tooLong = 'the API said the prompt is too long';
    expect(sizes.map((s) => s.why)).toEqual(['auto', 'the model asked', 'you asked', tooLong]);
    // Each shrinks it, but for /compact: asked for, it may replace less than its summary takes.
    for (const { why, x, y } of sizes) if (why !== 'you asked') expect(y, why).toBeLessThan(x);
    const auto = run.stdout.match(/\[compacting \(auto\)/g) ?? [];
    expect(auto, 'once: when the fourth reply filled it').toHaveLength(1);
  });
});
