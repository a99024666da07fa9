/**
 * Every ```ts block in a chapter's README (and README.zh.md) must be a quote of that chapter's code.ts, so the docs
 * cannot drift from the code. Indentation and blank lines are ignored; a line that is only
 * `// ...` marks an elision: the pieces around it must appear in code.ts in that order.
 *
 * A maintainer check on the committed chapter: skipped (with a note) where the chapter's code.ts or
 * README.md has uncommitted changes, such as a reader's exercise solutions; `CI=1` forces it.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maintainerSkip } from './helpers/committed.ts';
import { REPO } from './helpers/run-chapter.ts';

const chapters = readdirSync(REPO).filter((d) => /^s\d\d_/.test(d) && existsSync(join(REPO, d, 'README.md')));
const norm = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** The quoted pieces of each ```ts block: runs of lines between `// ...` elisions. */
function quotes(readme: string): string[][][] {
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map(([, body]) => {
    const pieces: string[][] = [[]];
    for (const line of norm(body)) {
      if (/^\/\/\s*(\.\.\.|…)$/.test(line)) pieces.push([]);
      else pieces.at(-1)!.push(line);
    }
    return pieces.filter((p) => p.length > 0);
  });
}

/** Index just past `piece` in `code` (searching from `from`), or -1. */
function find(code: string[], piece: string[], from: number): number {
  for (let i = from; i + piece.length <= code.length; i++) {
    if (piece.every((line, k) => code[i + k] === line)) return i + piece.length;
  }
  return -1;
}

it('finds chapter READMEs to check', () => expect(chapters.length).toBeGreaterThan(0));

// Each chapter's README, and its Chinese version where there is one (it quotes the same code).
const readmes = chapters.flatMap((chapter) =>
  ['README.md', 'README.zh.md'].filter((name) => existsSync(join(REPO, chapter, name))).map((name) => [chapter, name]),
);

describe.each(readmes)('%s/%s quotes its code.ts', (chapter, name) => {
  const skip = maintainerSkip(chapter, ['code.ts', name]);
  if (skip) {
    console.log(`${chapter}/${name} quotes: ${skip}`);
    it.skip(`every \`\`\`ts block appears in code.ts — ${skip}`);
    return;
  }
  const readme = readFileSync(join(REPO, chapter, name), 'utf8');
  const code = norm(readFileSync(join(REPO, chapter, 'code.ts'), 'utf8'));
  const blocks = quotes(readme);

  it('has at least one ```ts quote', () => expect(blocks.length).toBeGreaterThan(0));

  blocks.forEach((pieces, n) => {
    it(`block ${n + 1} appears in code.ts`, () => {
      let at = 0;
      for (const piece of pieces) {
        const next = find(code, piece, at);
        const what = `${name} ts block ${n + 1} quotes lines that are not in ${chapter}/code.ts (in this order)`;
        expect(next, `${what}:\n${piece.join('\n')}`).not.toBe(-1);
        at = next;
      }
    });
  });
});
