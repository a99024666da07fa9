/**
 * npm run bench:suite [-- <vitest filters>] — time the whole test suite.
 *
 * Prints wall time, the CPU time of the whole process tree (vitest, its workers and every chapter
 * subprocess they started), the test count, how many chapter processes the tests started (and how
 * many of them through tsx, which costs about seven runs of a bundle), what the bundle runs spent
 * themselves, the ten slowest tests and the slowest files. The suite is CPU-bound on a small
 * machine, and a chapter process (node, the SDK, a request: about 0.3 CPU-s) is most of what it
 * spends: CPU time and the process count are the figures that predict how it scales with more
 * chapters; wall time depends on how many cores there are, and on what else the machine is doing.
 *
 * Nothing here asserts a time: it is a measuring tool, not a test.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO } from './chapters.ts';

interface JsonReport {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: {
    name: string;
    startTime: number;
    endTime: number;
    assertionResults: { fullName: string; status: string; duration?: number | null }[];
  }[];
}

const dir = mkdtempSync(join(tmpdir(), 'lah-bench-'));
const report = join(dir, 'report.json');
const times = join(dir, 'times.txt');
const runs = join(dir, 'runs.jsonl'); // one line a chapter process (tests/helpers/run-chapter.ts)

// bash's `times` builtin prints the CPU time of the shell's waited-for children, and a waited-for
// process's figure includes its own waited-for descendants: that is the whole tree (the rusage a
// parent never sees, from a process killed before it reaped its children, is lost; it is small).
// Unlike /usr/bin/time it works the same with GNU and BSD userlands.
const script =
  'npx vitest run --reporter=dot --reporter=json --outputFile.json="$0" "$@"; rc=$?; times > "$TIMES_FILE"; exit $rc';
const started = performance.now();
const code = await new Promise<number>((done) => {
  const child = spawn('bash', ['-c', script, report, ...process.argv.slice(2)], {
    cwd: REPO,
    stdio: 'inherit',
    env: { ...process.env, TIMES_FILE: times, LAH_RUN_LOG: runs },
  });
  child.on('close', (c) => done(c ?? 1));
});
const wall = (performance.now() - started) / 1000;

/** `times` prints two lines, "0m0.002s 0m0.001s": the shell's own, then its children's (user, sys). */
function childCpu(): { user: number; sys: number } {
  const secs = (t: string) => {
    const m = t.match(/(\d+)m([\d.]+)s/);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  };
  const [user, sys] = readFileSync(times, 'utf8').trim().split('\n')[1].trim().split(/\s+/).map(secs);
  return { user, sys };
}

let data: JsonReport;
try {
  data = JSON.parse(readFileSync(report, 'utf8'));
} catch {
  console.error(`\nvitest wrote no JSON report (exit code ${code}); see its output above.`);
  process.exit(code || 1);
}
const cpu = childCpu();
const chapterRuns = existsSync(runs)
  ? readFileSync(runs, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { file: string; tsx: boolean })
  : [];
// What each bundle run spent itself, written at its exit (tests/helpers/cpu-at-exit.mjs).
const ownCpu = existsSync(`${runs}.cpu`) ? readFileSync(`${runs}.cpu`, 'utf8').trim().split('\n').map(Number) : [];
rmSync(dir, { recursive: true, force: true });

const tests = data.testResults.flatMap((file) =>
  file.assertionResults.map((t) => ({ name: t.fullName, file: relative(REPO, file.name), ms: t.duration ?? 0 })),
);
const files = data.testResults.map((f) => ({ file: relative(REPO, f.name), ms: f.endTime - f.startTime }));
const s = (ms: number) => `${(ms / 1000).toFixed(2).padStart(6)} s`;
const cut = (text: string, n: number) => (text.length > n ? text.slice(0, n - 1) + '…' : text);

console.log('\n── bench:suite ─────────────────────────────────────────────────────────');
console.log(`wall time      ${wall.toFixed(1)} s`);
const cpuSplit = `user ${cpu.user.toFixed(1)} s + sys ${cpu.sys.toFixed(1)} s, whole process tree`;
console.log(`CPU time       ${(cpu.user + cpu.sys).toFixed(1)} s  (${cpuSplit})`);
console.log(
  `tests          ${data.numTotalTests}  ` +
    `(${data.numPassedTests} passed, ${data.numFailedTests} failed, ${data.numPendingTests} skipped)`,
);
const viaTsx = chapterRuns.filter((r) => r.tsx).length;
console.log(`chapter runs   ${chapterRuns.length}  (${viaTsx} of them through tsx)`);
const perFile = new Map<string, number>();
for (const r of chapterRuns) perFile.set(r.file || '(unknown)', (perFile.get(r.file || '(unknown)') ?? 0) + 1);
const busiest = [...perFile].sort((a, b) => b[1] - a[1]).map(([file, n]) => `${file.replace(/^tests\//, '')} ${n}`);
if (busiest.length) console.log(`               ${busiest.join(', ')}`);
if (ownCpu.length) {
  const total = ownCpu.reduce((sum, x) => sum + x, 0);
  const each = `${ownCpu.length} bundle runs that exited, ${(total / ownCpu.length).toFixed(2)} CPU-s each`;
  console.log(`               ${total.toFixed(1)} CPU-s of their own (${each}; not the commands they ran, nor tsx)`);
}
console.log('\nten slowest tests (time inside the test; a run shared through beforeAll is counted in its file)');
for (const t of [...tests].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
  console.log(`  ${s(t.ms)}  ${cut(`${t.file} › ${t.name}`, 100)}`);
}
console.log('\nfiles (wall time each, including hooks; files run two at a time)');
for (const f of [...files].sort((a, b) => b.ms - a.ms)) console.log(`  ${s(f.ms)}  ${f.file}`);
process.exit(code);
