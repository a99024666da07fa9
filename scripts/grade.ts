/**
 * npm run grade s01 [folder] — grade your own build of a chapter's mechanism, stage by stage.
 *
 * Runs the chapter's stages (tests/stages/sNN.ts) in order against the folder's code.ts (by
 * default mine/sNN_<name>/, made by `npm run begin sNN`) and stops at the first that fails. The
 * model is scripted, on the local fake API: no key, no network.
 *
 *   npm run grade s01                      mine/s01_agent_loop
 *   npm run grade s02 s02_tools            the chapter's own folder (every stage passes)
 *   npm run grade s01 -- --all --hint      every stage, and a hint under each that fails
 *
 * Exit codes: 0 every stage passed, 1 a stage failed or the code does not compile, 2 usage.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BundleError, bundleChapter } from '../tests/helpers/bundle.ts';
import { cleanupTemp } from '../tests/helpers/run-chapter.ts';
import { Agent, Miss, type Stage } from '../tests/stages/stage.ts';
import { chapterFolder, chapters, REPO } from './chapters.ts';

type Asked = { chapter: string; folder: string; all: boolean; hint: boolean };
type Said = { exit: number; text: string };

const USAGE = `Usage: npm run grade <chapter> [folder] [-- --all] [-- --hint]
  e.g. npm run grade s01                 grades mine/s01_agent_loop (npm run begin s01 makes it)
       npm run grade s02 s02_tools       grades that folder with s02's stages
  --all   run every stage, not only up to the first that fails
  --hint  under a stage that fails, a question that points the way`;

/** What the arguments ask for, or what to print and the exit code. */
export function gradeArgs(args: string[], env = process.env): Asked | Said {
  // `npm run grade s01 --hint` (no --) gives npm the flag, which passes it on as npm_config_hint.
  const all = args.includes('--all') || env.npm_config_all === 'true';
  const hint = args.includes('--hint') || env.npm_config_hint === 'true';
  const wrong = (why: string) => ({ exit: 2, text: `${why}\n${USAGE}` });
  if (args.includes('-h') || args.includes('--help')) return { exit: 0, text: USAGE };
  const option = args.find((a) => a.startsWith('-') && a !== '--all' && a !== '--hint');
  if (option) return wrong(`There is no option ${option}.`);
  const [chapter, folder, ...rest] = args.filter((a) => !a.startsWith('-'));
  if (!chapter) return wrong('Which chapter? Chapters: ' + chapters().join(', '));
  if (rest.length) return wrong('One chapter and one folder at most.');
  const name = chapterFolder(chapter);
  if (!name) return wrong(`There is no chapter "${chapter}". Chapters: ${chapters().join(', ')}`);
  const id = name.slice(0, 3);
  const dir = folder ? resolve(env.INIT_CWD ?? process.cwd(), folder) : join(REPO, 'mine', name);
  const shown = relative(REPO, dir) || '.';
  if (!existsSync(join(dir, 'code.ts'))) {
    const start = folder ? '' : `\nStart it with: npm run begin ${id}`;
    const what =
      existsSync(dir) && statSync(dir).isDirectory() ? 'has no code.ts' : 'does not exist';
    return { exit: 1, text: `${shown} ${what}.${start}` };
  }
  if (relative(REPO, dir).startsWith('..')) {
    return { exit: 1, text: `${shown} is outside the repo: the grader runs folders inside it.` };
  }
  if (!existsSync(join(REPO, 'tests', 'stages', `${id}.ts`))) {
    return {
      exit: 1,
      text: `${id} has no stages yet (tests/stages/${id}.ts): nothing to grade with.`,
    };
  }
  return { chapter: id, folder: dir, all, hint };
}

/** The chapter's stages, from tests/stages/sNN.ts. */
export async function loadStages(chapter: string): Promise<Stage[]> {
  const file = join(REPO, 'tests', 'stages', `${chapter}.ts`);
  return (await import(pathToFileURL(file).href)).stages;
}

/**
 * Run the stages in order, up to the first that fails (every one with `all`), telling `each`
 * how each went (the error of one that failed). Returns the counts, and the first that failed.
 */
export async function runStages(
  agent: Agent,
  stages: Stage[],
  all: boolean,
  each: (n: number, stage: Stage, err?: unknown) => void = () => {},
): Promise<{ passed: number; failed: number; first?: { stage: number; error: unknown } }> {
  let passed = 0;
  let failed = 0;
  let first: { stage: number; error: unknown } | undefined;
  for (const [i, stage] of stages.entries()) {
    try {
      await stage.check(agent);
      passed++;
      each(i + 1, stage);
    } catch (error) {
      failed++;
      first ??= { stage: i + 1, error };
      each(i + 1, stage, error);
      if (!all) break;
    }
  }
  return { passed, failed, first };
}

/** Each line of `text`, indented, cut to fit a terminal line. */
const indent = (text: string, pad: string) =>
  text.split('\n').map((line) => pad + (line.length > 194 ? `${line.slice(0, 193)}…` : line));

/** A failed stage in at most ten lines: asked, did, expected, and the hint or how to get it. */
export function explain(err: unknown, stage: Stage, hint: boolean, command: string): string[] {
  const lines: string[] = [];
  if (err instanceof Miss) {
    lines.push(...indent(`asked:    ${err.said.asked}`, '      ').slice(0, 2));
    lines.push(...indent(`did:      ${err.said.did}`, '      ').slice(0, 3));
    lines.push(...indent(`expected: ${err.said.expected}`, '      ').slice(0, 2));
  } else {
    // Not the reader's code: a fault of the grader itself. Say so, with its first lines.
    const message = err instanceof Error ? err.message : String(err);
    lines.push(
      '      the grader itself failed (please report it):',
      ...indent(message, '      ').slice(0, 5),
    );
  }
  lines.push(hint ? `      hint:     ${stage.hint}` : `      stuck? ${command} -- --hint`);
  return lines.slice(0, 10);
}

async function main(): Promise<void> {
  const asked = gradeArgs(process.argv.slice(2));
  if (!('chapter' in asked)) {
    (asked.exit === 0 ? console.log : console.error)(asked.text);
    process.exit(asked.exit);
  }
  const { chapter, folder, all, hint } = asked;
  const code = join(folder, 'code.ts');
  const shown = relative(REPO, folder);
  // The command that grades this folder again: the folder left out where it is the default one.
  const isDefault = shown === `mine/${chapterFolder(chapter)}`;
  const command = `npm run grade ${chapter}${isDefault ? '' : ` ${shown}`}`;

  // Compile first: a typo reads as a typo (file, line, the code), not as stage 1 failing.
  try {
    await bundleChapter(code);
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    console.error(`${err.message}\n\nNo stage can run until ${err.files.join(' and ')} compiles.`);
    process.exit(1);
  }

  // Ctrl+C while a stage runs: the agent runs in a process group of its own, which the terminal's
  // Ctrl+C does not reach, so stop it (and what it started) before leaving, or it stays behind.
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  for (const [signal, exit] of Object.entries(codes)) {
    process.on(signal, () => {
      cleanupTemp();
      console.log('\nStopped: no stage left running.');
      process.exit(exit);
    });
  }

  const stages = await loadStages(chapter);
  const agent = new Agent(chapter, code);
  console.log(`Grading ${shown} with the ${stages.length} stages of ${chapterFolder(chapter)}\n`);
  const { passed, failed } = await runStages(agent, stages, all, (n, stage, err) => {
    console.log(`  ${err === undefined ? '✓' : '✗'} ${n}. ${stage.name}`);
    if (err !== undefined) console.log(explain(err, stage, hint, command).join('\n'));
  });
  cleanupTemp();
  const left = stages.length - passed - failed;
  if (failed === 0) {
    console.log(
      `\nAll ${stages.length} stages pass. ` +
        `Compare with the chapter: npm run diff ${shown} ${chapter}`,
    );
  } else {
    const after = left ? ` (${left} not run: they build on it)` : '';
    console.log(
      `\n${passed} of ${stages.length} stages pass${after}. Fix the first ✗, then: ${command}`,
    );
  }
  process.exit(failed === 0 ? 0 : 1);
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] && realpathSync(process.argv[1]) === self) await main();
