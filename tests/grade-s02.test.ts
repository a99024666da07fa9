/**
 * s02's stages as tests: the chapter passes all seven, s01's folder fails the first (it has no
 * read_file), a mutant per stage fails exactly there, and a build in another style passes them all.
 */
import { expect, it } from 'vitest';
import { Agent } from './stages/stage.ts';
import { firstMiss, fixture, stageTests } from './helpers/grading.ts';
import { stages } from './stages/s02.ts';

stageTests('s02', stages, {
  previousFailsAt: 1,
  mutants: [
    {
      stage: 1,
      does: 'has no read_file in its dispatch map',
      edits: [['tools.ts', '  read_file: readFileTool,\n', '']],
    },
    {
      stage: 2,
      does: 'lets a handler’s exception escape the tool call',
      // The catch throws the error on, out of the loop, instead of making it a result.
      edits: [
        ['tools.ts', 'return fail(err instanceof', 'throw err;\n    return fail(err instanceof'],
      ],
    },
    {
      stage: 3,
      does: 'edits every match when old_string occurs twice',
      edits: [['files.ts', 'if (count > 1 && !input.replace_all) {', 'if (count > 1 && false) {']],
    },
    {
      stage: 4,
      does: 'leaves the line numbers out of grep’s matches',
      edits: [['search.ts', 'matches.push(`${file}:${i + 1}: ', 'matches.push(`${file}: ']],
    },
    {
      stage: 5,
      does: 'resolves paths without checking where they land',
      edits: [['workspace.ts', 'relative(ROOT, realPath(full));', "'inside';"]],
    },
    {
      stage: 6,
      does: 'has no gate in front of bash',
      edits: [['bash.ts', 'if (danger) throw', 'if (danger && false) throw']],
    },
    {
      stage: 7,
      does: 'runs every call of a reply side by side',
      edits: [['tools.ts', 'let j = i + 1;', 'let j = calls.length;']],
    },
  ],
});

it('a build of s02 in another style (tests/fixtures/s02-alt) passes every stage', async () => {
  const build = fixture('s02-alt', 's01');
  try {
    const { stage, error } = await firstMiss(new Agent('s02', build.code), stages);
    expect(stage, String((error as Error)?.message ?? 'every stage passed')).toBe(0);
  } finally {
    build.remove();
  }
});
