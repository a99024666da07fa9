/**
 * Copies must not drift. Each chapter is the previous one plus one mechanism, and the lines that
 * mechanism does not touch stay byte-identical. For the tools that s02 introduces (bash with its
 * gate, the workspace boundary, the file tools, glob and grep) this test checks exactly that, in
 * every later chapter. That is why the tool behaviour suite runs in full only on s02, where the
 * tools are made, and on the last chapter, the agent a reader ends with: in between, the code it
 * would test is the same code, byte for byte.
 *
 * A maintainer check on the committed chapters: a reader's exercise solutions in s02 (a new gate
 * rule, say) rightly leave the later chapters as they were, so where s02's or the later chapter's
 * code.ts has uncommitted changes it is skipped, with a note; `CI=1` forces it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { maintainerSkip } from './helpers/committed.ts';
import { chapterCode, chapters } from './helpers/run-chapter.ts';

/** The tools section of a chapter: from the bash tool up to the dispatch map. */
function toolsSection(chapter: string): string {
  const code = readFileSync(chapterCode(chapter), 'utf8');
  const start = code.indexOf('// ── The tools: bash');
  const end = code.indexOf('// ── NEW in s02: dispatch');
  expect(start, `${chapter}/code.ts should have a "// ── The tools: bash" section`).toBeGreaterThan(0);
  expect(end, `${chapter}/code.ts should have a "// ── NEW in s02: dispatch" section after it`).toBeGreaterThan(start);
  return code.slice(start, end);
}

const later = chapters().filter((chapter) => chapter >= 's03');

describe('the tools are byte-identical from s02 on', () => {
  const skipped = later.map((chapter) => {
    return [chapter, maintainerSkip('s02_tools', ['code.ts']) ?? maintainerSkip(chapter, ['code.ts'])] as const;
  });
  for (const [chapter, skip] of skipped.filter(([, skip]) => skip)) {
    console.log(`drift of ${chapter}: ${skip}`);
    it.skip(`${chapter} — ${skip}`);
  }
  it.each(skipped.filter(([, skip]) => !skip).map(([chapter]) => chapter))('%s', (chapter) => {
    const s02 = toolsSection('s02_tools').split('\n');
    const here = toolsSection(chapter).split('\n');
    const first = s02.findIndex((line, i) => line !== here[i]);
    const where = first === -1 ? '' : `line ${first + 1} of the section differs:\n  s02: ${s02[first]}\n  ${chapter.slice(0, 3)}: ${here[first]}`;
    expect(first === -1 && s02.length === here.length, `${chapter}'s tools drifted from s02's. ${where}`).toBe(true);
  });
});
