/**
 * Every prompt a chapter's README offers to try offline must do what it says, in that chapter.
 *
 * The prompts are marked in the README's "## Try it" section: the line `<!-- offline examples -->`,
 * then a ```text block with one prompt per line, written as the reader sees it at the REPL:
 *
 *   <!-- offline examples -->
 *   ```text
 *   s02 >> write notes.txt: hello world
 *   s02 >> read ../../etc/passwd        ← fails on purpose: outside the workspace
 *   ```
 *
 * Anything after `←` is a note for the reader, not typed. A note that starts with "fails" marks an
 * example that is meant to fail (the boundary, the gate), and the test checks that it does.
 *
 * Each chapter's examples, then the offline banner's own example (`run ls then read package.json`),
 * are typed into ONE offline REPL session, in a workspace that holds what the repo's root holds
 * for them: a package.json, and a source file with a TODO in it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { offlineBanner } from '../shared/offline-model.ts';
import { REPO, chapters, runRepl, type RunResult } from './helpers/run-chapter.ts';

/**
 * Chapters whose README has not adopted the marker yet: skipped with a note, not failed. Every other
 * chapter must have one. Take a chapter off this list when its README gets its block.
 */
const NOT_YET = new Set<string>([]);

const MARKER = '<!-- offline examples -->';

/**
 * What the examples may refer to, as in the repo's root folder where a reader starts a chapter,
 * and the sample project's file that s02's examples, typed in its demo, try to edit.
 */
const FILES = {
  'package.json': readFileSync(join(REPO, 'package.json'), 'utf8'),
  'src/app.ts': '// TODO: read the port from the environment\nexport const port = 3000;\n',
  'src/discounts.js': readFileSync(join(REPO, 'demo', 'src', 'discounts.js'), 'utf8'),
};

/** The banner's "join two with then" example, e.g. `run ls then read package.json`. */
const bannerExample = offlineBanner([]).match(/join two with "then":\s+(.+)$/m)?.[1]?.trim();

interface Example {
  prompt: string;
  /** The README says this one fails on purpose. */
  fails: boolean;
}

/** The marked examples in the "Try it" section of a chapter README, or a sentence saying what is wrong. */
function examplesOf(chapter: string): Example[] | string {
  const file = `${chapter}/README.md`;
  if (!existsSync(join(REPO, file))) return `${file} does not exist`;
  const readme = readFileSync(join(REPO, file), 'utf8');
  const tryIt = readme.match(/^## Try it\n([\s\S]*?)(?=^## |(?![\s\S]))/m)?.[1];
  if (tryIt === undefined) return `${file} has no "## Try it" section`;
  const block = tryIt.match(new RegExp(`${MARKER}\\s*\`\`\`text\\n([\\s\\S]*?)\`\`\``))?.[1];
  if (block === undefined) {
    return (
      `${file} marks no offline examples: its "## Try it" section needs the line ${MARKER} ` +
      `followed by a \`\`\`text block of prompts, one a line, such as "${chapter.slice(0, 3)} >> run ls -la"`
    );
  }
  const prefix = `${chapter.slice(0, 3)} >> `;
  const lines = block.split('\n').filter((line) => line.trim());
  const wrong = lines.find((line) => !line.startsWith(prefix));
  if (wrong !== undefined) return `${file}: every line of the offline examples must start with "${prefix}"; this one does not: ${wrong}`;
  return lines.map((line) => {
    const [prompt, note = ''] = line.slice(prefix.length).split('←');
    return { prompt: prompt.trim(), fails: /^fails\b/i.test(note.trim()) };
  });
}

// The sessions, one per chapter, all started at once before any test: they take most of the time.
const sessions = new Map<string, () => Promise<RunResult>>();
beforeAll(() => {
  for (const [chapter, start] of sessions) {
    const running = start();
    running.catch(() => {}); // each test awaits it and reports a failure itself
    sessions.set(chapter, () => running);
  }
});

it('finds the example in the offline banner', () => {
  expect(bannerExample, 'the offline banner should show an example after: join two with "then":').toBeTruthy();
});

describe.concurrent.each(chapters())('%s README: the offline examples work', (chapter) => {
  const found = examplesOf(chapter);
  if (typeof found === 'string') {
    if (NOT_YET.has(chapter)) {
      it.skip(`(not yet) ${found}`);
    } else {
      it('marks its offline examples', () => expect.fail(found));
    }
    return;
  }
  const examples: Example[] = [...found, { prompt: bannerExample!, fails: false }];
  const prompt = `${chapter.slice(0, 3)} >> `;
  const inputs = [...examples.map((e) => e.prompt), 'exit'];
  sessions.set(chapter, () => runRepl(chapter.slice(0, 3), inputs, { offline: true, files: FILES }));
  const session = () => sessions.get(chapter)!();

  it('runs them all in one session and leaves on "exit"', async () => {
    const run = await session();
    expect(run.code, `the session should end with exit code 0; it printed:\n${run.stdout}`).toBe(0);
    expect(run.stdout.split(prompt).length, `one prompt per example, then one for "exit"; the session printed:\n${run.stdout}`)
      .toBe(examples.length + 2);
    expect(run.stdout, 'the banner shows the same example this test typed last').toContain(bannerExample);
  });

  examples.forEach((example, n) => {
    const what = example === examples.at(-1) ? `the banner's example "${example.prompt}"` : `"${example.prompt}"`;
    it(`${what} does what it says${example.fails ? ' (and fails, as the README says it will)' : ''}`, async () => {
      // What the session printed for this example: from its prompt to the next one.
      const out = (await session()).stdout.split(prompt)[n + 1] ?? '';
      const where = `\n--- what "${example.prompt}" printed ---\n${out}`;
      expect(out, `the demo model did not understand ${what}: reword it in ${chapter}/README.md${where}`)
        .not.toMatch(/did not understand/);
      expect(out, `${what} needs a tool ${chapter} does not have: drop it from this chapter's examples${where}`)
        .not.toMatch(/does not give me the/);
      expect(out, `${what} ended in an error, not an answer${where}`).not.toMatch(/^(API error|Error: )/m);
      if (example.fails) {
        expect(out, `the README says ${what} fails on purpose, but no tool call failed${where}`).toMatch(/That failed/);
      } else {
        expect(out, `a tool call of ${what} failed; if that is the point, add "← fails …" after it in the README${where}`)
          .not.toMatch(/That failed/);
      }
    });
  });
});
