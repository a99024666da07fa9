import { stageTests } from './helpers/grading.ts';
import { stages } from './stages/s06.ts';

// s05's folder sends its one fixed sentence as the system prompt: it fails at the first stage.
stageTests('s06', stages, {
  previousFailsAt: 1,
  mutants: [
    {
      stage: 1,
      does: 'leaves the last tool out of the tool guide',
      edits: [['prompt.ts', 'const lines = tools.map(', 'const lines = tools.slice(0, -1).map(']],
    },
    {
      stage: 2,
      does: 'cuts an instruction file silently',
      edits: [['instructions.ts', 'const cut = text.length > room ?', 'const cut = false ?']],
    },
    {
      stage: 3,
      does: 'puts the date and git status in the system prompt',
      edits: [['prompt.ts', '    `Model: ${model}`,\n', '    `Model: ${model}`, turnContext(),\n']],
    },
    {
      stage: 4,
      does: 'builds the system prompt once, for the whole session',
      edits: [
        // The getter keeps what it built first.
        ['code.ts', '  const warned = ', '  let built: any;\n  const warned = '],
        [
          'code.ts',
          'return systemPrompt({ tools: agent.tools, model: MODEL, warned });',
          'return (built ??= systemPrompt({ tools: agent.tools, model: MODEL, warned }));',
        ],
      ],
    },
    {
      stage: 5,
      does: 'puts no breakpoint on the last message',
      edits: [['code.ts', 'sent = withBreakpoint(microCompact(', 'sent = (microCompact(']],
    },
  ],
});
