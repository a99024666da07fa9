/**
 * npm run bench:grade [s01 …] [-- --runs N] — how long `npm run grade` takes, as a reader runs
 * it.
 *
 * For each chapter, a copy of its folder (.bench-grade-sNN/, beside the chapters) is graded with
 * the chapter's stages by `npx tsx scripts/grade.ts`, N times (default 3). Each time the copy's
 * code.ts gets a new last line, so the grader compiles it afresh, as it does after a reader's
 * edit. Printed: the whole grade and the time until stage 1's line, wall seconds (median and
 * most), and the CPU seconds of the whole process tree. The README's figures come from here.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chapterFolder, chapters, REPO } from './chapters.ts';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : Number(process.env.npm_config_runs) || 3;
const asked = args.filter((a, i) => !a.startsWith('-') && (runsAt < 0 || i !== runsAt + 1));
const folders = asked.length ? asked.map((c) => chapterFolder(c) ?? c) : chapters();

type Timing = { total: number; first: number; cpu: number; exit: number | null; passed: number };

/** One grade of `folder` with the stages of `chapter`, timed from outside. */
function gradeOnce(chapter: string, folder: string): Promise<Timing> {
  const started = performance.now();
  let first = NaN;
  let out = '';
  const tsx = join(REPO, 'node_modules/.bin/tsx');
  // /usr/bin/time reports the CPU of the grader and every process it waited for (the chapter runs).
  const timeFormat = 'cpu %U %S';
  const child = spawn(
    '/usr/bin/time',
    ['-f', timeFormat, tsx, 'scripts/grade.ts', chapter, folder],
    {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const seconds = (performance.now() - started) / 1000;
    if (Number.isNaN(first) && /[✓✗] 1\./.test(out)) first = seconds;
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((done) => {
    child.on('close', (exit) => {
      const total = (performance.now() - started) / 1000;
      const [, user, sys] = /cpu ([\d.]+) ([\d.]+)/.exec(err) ?? ['', 'NaN', 'NaN'];
      const passed = (out.match(/✓ \d+\./g) ?? []).length;
      done({ total, first, cpu: Number(user) + Number(sys), exit, passed });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (x: number) => `${x.toFixed(1)} s`;

console.log(
  `npm run grade on each chapter's own folder, ${runs} runs each, compiled afresh each time\n`,
);
console.log(
  '| chapter | stages passed | whole grade (median, most) | until stage 1 (median, most) ' +
    '| CPU-s (median) |',
);
console.log('| :-- | --: | --: | --: | --: |');
for (const name of folders) {
  const chapter = name.slice(0, 3);
  const copy = `.bench-grade-${chapter}`;
  rmSync(join(REPO, copy), { recursive: true, force: true });
  cpSync(join(REPO, name), join(REPO, copy), {
    recursive: true,
    filter: (f) => !f.includes('exercises'),
  });
  const timings: Timing[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      appendFileSync(join(REPO, copy, 'code.ts'), `// bench:grade run ${Date.now()}-${i}\n`);
      timings.push(await gradeOnce(chapter, copy));
    }
  } finally {
    rmSync(join(REPO, copy), { recursive: true, force: true });
  }
  const totals = timings.map((t) => t.total);
  const firsts = timings.map((t) => t.first);
  const exits = timings.map((t) => t.exit).join(',');
  const passed = `${Math.min(...timings.map((t) => t.passed))} (exit ${exits})`;
  const whole = `${s(median(totals))}, ${s(Math.max(...totals))}`;
  const one = `${s(median(firsts))}, ${s(Math.max(...firsts))}`;
  console.log(
    `| ${name} | ${passed} | ${whole} | ${one} | ${median(timings.map((t) => t.cpu)).toFixed(1)} |`,
  );
}
