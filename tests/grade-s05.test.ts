import { stageTests } from './helpers/grading.ts';
import { stages } from './stages/s05.ts';

// s05's five stages read one REPL run: the chapter (1 run), s04's folder (1), a mutant each (5).
stageTests('s05', stages, {
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
