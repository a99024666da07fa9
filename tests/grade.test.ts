/**
 * The grader itself (scripts/grade.ts): its arguments, how it explains a stage that fails, a
 * correct s01 written in another style (tests/fixtures/s01-alt/) passing every stage, and what a
 * reader sees when their code does not compile, crashes, or hangs.
 *
 * Where a test is about what `npm run grade` prints, it runs the CLI as a subprocess, from a
 * bundle under node (see gradeBundle): the tsx CLI would cost about a CPU-second a start.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { explain, gradeArgs } from '../scripts/grade.ts';
import { BUNDLE_DIR } from './helpers/bundle.ts';
import { firstMiss, fixture, mutate, type Edit } from './helpers/grading.ts';
import { NODE_FLAGS, REPO } from './helpers/run-chapter.ts';
import { Agent, Miss, type Stage } from './stages/stage.ts';
import { stages } from './stages/s01.ts';

describe('npm run grade: its arguments', () => {
  it('grades mine/<chapter folder> by default, and a folder named from where npm was run', () => {
    const mine = join(REPO, 'mine', 's01_agent_loop');
    const asked = gradeArgs(['s01'], {});
    if ('chapter' in asked) expect(asked.folder).toBe(mine);
    // No mine/s01_agent_loop here: it says how to start it.
    else expect(asked.text).toContain('npm run begin s01');
    const from = join(REPO, 'shared');
    expect(gradeArgs(['s01_agent_loop', '../s01_agent_loop'], { INIT_CWD: from })).toEqual({
      chapter: 's01',
      folder: join(REPO, 's01_agent_loop'),
      all: false,
      hint: false,
    });
  });

  it('takes --all and --hint, after -- or as npm passes them on without --', () => {
    const asked = { chapter: 's02', folder: join(REPO, 's02_tools') };
    const both = { ...asked, all: true, hint: true };
    expect(gradeArgs(['s02', 's02_tools', '--all', '--hint'], {})).toEqual(both);
    const env = { npm_config_all: 'true', npm_config_hint: 'true' };
    expect(gradeArgs(['s02', 's02_tools'], env)).toEqual(both);
  });

  it('says what is wrong: usage (exit 2), or a folder it cannot grade (exit 1)', () => {
    const cases: [string[], number, string][] = [
      [[], 2, 'Which chapter?'],
      [['s99'], 2, 'There is no chapter "s99"'],
      [['s01', '--fast'], 2, 'There is no option --fast'],
      [['s01', 'a', 'b'], 2, 'One chapter and one folder at most'],
      [['s01', 'no-such-folder'], 1, 'no-such-folder does not exist'],
      [['s01', 'shared'], 1, 'shared has no code.ts'],
    ];
    for (const [args, exit, says] of cases) {
      const said = gradeArgs(args, {});
      expect(said, args.join(' ')).toMatchObject({ exit });
      expect((said as { text: string }).text, args.join(' ')).toContain(says);
    }
    const help = gradeArgs(['--help'], {});
    expect(help).toMatchObject({ exit: 0, text: expect.stringContaining('Usage') });
  });
});

describe('npm run grade: a stage that fails, explained', () => {
  const hint = 'What does the loop send back?';
  const stage: Stage = { name: 'a stage', hint, check: async () => {} };
  const long = 'x'.repeat(300);
  const error = new Miss({ asked: `the model asked ${long}`, did: 'a\nb\nc\nd\ne', expected: 'f' });

  it('in at most ten lines: asked, did, expected, each cut to fit, then the hint or how', () => {
    const lines = explain(error, stage, false, 'npm run grade s01');
    expect(lines.length).toBeLessThanOrEqual(10);
    expect(lines[0]).toMatch(/^ +asked: +the model asked x+…$/);
    expect(lines[0].trimStart().length).toBeLessThanOrEqual(200); // under its indent
    expect(lines.filter((l) => /^ +(did: +a|[bc])$/.test(l))).toHaveLength(3); // d, e left out
    expect(lines.at(-1)).toBe('      stuck? npm run grade s01 -- --hint');
    const hinted = explain(error, stage, true, 'npm run grade s01');
    expect(hinted.at(-1)).toBe(`      hint:     ${hint}`);
  });

  it('says when the fault is the grader’s own, not the reader’s', () => {
    const lines = explain(new Error('fake server failed'), stage, false, 'npm run grade s01');
    expect(lines.join('\n')).toContain('the grader itself failed (please report it)');
    expect(lines.join('\n')).toContain('fake server failed');
  });
});

describe.concurrent('npm run grade on a reader’s code', () => {
  it('passes every s01 stage with a correct s01 in another style (fixture s01-alt)', async () => {
    const { code, remove } = fixture('s01-alt');
    try {
      const { stage, error } = await firstMiss(new Agent('s01', code), stages);
      expect(stage, error instanceof Error ? error.message : 'every stage passed').toBe(0);
    } finally {
      remove();
    }
  });

  it('shows the file, line and error of code that does not compile, and exits 1', async () => {
    const typo: Edit = ['tools.ts', 'const integer = ', 'const integer = = '];
    const { code, remove } = mutate('s02', 'compile', [typo]);
    try {
      const tools = join(code, '..', 'tools.ts');
      const line =
        readFileSync(tools, 'utf8')
          .split('\n')
          .findIndex((l) => l.includes('= = ')) + 1;
      const run = await grade(['s02', relative(REPO, join(code, '..'))]);
      expect(run.status, run.output).toBe(1);
      expect(run.output).toContain(`.mutant-s02_tools-compile/tools.ts does not compile`);
      expect(run.output).toContain(`.mutant-s02_tools-compile/tools.ts:${line}:`);
      expect(run.output).toContain('[ERROR] Unexpected "="');
      expect(run.output).not.toMatch(/✓|✗/); // no stage ran
    } finally {
      remove();
    }
  });

  it('shows the reader’s file:line when their code crashes: an uncaught TypeError', async () => {
    const options = '  const options = parseFlags(flags, USAGE);\n';
    const crash = `${options}  (options as any).verbose.level;\n`;
    const { code, remove } = mutate('s01', 'crash', [['code.ts', options, crash]]);
    try {
      const lines = readFileSync(code, 'utf8').split('\n');
      const line = lines.indexOf('  (options as any).verbose.level;') + 1;
      const run = await grade(['s01', relative(REPO, join(code, '..'))]);
      expect(run.status, run.output).toBe(1);
      expect(run.output).toContain(`✗ 1. ${stages[0].name}`);
      const did = run.output.split('\n').find((l) => l.trim().startsWith('did:')) ?? '';
      expect(did, run.output).toMatch(/crashed: TypeError: .*'level'/);
      expect(did).toContain(`, at .mutant-s01_agent_loop-crash/code.ts:${line}:`);
      expect(run.output).not.toMatch(/lah-bundles|node_modules|tests\/|scripts\//);
    } finally {
      remove();
    }
  });

  it('stops code that hangs at the stage’s bound, and says so', async () => {
    // A hang that costs no CPU: a promise that never settles, a timer keeping node alive.
    const first = 'forgetThinking(messages); //';
    const hang = `await new Promise(() => setInterval(() => {}, 60_000));\n  ${first}`;
    const { code, remove } = mutate('s01', 'hang', [['code.ts', first, hang]]);
    try {
      const agent = new Agent('s01', code, 2_000);
      const error = await stages[0].check(agent).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(Miss);
      const shown = explain(error, stages[0], false, 'npm run grade s01').join('\n');
      const stopped = 'was still running after 2 s, so the grader stopped it';
      expect(shown).toContain(`did:      sent no request, then ${stopped}`);
    } finally {
      remove();
    }
  });
});

describe('npm run grade, stopped with Ctrl+C', () => {
  it('leaves no agent running: its process group is killed before the grader exits', async () => {
    // The agent hangs, after writing its pid where the test can read it.
    const pidFile = join(mkdtempSync(join(tmpdir(), 'lah-grade-int-')), 'pid');
    const first = 'forgetThinking(messages); //';
    const path = JSON.stringify(pidFile);
    const write = `(await import('node:fs')).writeFileSync(${path}, String(process.pid));`;
    const hang = `${write}\n  await new Promise(() => setInterval(() => {}, 60_000));\n  ${first}`;
    const { code, remove } = mutate('s01', 'ctrl-c', [['code.ts', first, hang]]);
    const command = [...NODE_FLAGS, await gradeBundle(), 's01', relative(REPO, dirname(code))];
    const env = { PATH: process.env.PATH!, NO_COLOR: '1', TMPDIR: process.env.TMPDIR ?? tmpdir() };
    const grader = spawn(process.execPath, command, { cwd: REPO, env, stdio: 'ignore' });
    const exited = new Promise<number | null>((done) => grader.on('exit', done));
    let pid = 0;
    try {
      for (let i = 0; i < 600 && !existsSync(pidFile); i++) await sleep(50); // the agent started
      pid = Number(readFileSync(pidFile, 'utf8'));
      grader.kill('SIGINT');
      expect(await exited, 'Ctrl+C ends the grader with 130').toBe(130);
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 40 && alive(); i++) await sleep(50); // reaped once its parent is gone
      const left = `the agent (pid ${pid}) is still running after the grader exited`;
      expect(alive(), left).toBe(false);
    } finally {
      if (pid) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone, as it should be.
        }
      }
      grader.kill('SIGKILL');
      remove();
    }
  });
});

/** `npm run grade <args>` from the repo, as a reader runs it: what it printed, its exit code. */
async function grade(args: string[]): Promise<{ status: number | null; output: string }> {
  const env: Record<string, string> = { PATH: process.env.PATH!, NO_COLOR: '1' };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR; // the suite's (global-setup.ts)
  if (process.env.LAH_RUN_LOG) env.LAH_RUN_LOG = process.env.LAH_RUN_LOG; // its chapter runs count
  const options = { cwd: REPO, env, timeout: 60_000, killSignal: 'SIGKILL' as const };
  const command = [process.execPath, ...NODE_FLAGS, await gradeBundle(), ...args];
  return new Promise((done) => {
    execFile(command[0], command.slice(1), options, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      done({ status, output: `${stdout}${stderr}` });
    });
  });
}

/**
 * scripts/grade.ts in one file for node, built once per test worker, with s01's stages. The npm
 * packages stay outside (node finds them from the bundle's folder, in node_modules). Two changes:
 * each module's own path where it asks for it (`fileURLToPath(import.meta.url)` would name the
 * bundle; grade.ts's own check that it is the program keeps it), and loadStages imports the
 * stages from the bundle (node cannot import a .ts file).
 */
function gradeBundle(): Promise<string> {
  gradeBundleBuild ??= (async () => {
    const entry = join(REPO, 'scripts', 'grade.ts');
    const load = '(await import(pathToFileURL(file).href)).stages';
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      write: false,
      logLevel: 'silent',
      plugins: [
        {
          name: 'grade-cli',
          setup(b) {
            b.onLoad({ filter: /\.ts$/ }, ({ path }) => {
              let text = readFileSync(path, 'utf8');
              if (path === entry) {
                if (!text.includes(load)) throw new Error(`scripts/grade.ts has no "${load}"`);
                const s01 = JSON.stringify(join(REPO, 'tests/stages/s01.ts'));
                const stages = `{ s01: () => import(${s01}) }`;
                const loaded = `(void file, await (${stages} as any)[chapter]()).stages`;
                text = text.replace(load, () => loaded);
              } else {
                const own = JSON.stringify(path);
                text = text.replaceAll('fileURLToPath(import.meta.url)', () => own);
              }
              return { contents: text, loader: 'ts' };
            });
          },
        },
      ],
    });
    const code = result.outputFiles[0].contents;
    const hash = createHash('sha256').update(code).digest('hex').slice(0, 24);
    const file = join(BUNDLE_DIR, `grade-${hash}.mjs`);
    if (!existsSync(file)) {
      mkdirSync(BUNDLE_DIR, { recursive: true });
      writeFileSync(`${file}.${process.pid}.tmp`, code);
      renameSync(`${file}.${process.pid}.tmp`, file);
    }
    // Used now: bundle.ts's prune() removes what has not been used for days.
    utimesSync(file, new Date(), new Date());
    return file;
  })();
  return gradeBundleBuild;
}

let gradeBundleBuild: Promise<string> | undefined;
