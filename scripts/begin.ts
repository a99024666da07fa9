/**
 * npm run begin s02 — start your own build of a chapter: mine/s02_tools/, made from the chapter
 * before it (its .ts files; not exercises/, not the READMEs), so that what you add is exactly this
 * chapter's mechanism. Then `npm run grade s02` checks it, stage by stage.
 *
 *   npm run begin s01               a starter: all but the agent loop in place, agentLoop to write
 *   npm run begin s03               mine/s03_subagent/, a copy of s02_tools/
 *   npm run begin s03 -- --fresh    remove mine/s03_subagent/ (it says what goes) and start again
 *
 * Your folders sit in mine/ (git leaves it alone), beside mine/shared, a link to the repo's
 * shared/: the `../shared/` imports of the chapter's files resolve from there as they do in the
 * chapter. An existing folder is never overwritten: it holds your work.
 *
 * Exit codes: 0 the folder was made; 1 it was not (it exists, or mine/shared is in the way);
 * 2 usage.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chapterSources } from '../tests/helpers/exercises.ts';
import { chapterCode, chapterFolder, chapters, REPO } from './chapters.ts';

const USAGE = `Usage: npm run begin <chapter> [-- --fresh]
  e.g. npm run begin s01           makes mine/s01_agent_loop, a starter with agentLoop to write
       npm run begin s02           makes mine/s02_tools, from s01_agent_loop
  --fresh  remove the folder you had (it says what goes) and start again`;

type Said = { exit: number; text: string };
type Asked = { chapter: string; fresh: boolean };

/** What the arguments ask for, or what to print and the exit code. */
export function beginArgs(args: string[], env = process.env): Asked | Said {
  // `npm run begin s01 --fresh` (without --) gives npm the flag: it passes it on as
  // npm_config_fresh.
  const npmFresh = env.npm_config_fresh;
  const fresh = args.includes('--fresh') || (!!npmFresh && npmFresh !== 'false');
  const wrong = (why: string) => ({ exit: 2, text: `${why}\n${USAGE}` });
  if (args.includes('-h') || args.includes('--help')) return { exit: 0, text: USAGE };
  const option = args.find((a) => a.startsWith('-') && a !== '--fresh');
  if (option) return wrong(`There is no option ${option}.`);
  const [chapter, ...rest] = args.filter((a) => !a.startsWith('-'));
  if (!chapter) return wrong(`Which chapter? Chapters: ${chapters().join(', ')}`);
  if (rest.length) return wrong('One chapter at a time.');
  const name = chapterFolder(chapter);
  if (!name) return wrong(`There is no chapter "${chapter}". Chapters: ${chapters().join(', ')}`);
  return { chapter: name.slice(0, 3), fresh };
}

// ── The s01 starter ─────────────────────────────────────────────────────────────────────────

// s01's code.ts in three parts: what comes before its loop section, the section, what follows.
const LOOP = '// ── The loop ─';
const AFTER_LOOP = '// ── The CLI ─';

/** s01's code.ts cut around its loop section (from "// ── The loop" to "// ── The CLI"). */
export function loopSection(code: string): { head: string; loop: string; tail: string } {
  const start = code.indexOf(LOOP);
  const end = code.indexOf(AFTER_LOOP);
  if (start < 0 || end < start || code.indexOf(LOOP, start + 1) >= 0) {
    // s01's code.ts was reorganised: the starter is made from it, so this must follow.
    throw new Error(`s01's code.ts has no single "${LOOP}…" section before "${AFTER_LOOP}…"`);
  }
  return { head: code.slice(0, start), loop: code.slice(start, end), tail: code.slice(end) };
}

// What the reader writes, said above the stub, under s01's own "// ── The loop ──…" line. The
// names are those s01's code.ts has around it.
const STUB = `\
// Yours to write: npm run begin s01 left the loop out, and npm run grade s01 checks it.
//
// agentLoop(messages) runs one turn. \`messages\` is the conversation so far, ending with the
// prompt; push onto it what the turn adds (the REPL keeps it for the next prompt). Each round:
//   - stream a reply: client.messages.stream({ model: MODEL, max_tokens: MAX_TOKENS, system:
//     SYSTEM, tools: TOOLS, messages }); print its text on stdout as it arrives, and wait for the
//     whole reply with finalMessage(stream) (../shared/stream.ts); push it as an assistant message;
//   - run each tool call of the reply (its tool_use blocks), in order, with runBash(input.command);
//   - answer ALL the calls of one reply in ONE user message of tool_result blocks, in the order of
//     the calls, each with the id of the call it answers: { type: 'tool_result', tool_use_id:
//     call.id, content: '…' }; then go round again;
//   - stop when a reply calls no tool, whatever its stop_reason says: return 'end_turn';
//   - stop after MAX_ROUNDS rounds at most: return 'max_rounds' (then -p exits 1);
//   - thinking (thinking.ts): forgetThinking(messages) first, so earlier turns go without theirs;
//     a reply's thinking blocks go back with it within the turn (thinkingKept);
//     withThinking(params) asks for their summary, and showThinking(stream) prints it.
export async function agentLoop(messages: MessageParam[]): Promise<string> {
  throw new Error('agentLoop is not written yet: the comment above it in code.ts says what to do');
}

`;

/** The s01 starter, made from s01's code.ts as it is now: its loop section is the stub above. */
export function starterOf(code: string): string {
  const { head, loop, tail } = loopSection(code);
  return head + loop.slice(0, loop.indexOf('\n') + 1) + STUB + tail;
}

// ── Making the folder ───────────────────────────────────────────────────────────────────────

export interface Begun {
  exit: number;
  /** What to print: what was made (or why not), the stages, how to grade and compare. */
  text: string;
  /** The folder meant: <mine>/s02_tools. */
  folder: string;
}

/**
 * Make `<mine>/<chapter folder>/` for the reader (mine/ in the repo unless a test says otherwise:
 * a folder inside the repo, so that `<mine>/shared` can link to the repo's shared/).
 */
export async function begin(
  chapter: string,
  options: { fresh?: boolean; mine?: string; say?: (line: string) => void } = {},
): Promise<Begun> {
  const { fresh = false, mine = join(REPO, 'mine') } = options;
  const name = chapterFolder(chapter)!;
  const id = name.slice(0, 3);
  const folder = join(mine, name);
  const shown = relative(REPO, folder);
  const said: string[] = [];
  // The grader's default folder is mine/<chapter folder>; any other is named.
  const grade = `npm run grade ${id}${folder === join(REPO, 'mine', name) ? '' : ` ${shown}`}`;

  if (existsSync(folder)) {
    if (!fresh) {
      const text =
        `${shown}/ exists already: your work is in it, so it stays as it is.\n` +
        `  Grade it:          ${grade}\n` +
        `  Start over:        npm run begin ${id} -- --fresh   (removes ${shown}/ first)`;
      return { exit: 1, text, folder };
    }
    // Said before it is done (on the terminal, by main), not after.
    const removing = `--fresh: removing ${shown}/ (${contents(folder)}).`;
    if (options.say) options.say(removing);
    else said.push(removing);
    rmSync(folder, { recursive: true, force: true });
  }

  const link = linkShared(mine);
  if (link) return { exit: 1, text: link, folder };

  mkdirSync(folder, { recursive: true });
  const n = Number(id.slice(1));
  if (n === 1) {
    // No chapter before s01: a starter from s01 itself, made now, so it never drifts from it.
    for (const [file, text] of chapterSources(join(REPO, name))) {
      writeFileSync(join(folder, file), file === 'code.ts' ? starterOf(text) : text);
    }
    said.push(
      `Made ${shown}/, a starter for s01: the config, the bash tool (its schema and runBash),`,
      'the CLI, the REPL and thinking.ts are in place. agentLoop is yours to write: the comment',
      `above it in ${shown}/code.ts says what it must do.`,
    );
  } else {
    const previous = chapterFolder(`s${String(n - 1).padStart(2, '0')}`)!;
    const files = chapterSources(join(REPO, previous)); // its .ts files: not exercises/, READMEs
    for (const [file, text] of files) writeFileSync(join(folder, file), text);
    const names = ['code.ts', ...[...files.keys()].filter((f) => f !== 'code.ts')];
    said.push(
      `Made ${shown}/ from ${previous}/: the agent as ${previous.slice(0, 3)} leaves it`,
      `(${names.join(', ')}).`,
      `Add ${id}'s mechanism to it${titleOf(name) ? `: ${titleOf(name)}` : ''}.`,
    );
  }

  said.push('', ...(await stageList(id)), '');
  said.push(
    `  Run it:      npx tsx ${shown}/code.ts    (no key in .env: the offline demo model)`,
    `  Grade it:    ${grade}    (add -- --hint for a hint where a stage fails)`,
    `  Afterwards:  npm run diff ${shown} ${id}    (what you wrote beside the chapter)`,
  );
  return { exit: 0, text: said.join('\n'), folder };
}

/** What a folder holds, in a few words: "code.ts, thinking.ts, notes/ (3 files)". */
function contents(folder: string): string {
  const entries = readdirSync(folder, { withFileTypes: true });
  if (entries.length === 0) return 'empty';
  const named = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  const count = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce(
      (sum, e) => sum + (e.isDirectory() ? count(join(dir, e.name)) : 1),
      0,
    );
  const shown = named.length > 8 ? [...named.slice(0, 8), `… ${named.length - 8} more`] : named;
  const n = count(folder);
  return `${shown.join(', ')}: ${n} file${n === 1 ? '' : 's'} in all`;
}

/**
 * `<mine>/shared`, a link to the repo's shared/, made if missing; or why it cannot be. The
 * chapter's files import `../shared/…`, and a folder in mine/ is one level deeper than a chapter.
 */
function linkShared(mine: string): string | undefined {
  const shared = join(REPO, 'shared');
  const link = join(mine, 'shared');
  mkdirSync(mine, { recursive: true });
  let there = false;
  try {
    lstatSync(link);
    there = true;
  } catch {
    // Not there yet: made below.
  }
  if (!there) {
    // A junction on Windows, which needs no special rights; elsewhere the type is ignored.
    symlinkSync(relative(mine, shared), link, 'junction');
    return undefined;
  }
  const linked = existsSync(link) && realpathSync(link) === realpathSync(shared);
  if (linked) return undefined;
  const at = relative(REPO, link);
  return (
    `${at} is in the way: it should be a link to the repo's shared/ folder, where the ` +
    `"../shared/" imports of your files lead.\nRemove ${at}, then run this again.`
  );
}

/** The chapter's title from its code.ts header: "s02 · Tools — …" → "Tools". */
function titleOf(name: string): string | undefined {
  const header = readFileSync(chapterCode(name), 'utf8').split('\n', 3)[1] ?? '';
  return /^ \* s\d\d · (.+?) —/.exec(header)?.[1];
}

/** The chapter's stages as a numbered list, or a line saying they are not written yet. */
async function stageList(id: string): Promise<string[]> {
  if (!existsSync(join(REPO, 'tests', 'stages', `${id}.ts`))) {
    return [`${id}'s stages are not written yet: npm run grade ${id} cannot check it for now.`];
  }
  // Loaded only here: the stages bring the fake API and the grader's helpers with them.
  const { loadStages } = await import('./grade.ts');
  let stages: Awaited<ReturnType<typeof loadStages>>;
  try {
    stages = await loadStages(id);
  } catch (err) {
    // The folder is made all the same; the grader will say what is wrong with the stages.
    return [`${id}'s stages could not be loaded (${(err as Error).message.split('\n')[0]}).`];
  }
  return [
    `The stages of ${id}, in the order to build them:`,
    ...stages.map((stage, i) => `  ${String(i + 1).padStart(2)}. ${stage.name}`),
  ];
}

async function main(): Promise<void> {
  const asked = beginArgs(process.argv.slice(2));
  if (!('chapter' in asked)) {
    (asked.exit === 0 ? console.log : console.error)(asked.text);
    process.exit(asked.exit);
  }
  const done = await begin(asked.chapter, { fresh: asked.fresh, say: console.log });
  (done.exit === 0 ? console.log : console.error)(done.text);
  process.exit(done.exit);
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] && realpathSync(process.argv[1]) === self) await main();
