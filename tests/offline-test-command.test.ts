/**
 * The offline model runs a project's tests as its package.json says (scripts.test), when that is
 * node's own runner with a reporter it can read: a project can then make the output the same on
 * every Node (issue 33). Anything else gets node --test --test-reporter=tap, as before.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { offlineRespond } from '../shared/offline-model.ts';
import { TEST_COMMAND, testCommand } from '../shared/offline/looking.ts';

const root = mkdtempSync(join(tmpdir(), 'lah-test-command-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A project folder whose package.json is `json` (a string: written as it is). */
function project(name: string, json?: unknown): string {
  const dir = join(root, name);
  mkdirSync(dir);
  if (json !== undefined) {
    const text = typeof json === 'string' ? json : JSON.stringify(json);
    writeFileSync(join(dir, 'package.json'), text);
  }
  return dir;
}
const script = (test: string) => ({ scripts: { test } });

it("takes the project's node --test command when it names a reporter it can read", () => {
  const own = 'node --test --test-reporter=./reporter.mjs';
  expect(testCommand(project('own', script(own)))).toBe(own);
  expect(testCommand(project('spec', script('node --test --test-reporter=spec')))).toBe(
    'node --test --test-reporter=spec',
  );
});

it('falls back to its TAP command for anything else', () => {
  const cases: Record<string, unknown> = {
    bare: script('node --test'), // node's default reporter differs from one Node to the next
    vitest: script('vitest run'),
    shell: script('node --test --test-reporter=./r.mjs; rm -rf ~'),
    dot: script('node --test --test-reporter=dot'),
    split: script('node --test --test-reporter dot'),
    file: script('node --test --test-reporter=tap --test-reporter-destination=out.txt'),
    notJson: '{ "scripts": ',
    noScripts: { name: 'x' },
    number: { scripts: { test: 5 } },
    none: undefined,
  };
  for (const [name, json] of Object.entries(cases)) {
    expect(testCommand(project(name, json)), name).toBe(TEST_COMMAND);
  }
  expect(testCommand(undefined)).toBe(TEST_COMMAND);
  // A package.json that is a folder or a link is not read.
  mkdirSync(join(project('folder'), 'package.json'));
  expect(testCommand(join(root, 'folder'))).toBe(TEST_COMMAND);
  const linked = project('linked');
  symlinkSync(join(root, 'own', 'package.json'), join(linked, 'package.json'));
  expect(testCommand(linked)).toBe(TEST_COMMAND);
});

it("runs that command first, and says so in its thinking", () => {
  const own = 'node --test --test-reporter=./reporter.mjs';
  const dir = project('asked', script(own));
  const reply = offlineRespond({
    system: `You are a coding agent working in ${dir}. Use the tools.`,
    tools: [{ name: 'bash' }],
    messages: [{ role: 'user', content: 'fix the failing test' }],
  }) as any;
  const call = reply.content.find((b: any) => b.type === 'tool_use');
  expect(call.input).toEqual({ command: own });
  const thinking = reply.content.filter((b: any) => b.type === 'thinking').map((b: any) => b.thinking).join('');
  expect(thinking).toContain("as the project's package.json does");
});
