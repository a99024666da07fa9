/**
 * The chapter folders keep the shape the style guide gives them (the rules themselves are in
 * helpers/layout.ts):
 *
 * - code.ts lists the chapter's files in reading order and names the new ones and the changed
 *   ones; any other file is a byte-identical copy of the previous chapter's. Copies must not drift:
 *   that is why the tool behaviour suite runs in full only on s02, where the tools are made, and on
 *   the last chapter: in between, the tool files it would test are the same code, byte for byte;
 * - a chapter imports only its own folder and ../shared/;
 * - no module-level `let` or `var`; no line over 100 characters; code.ts at most 300 lines (s01's
 *   170), every other file 400, the shared runtime 465 in all (`npm run lines` shows the sizes);
 * - outside the chapter folders, no code file over 600 lines (`npm run lines -- --check` too);
 * - a README with the table of those sizes (between <!-- lines:start --> and <!-- lines:end -->)
 *   shows them as they are.
 *
 * A maintainer check on the committed chapters: a reader's exercise solutions in s02 (a new gate
 * rule, say) rightly leave the later chapters as they were, so where a chapter's .ts files (or,
 * for the copies, the previous chapter's) have uncommitted changes it is skipped, with a note;
 * `CI=1` forces it.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EDITIONS } from '../scripts/chapters.ts';
import { linesTable, tableInReadme } from '../scripts/lines.ts';
import { maintainerSkip } from './helpers/committed.ts';
import { chapterFolders, checkFileList, checkImports, checkModuleState } from './helpers/layout.ts';
import { checkOtherFiles, checkRuntime, checkSizes } from './helpers/layout.ts';
import { REPO } from './helpers/run-chapter.ts';

const chapters = chapterFolders(REPO);

/** Pass if there are no problems; else fail with all of them, one paragraph each. */
function expectNone(problems: string[]) {
  if (problems.length > 0) expect.fail(problems.join('\n\n'));
}

it('finds the chapters', () => expect(chapters.length).toBeGreaterThan(0));

describe.each(chapters.map((chapter, i) => [chapter, chapters[i - 1]] as const))(
  '%s',
  (chapter, previous) => {
    const own = maintainerSkip(chapter, ['*.ts']);
    const copies = own ?? (previous ? maintainerSkip(previous, ['*.ts']) : undefined);
    if (copies) console.log(`layout of ${chapter}: ${copies}`);
    const first = previous === undefined;

    const listed = first
      ? 'code.ts lists the files of the chapter, all new'
      : `code.ts lists the files of the chapter; unmarked ones are copies of ${previous}'s`;
    it.skipIf(copies)(copies ? `${listed} — ${copies}` : listed, () => {
      expectNone(checkFileList(REPO, chapter, previous));
    });
    const title = (what: string) => (own ? `${what} — ${own}` : what);
    it.skipIf(own)(title('imports only its own folder and ../shared/'), () => {
      expectNone(checkImports(REPO, chapter));
    });
    it.skipIf(own)(title('keeps no module-level let or var'), () => {
      expectNone(checkModuleState(REPO, chapter));
    });
    const sizes = first
      ? 'no line over 100 characters, code.ts at most 170 lines, other files 400'
      : 'no line over 100 characters, code.ts at most 300 lines, other files 400';
    it.skipIf(own)(title(sizes), () => {
      expectNone(checkSizes(REPO, chapter, { first }));
    });
  },
);

it('the shared runtime (shared/, fake API and offline model aside) is at most 465 lines', () => {
  expectNone(checkRuntime(REPO));
});

it('no code file outside the chapters (shared/, tests/, scripts/, …) is over 600 lines', () => {
  expectNone(checkOtherFiles(REPO));
});

it('a reader’s own build in mine/ is not held to that limit (npm run begin makes it)', () => {
  const root = mkdtempSync(join(tmpdir(), 'lah-layout-'));
  const long = 'x;\n'.repeat(700);
  for (const path of ['mine/s02_tools/tools.ts', 'scripts/long.ts']) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(join(root, path), long);
  }
  const flagged = checkOtherFiles(root).map((problem) => problem.split(':')[0]);
  rmSync(root, { recursive: true, force: true });
  expect(flagged).toEqual(['scripts/long.ts']);
});

it('the fake API depends on no file of the offline model (which is built on it)', () => {
  const parts = readdirSync(join(REPO, 'shared', 'fake')).map((f) => `fake/${f}`);
  const fake = ['fake-anthropic.ts', ...parts];
  const offline = /from '(?:\.\.?\/)+(?:offline|offline-model)[/.][^']*'/;
  const wrong = fake.filter((f) => offline.test(readFileSync(join(REPO, 'shared', f), 'utf8')));
  expect(wrong, 'these import from shared/offline* ').toEqual([]);
});

// The top README of each edition, where the markers are.
describe.each(EDITIONS)('%s', (name) => {
  const path = join(REPO, name);
  const shown = existsSync(path) ? tableInReadme(readFileSync(path, 'utf8')) : undefined;
  const title = 'the table of chapter sizes is up to date';
  if (shown === undefined) {
    it.skip(`${title} — ${name} has no <!-- lines:start --> … <!-- lines:end --> markers`);
    return;
  }
  // The sizes change with any chapter or runtime file (a reader's solutions, say).
  const folders: [string, string[]][] = chapters.map((chapter) => [chapter, ['*.ts']]);
  folders.push(['shared', ['*.ts']], ['.', [name]]);
  const skip = folders.map(([folder, files]) => maintainerSkip(folder, files)).find(Boolean);
  it.skipIf(skip)(skip ? `${title} — ${skip}` : title, () => {
    const stale = `${name}'s table of chapter sizes is stale: run \`npm run lines -- --write\``;
    expect(shown, stale).toBe(linesTable(REPO, name)); // in the README's own language
  });
});
