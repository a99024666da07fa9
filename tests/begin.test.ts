/**
 * npm run begin: the folder it makes for a reader's build, and the s01 starter. The starter must
 * fail s01's first stage with a message a reader understands, and pass every stage once agentLoop
 * is written (here with s01's own loop section, put in place of the stub).
 *
 * begin() is called with a folder of its own in place of mine/ (.fixture-begin/, beside the
 * chapters as mine/ is), so a reader's mine/ is never touched.
 */
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { begin, beginArgs, loopSection, starterOf } from '../scripts/begin.ts';
import { explain } from '../scripts/grade.ts';
import { firstMiss } from './helpers/grading.ts';
import { chapterCode, REPO } from './helpers/run-chapter.ts';
import { Agent, Miss } from './stages/stage.ts';
import { stages } from './stages/s01.ts';

const MINE = join(REPO, '.fixture-begin');
const S01 = join(REPO, 's01_agent_loop');
const read = (file: string) => readFileSync(file, 'utf8');

afterAll(() => rmSync(MINE, { recursive: true, force: true }));

describe('npm run begin: its arguments', () => {
  it('takes a chapter, and --fresh after -- or as npm passes it on without --', () => {
    expect(beginArgs(['s02'], {})).toEqual({ chapter: 's02', fresh: false });
    expect(beginArgs(['s02_tools', '--fresh'], {})).toEqual({ chapter: 's02', fresh: true });
    const npm = { npm_config_fresh: 'true' };
    expect(beginArgs(['s02'], npm)).toEqual({ chapter: 's02', fresh: true });
  });

  it('says what is wrong, with the usage, and exit code 2', () => {
    for (const [args, says] of [
      [[], 'Which chapter?'],
      [['s99'], 'There is no chapter "s99"'],
      [['s01', '--force'], 'There is no option --force'],
      [['s01', 's02'], 'One chapter at a time'],
    ] as const) {
      const said = beginArgs([...args], {});
      expect(said, args.join(' ')).toMatchObject({ exit: 2 });
      expect((said as { text: string }).text).toContain(says);
      expect((said as { text: string }).text).toContain('Usage: npm run begin');
    }
  });
});

describe('npm run begin: the folder', () => {
  beforeAll(() => rmSync(MINE, { recursive: true, force: true }));
  const folder = join(MINE, 's01_agent_loop');

  it('makes the s01 starter: s01, its loop section a stub; and a link to shared/', async () => {
    const done = await begin('s01', { mine: MINE });
    expect(done.exit, done.text).toBe(0);
    expect(readdirSync(folder).sort()).toEqual(['code.ts', 'thinking.ts']);
    expect(read(join(folder, 'thinking.ts'))).toBe(read(join(S01, 'thinking.ts')));
    const code = read(join(folder, 'code.ts'));
    expect(code).toBe(starterOf(read(join(S01, 'code.ts'))));
    expect(loopSection(code).loop).toContain('agentLoop is not written yet');
    // The ../shared/ imports resolve through the link, wherever the repo is.
    expect(lstatSync(join(MINE, 'shared')).isSymbolicLink()).toBe(true);
    expect(realpathSync(join(MINE, 'shared'))).toBe(realpathSync(join(REPO, 'shared')));
    // It lists the stages and says how to grade and compare.
    expect(done.text).toContain(`1. ${stages[0].name}`);
    expect(done.text).toContain(`6. ${stages[5].name}`);
    expect(done.text).toContain('npm run grade s01 .fixture-begin/s01_agent_loop');
    expect(done.text).toContain('npm run diff .fixture-begin/s01_agent_loop s01');
  });

  it('never overwrites a folder that exists: it says so, and how to start over', async () => {
    writeFileSync(join(folder, 'notes.md'), 'my work');
    const done = await begin('s01', { mine: MINE });
    expect(done.exit).toBe(1);
    expect(done.text).toContain('.fixture-begin/s01_agent_loop/ exists already');
    expect(done.text).toContain('npm run begin s01 -- --fresh');
    expect(read(join(folder, 'notes.md'))).toBe('my work');
  });

  it('--fresh says what it removes, then starts the folder again', async () => {
    const said: string[] = [];
    const done = await begin('s01', { mine: MINE, fresh: true, say: (line) => said.push(line) });
    expect(done.exit, done.text).toBe(0);
    const removing = '--fresh: removing .fixture-begin/s01_agent_loop/ (code.ts, notes.md, ';
    expect(said.join('\n')).toContain(removing);
    expect(readdirSync(folder).sort()).toEqual(['code.ts', 'thinking.ts']);
  });

  it('makes a later chapter from the one before: its .ts files, not exercises/', async () => {
    const done = await begin('s02', { mine: MINE });
    expect(done.exit, done.text).toBe(0);
    const made = join(MINE, 's02_tools');
    expect(readdirSync(made).sort()).toEqual(['code.ts', 'thinking.ts']);
    for (const file of ['code.ts', 'thinking.ts']) {
      expect(read(join(made, file)), file).toBe(read(join(S01, file)));
    }
    expect(done.text).toContain('from s01_agent_loop/');
  });

  it('leaves a shared/ that is not the link alone, and says what is in the way', async () => {
    const other = join(REPO, '.fixture-begin-blocked');
    rmSync(other, { recursive: true, force: true });
    mkdirSync(join(other, 'shared'), { recursive: true });
    try {
      const done = await begin('s03', { mine: other });
      expect(done.exit).toBe(1);
      expect(done.text).toContain('.fixture-begin-blocked/shared is in the way');
      expect(existsSync(join(other, 's03_subagent'))).toBe(false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe.concurrent('the s01 starter, graded', () => {
  // Two folders beside the one begin makes (they run side by side): the starter as it is, and
  // with agentLoop written. Each holds s01's thinking.ts, as the starter does.
  const starter = join(MINE, 's01_starter');
  const written = join(MINE, 's01_written');
  beforeAll(() => {
    const s01 = read(chapterCode('s01'));
    for (const dir of [starter, written]) {
      mkdirSync(dir, { recursive: true });
      cpSync(join(S01, 'thinking.ts'), join(dir, 'thinking.ts'));
    }
    // The link begin makes, for their ../shared/ imports (if the tests above did not run).
    if (!existsSync(join(MINE, 'shared'))) symlinkSync('../shared', join(MINE, 'shared'));
    writeFileSync(join(starter, 'code.ts'), starterOf(s01));
    const { head, tail } = loopSection(starterOf(s01));
    writeFileSync(join(written, 'code.ts'), head + loopSection(s01).loop + tail);
  });

  it('fails stage 1, saying that agentLoop is not written yet', async () => {
    const agent = new Agent('s01', join(starter, 'code.ts'));
    const error = await stages[0].check(agent).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Miss);
    const shown = explain(error, stages[0], false, 'npm run grade s01').join('\n');
    expect(shown).toMatch(/did: +sent no request; the terminal showed: Error: agentLoop /);
    expect(shown).toContain('Error: agentLoop is not written yet');
  });

  it('passes all six stages once agentLoop is written (s01’s own loop section)', async () => {
    const { stage, error } = await firstMiss(new Agent('s01', join(written, 'code.ts')), stages);
    expect(stage, error instanceof Error ? error.message : 'every stage passed').toBe(0);
  });
});
