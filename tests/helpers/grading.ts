/**
 * The grader's stages as tests (tests/grade-sNN.test.ts): every chapter passes its own stages; a
 * mutant of the chapter, made here from its files, fails at the stage it breaks and passes every
 * stage before it; a folder of another chapter fails where the mechanism it lacks is first needed.
 *
 *   stageTests('s01', stages, { mutants: [{ stage: 2, does: 'sends no output', edits: [...] }] });
 */
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent, Miss, type Stage } from '../stages/stage.ts';
import { maintainerSkip } from './committed.ts';
import { runStages } from '../../scripts/grade.ts';
import { besideChapters, chapterSources } from './exercises.ts';
import { chapterCode, REPO } from './run-chapter.ts';

/** One change to a chapter file: `from` must occur in it exactly once. */
export type Edit = [file: string, from: string, to: string];

export interface Mutant {
  /** The stage (1-based) it breaks. */
  stage: number;
  /** What it does wrong, for the test's name: "sends the tool results without the output". */
  does: string;
  edits: Edit[];
}

/**
 * The chapter's files with `edits` applied, as `<repo>/.mutant-s01_agent_loop-2/` (see
 * besideChapters). Each `from` must occur exactly once in its file.
 */
export function mutate(chapter: string, name: string, edits: Edit[]) {
  const from = dirname(chapterCode(chapter));
  const files = chapterSources(from);
  for (const [file, find, put] of edits) {
    const text = files.get(file) ?? '';
    const count = text.split(find).length - 1;
    if (count !== 1) {
      const found = `${file} has ${count} copies of ${JSON.stringify(find)}`;
      throw new Error(`mutant ${name}: ${found}; update the mutant`);
    }
    files.set(file, text.replace(find, () => put));
  }
  return besideChapters(`.mutant-${basename(from)}-${name}`, files);
}

/** The first stage that fails, as `npm run grade` finds it (its number, 0 if none fails). */
export async function firstMiss(agent: Agent, stages: Stage[]) {
  const { first } = await runStages(agent, stages, false);
  return first ?? { stage: 0, error: undefined };
}

/** What a failed stage said, for a test's message. */
const said = (error: unknown) =>
  error instanceof Miss ? error.message : String((error as Error)?.stack ?? error);

export interface StageTestOptions {
  mutants: Mutant[];
  /** The previous chapter's folder, graded with these stages, fails first at this stage. */
  previousFailsAt?: number;
  /**
   * The chapter's own Agent, if the test file makes it: its other tests then read the stages' runs
   * (memoised by key) for what only the chapter must do, at no run of their own.
   */
  agent?: Agent;
}

export function stageTests(chapter: string, stages: Stage[], options: StageTestOptions): void {
  describe.concurrent(`${chapter}: the grader's stages`, () => {
    const agent = options.agent ?? new Agent(chapter, chapterCode(chapter));
    for (const [i, stage] of stages.entries()) {
      it(`the chapter passes stage ${i + 1}: ${stage.name}`, async () => {
        await stage.check(agent);
      });
    }

    const previous = `s${String(Number(chapter.slice(1)) - 1).padStart(2, '0')}`;
    if (options.previousFailsAt) {
      const at = options.previousFailsAt;
      const passes = at > 1 ? `passes stages 1–${at - 1} and ` : '';
      const name = stages[at - 1].name;
      const title = `${previous}'s folder, graded as ${chapter}, ${passes}fails stage ${at}`;
      it(`${title}: ${name}`, async () => {
        const { stage, error } = await firstMiss(new Agent(chapter, chapterCode(previous)), stages);
        expect(stage, said(error)).toBe(at);
        expect(error, said(error)).toBeInstanceOf(Miss);
      });
    }

    // A maintainer check: a mutant's edits match the chapter as committed, and a reader's exercise
    // solution may change those lines (helpers/committed.ts).
    const skip = maintainerSkip(basename(dirname(chapterCode(chapter))), ['*.ts']);
    if (skip) console.log(`${chapter}'s mutants: ${skip}`);
    for (const mutant of skip ? [] : options.mutants) {
      const n = mutant.stage;
      const before = n > 1 ? `passes stages 1–${n - 1} and ` : '';
      it(`a mutant that ${mutant.does} ${before}fails stage ${n}`, async () => {
        const { code, remove } = mutate(chapter, String(n), mutant.edits);
        try {
          const { stage, error } = await firstMiss(new Agent(chapter, code), stages);
          expect(stage, said(error) || 'every stage passed').toBe(n);
          expect(error, said(error)).toBeInstanceOf(Miss);
        } finally {
          remove();
        }
      });
    }
  });
}

/**
 * A fixture solution (tests/fixtures/<name>/): a reader's build written in another style. Its files
 * are laid over the `base` chapter's .ts files (what `npm run begin` starts from), in a folder
 * beside the chapters: `<repo>/.fixture-<name>/`. Returns its code.ts and a remover.
 */
export function fixture(name: string, base?: string) {
  const files = base ? chapterSources(dirname(chapterCode(base))) : new Map<string, string>();
  for (const [file, text] of chapterSources(join(REPO, 'tests', 'fixtures', name))) {
    files.set(file, text);
  }
  return besideChapters(`.fixture-${name}`, files);
}
