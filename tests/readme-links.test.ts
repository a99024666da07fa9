/**
 * Every link in the READMEs (English, Chinese, Japanese) and the glossaries leads somewhere: a
 * relative link names a file or folder that exists, and a #anchor names a heading of the page it
 * points to, as GitHub makes the anchor from the heading's text. And a translated README sends its
 * reader to the translation where there is one: README.ja.md links README.ja.md, not README.md
 * (its language links aside, whose text says English).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folders } from './helpers/translations.ts';
import { EDITIONS } from '../scripts/chapters.ts';
import { languageOf } from '../scripts/reading.ts';
import { REPO } from './helpers/run-chapter.ts';

/** The anchor GitHub gives a heading: lower case, punctuation out, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .toLowerCase()
    .trim();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a markdown page's headings (code blocks aside), a repeated one numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && line.match(/^#{1,6} (.+?)\s*#*\s*$/);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The links of a markdown page outside code: [text](target), as [line, target, text]. */
export function links(markdown: string): [number, string, string][] {
  const out: [number, string, string][] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    const bare = line.replace(/`[^`]*`/g, '');
    for (const m of bare.matchAll(/\[([^\]]*)\]\(([^)\s]+)\)/g)) out.push([i + 1, m[2], m[1]]);
  });
  return out;
}

/** What is wrong with each link of `page` (a path under REPO), as "line N: target: why". */
export function brokenLinks(page: string): string[] {
  const text = readFileSync(join(REPO, page), 'utf8');
  const language = languageOf(page);
  const problems: string[] = [];
  for (const [line, target, label] of links(text)) {
    if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split('#');
    const file = path ? join(REPO, dirname(page), decodeURI(path)) : join(REPO, page);
    const where = `line ${line}: ${target}`;
    if (!existsSync(file)) {
      problems.push(`${where}: no such file`);
      continue;
    }
    // A folder's page is its README.md.
    const shown = statSync(file).isDirectory() ? join(file, 'README.md') : file;
    // The language links lead to the English one on purpose.
    if (language !== 'en' && /(^|\/)README\.md$/.test(shown) && !/English/.test(label)) {
      const twin = shown.replace(/README\.md$/, `README.${language}.md`);
      if (existsSync(twin)) problems.push(`${where}: link ${relative(REPO, twin)}`);
    }
    if (anchor === undefined || !shown.endsWith('.md')) continue;
    const known = existsSync(shown) ? anchors(readFileSync(shown, 'utf8')) : new Set<string>();
    if (!known.has(decodeURIComponent(anchor))) {
      problems.push(`${where}: no heading with that anchor in ${relative(REPO, shown)}`);
    }
  }
  return problems;
}

describe('how links are checked', () => {
  it('makes anchors as GitHub does', () => {
    expect(slug('`cli.ts`：`npx tsx` での Ctrl+C')).toBe('clitsnpx-tsx-での-ctrlc');
    expect(slug('### 1. The `agent` tool'.replace(/^#+ /, ''))).toBe('1-the-agent-tool');
    expect(slug('Offline, no key needed')).toBe('offline-no-key-needed');
    expect([...anchors('# A\n## Try it\n```\n# not\n```\n## Try it')]).toEqual([
      'a',
      'try-it',
      'try-it-1',
    ]);
  });

  it('reads the links outside inline code', () => {
    const text = '[a](../nowhere.md) [b](#no-such-heading) [c](../README.md) `[d](x)`';
    expect(links(text).map(([, t]) => t)).toEqual([
      '../nowhere.md',
      '#no-such-heading',
      '../README.md',
    ]);
  });
});

const pages = folders
  .flatMap((f) => EDITIONS.map((n) => join(f, n)))
  .concat(['docs/glossary.zh.md', 'docs/glossary.ja.md', 'CONTRIBUTING.md'])
  .filter((page) => existsSync(join(REPO, page)));

it.each(pages)('%s: every link leads to a file, and every anchor to a heading', (page) => {
  expect(brokenLinks(page)).toEqual([]);
});
