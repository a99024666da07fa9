import { stageTests } from './helpers/grading.ts';
import { stages } from './stages/s03.ts';

// Each mutant breaks one stage of s03 (the edits are made to a copy of the chapter, in the test).
stageTests('s03', stages, {
  previousFailsAt: 1,
  mutants: [
    {
      stage: 1,
      does: 'sends the child more than its task',
      edits: [
        [
          'subagent.ts',
          "[{ role: 'user', content: input.task }]",
          "[{ role: 'user', content: `You help the main agent.\\n${input.task}` }]",
        ],
      ],
    },
    {
      stage: 2,
      does: 'gives the child the agent tool',
      edits: [['subagent.ts', "parent.tools.filter((t) => t.name !== 'agent')", 'parent.tools']],
    },
    {
      stage: 3,
      does: 'passes on every text the child wrote, not only its last',
      edits: [
        [
          'subagent.ts',
          "last.role === 'assistant' && Array.isArray(last.content) ? last.content : [];",
          "messages.flatMap((m) => (m.role === 'assistant' ? [m.content].flat() : []));",
        ],
      ],
    },
    {
      stage: 5,
      does: 'lets a child run for 20,000 rounds',
      edits: [['subagent.ts', 'const SUBAGENT_ROUNDS = 20;', 'const SUBAGENT_ROUNDS = 20_000;']],
    },
    {
      stage: 4,
      does: 'exits when a child’s request fails',
      edits: [
        [
          'subagent.ts',
          'throw new Error(`the sub-agent failed: ${why}`);',
          'console.error(why);\n    process.exit(1);',
        ],
      ],
    },
  ],
});
