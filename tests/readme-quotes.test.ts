/**
 * Every ```ts block in a chapter's README (each edition) must be a quote of one of that
 * chapter's .ts files (its exercises/ aside) or of one of the shared runtime files (shared/*.ts
 * without the fake API and the offline model), so the docs cannot drift from the code; and every
 * block in shared/README.md (the runtime's tour) a quote of a file of shared/.
 * Indentation and blank lines are ignored; a line that is only `// ...` marks an elision: the
 * pieces around it must appear in that one file, in that order.
 *
 * A maintainer check on the committed chapter: skipped (with a note) where one of the chapter's
 * .ts files, a shared runtime file or the README has uncommitted changes, such as a reader's
 * exercise solutions; `CI=1` forces it.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maintainerSkip } from './helpers/committed.ts';
import { runtimeFiles } from './helpers/layout.ts';
import { EDITIONS } from '../scripts/chapters.ts';
import { REPO } from './helpers/run-chapter.ts';

// Each chapter's README, and shared/'s (the runtime's tour, which quotes shared/*.ts).
const chapters = readdirSync(REPO).filter((d) => {
  return (/^s\d\d_/.test(d) || d === 'shared') && existsSync(join(REPO, d, 'README.md'));
});
// The shared runtime, as a chapter folder sees it: ../shared/client.ts…
const runtime = runtimeFiles(REPO).map((file) => `../shared/${file}`);
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

/** How many of the pieces, from the first, appear in `code` in order. */
function piecesFound(code: string[], pieces: string[][]): number {
  let at = 0;
  for (const [n, piece] of pieces.entries()) {
    at = find(code, piece, at);
    if (at === -1) return n;
  }
  return pieces.length;
}

it('finds chapter READMEs to check', () => expect(chapters.length).toBeGreaterThan(0));

// Each chapter's README, in each edition there is (they quote the same code).
const readmes = chapters.flatMap((chapter) => {
  const present = EDITIONS.filter((name) => existsSync(join(REPO, chapter, name)));
  return present.map((name) => [chapter, name]);
});

describe.each(readmes)('%s/%s quotes its .ts files', (chapter, name) => {
  const skip = maintainerSkip(chapter, ['*.ts', ...runtime, name]);
  if (skip) {
    console.log(`${chapter}/${name} quotes: ${skip}`);
    it.skip(`every \`\`\`ts block appears in one of the chapter's .ts files or shared/ — ${skip}`);
    return;
  }
  const readme = readFileSync(join(REPO, chapter, name), 'utf8');
  const own = readdirSync(join(REPO, chapter))
    .filter((f) => f.endsWith('.ts') && !f.startsWith('.'))
    .sort();
  // Named from the repo's root, as the failure shows them: s01_agent_loop/code.ts, shared/cli.ts.
  const files = [...own, ...(chapter === 'shared' ? [] : runtime)].map((f) => posix.join(chapter, f));
  const code = files.map((file) => {
    return { file, lines: norm(readFileSync(join(REPO, file), 'utf8')) };
  });
  const blocks = quotes(readme);

  it('has at least one ```ts quote', () => expect(blocks.length).toBeGreaterThan(0));

  blocks.forEach((pieces, n) => {
    it(`block ${n + 1} appears in one of the chapter's .ts files or shared/`, () => {
      // The file holding most of the block, from its start: where the quote most likely comes from.
      const found = code.map(({ file, lines }) => ({ file, count: piecesFound(lines, pieces) }));
      const best = found.reduce((a, b) => (b.count > a.count ? b : a), found[0]);
      if (best && best.count === pieces.length) return;
      const searched = files.join(', ');
      const closest =
        best && best.count > 0
          ? `The closest is ${best.file}: it has the first ${best.count} piece(s) of ` +
            `${pieces.length}, then not this one`
          : 'No file has even its first piece, which is';
      expect.fail(
        `${name} ts block ${n + 1} quotes lines that are in none of ${searched} ` +
          `(a block quotes one file, its pieces in order). ${closest}:\n` +
          pieces[best?.count ?? 0].join('\n'),
      );
    });
  });
});
