/**
 * The stage lists in the chapter READMEs, made from the grader's own stages (tests/stages/sNN.ts),
 * so that what a README says `npm run grade sNN` checks is what it checks. In each chapter's
 * README.md, README.zh.md and README.ja.md, the "Build it yourself" section holds, between two
 * markers, the chapter's stages, numbered, by the names the grader prints (English in the
 * translations too):
 *
 *   <!-- stages:start -->
 *   1. a prompt gets an answer
 *   2. a bash call runs, and its output goes back with the call’s id
 *   <!-- stages:end -->
 *
 *   npx tsx scripts/stage-lists.ts           name each README whose list is out of date (exit 1)
 *   npx tsx scripts/stage-lists.ts --write   write them (so does `npm run reading -- --write`)
 *
 * A chapter with no stage file yet is skipped. tests/readme-stages.test.ts fails when a README's
 * list differs from its chapter's stage file.
 */
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chapters, EDITIONS, REPO } from './chapters.ts';

export const START = '<!-- stages:start -->';
export const END = '<!-- stages:end -->';

/** The stage file of a chapter folder (`s01_agent_loop` → tests/stages/s01.ts), there or not. */
export const stageFile = (root: string, chapter: string) =>
  join(root, 'tests', 'stages', `${chapter.slice(0, 3)}.ts`);

/**
 * The names of a chapter's stages, in order; undefined if it has no stage file yet. A stage file
 * that does not load, or exports no `stages`, is an error that names the file.
 */
export async function stageNames(root: string, chapter: string): Promise<string[] | undefined> {
  const file = stageFile(root, chapter);
  if (!existsSync(file)) return undefined;
  const { stages } = await import(pathToFileURL(file).href);
  if (!Array.isArray(stages)) throw new Error(`${file} exports no stages array`);
  return (stages as { name: string }[]).map((stage) => stage.name);
}

/** The lines between the markers: each name numbered, kept from reading as markdown or HTML. */
export function stageList(names: string[]): string {
  const plain = (name: string) => name.replace(/[\\*`<[]/g, (c) => `\\${c}`);
  return names.map((name, i) => `${i + 1}. ${plain(name)}`).join('\n');
}

/** `markdown` with the list between its markers set to `names`; a sentence if it has no markers. */
export function withStageList(markdown: string, names: string[]): string {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END, start);
  if (start < 0 || end < 0) return markdown;
  const list = stageList(names);
  return `${markdown.slice(0, start + START.length)}\n${list}\n${markdown.slice(end)}`;
}

/** What the READMEs say against what the stage files say, one entry a chapter README. */
export async function stageLists(root: string) {
  const found = [];
  for (const chapter of chapters()) {
    // A stage file being written may not load yet: that chapter's entries say why.
    let names: string[] | undefined;
    let broken: string | undefined;
    try {
      names = await stageNames(root, chapter);
    } catch (err) {
      broken = err instanceof Error ? err.message : String(err);
    }
    for (const name of EDITIONS) {
      const readme = join(chapter, name);
      const text = readFileSync(join(root, readme), 'utf8');
      const marked = text.includes(START) && text.indexOf(END, text.indexOf(START)) > 0;
      const fresh = names && marked ? withStageList(text, names) : text;
      found.push({ chapter, readme, names, broken, marked, text, fresh });
    }
  }
  return found;
}

/** Write every out-of-date list; what it wrote, and what it could not. */
export async function writeStageLists(root: string): Promise<{ wrote: string[]; notes: string[] }> {
  const wrote: string[] = [];
  const notes: string[] = [];
  for (const { readme, names, broken, marked, text, fresh } of await stageLists(root)) {
    if (broken) notes.push(`${readme}: not written, as its stage file does not load: ${broken}`);
    if (!names) continue; // no stage file yet (or it does not load): nothing to list
    if (!marked) notes.push(`${readme} has no ${START} … ${END} to write its stages between.`);
    else if (fresh !== text) {
      writeFileSync(join(root, readme), fresh);
      wrote.push(`Wrote the stage list into ${readme}.`);
    }
  }
  return { wrote, notes };
}

async function main() {
  const write = process.argv.includes('--write');
  if (write) {
    const { wrote, notes } = await writeStageLists(REPO);
    for (const line of [...wrote, ...notes]) console.error(line);
    process.exitCode = notes.length ? 1 : 0;
    return;
  }
  let stale = 0;
  for (const { readme, names, broken, marked, text, fresh } of await stageLists(REPO)) {
    if (broken) {
      stale++;
      console.error(`${readme}: its stage file does not load: ${broken}`);
    } else if (!names) console.error(`${readme}: no tests/stages file yet, skipped.`);
    else if (!marked || fresh !== text) {
      stale++;
      console.error(`${readme}: its stage list is ${marked ? 'out of date' : 'missing'}.`);
    }
  }
  if (stale) console.error('npx tsx scripts/stage-lists.ts --write writes them.');
  process.exitCode = stale ? 1 : 0;
}

// Run only as a script: the test and npm run reading import the functions.
const self = realpathSync(fileURLToPath(import.meta.url));
if (process.argv[1] && realpathSync(process.argv[1]) === self) await main();
