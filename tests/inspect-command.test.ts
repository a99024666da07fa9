/**
 * npm run inspect (scripts/inspect.ts): where it writes the page, which trace it takes, what
 * it refuses; and the inspector on its own: the prices of s06_prompt/cache.ts, no chapter
 * loaded, of the SDK only what the tracer needs.
 */
import {
  lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { inspect, newestTrace, pagePath } from '../scripts/inspect.ts';
import { CACHE_PRICE, PRICES } from '../scripts/inspector/page.ts';
import { traceFolder } from '../shared/trace.ts';
import { conversation, jsonl } from './helpers/inspect-traces.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));

// ── Prices, and what the command loads ─────────────────────────────────────────────────────────

describe('the inspector on its own', () => {
  it('prices as s06_prompt/cache.ts does (read as text: importing it starts the SDK)', () => {
    const source = readFileSync(join(REPO, 's06_prompt/cache.ts'), 'utf8');
    const table = /const PRICES\b[^=]*= \{\n([^]*?)\n\};/.exec(source);
    expect(table, 's06_prompt/cache.ts must still have its PRICES table').not.toBeNull();
    const entry = /^ {2}'([^']+)': \{ input: ([\d.]+), output: ([\d.]+) \},?$/;
    const lines = table![1].split('\n').filter((l) => l.trim() && !l.trim().startsWith('//'));
    const prices = Object.fromEntries(lines.map((l) => {
      const m = entry.exec(l);
      expect(m, `a PRICES line of cache.ts this test cannot read: ${l}`).not.toBeNull();
      return [m![1], { input: Number(m![2]), output: Number(m![3]) }];
    }));
    expect(PRICES, 'scripts/inspector/page.ts has the prices of s06_prompt/cache.ts')
      .toEqual(prices);
    const read = /\(read \?\? 0\) \* ([\d.]+)/.exec(source);
    const written = /\(written \?\? 0\) \* ([\d.]+)/.exec(source);
    expect(read && written, 'cache.ts still prices reads and writes as `(read ?? 0) * 0.1`')
      .toBeTruthy();
    expect(CACHE_PRICE).toEqual({ read: Number(read![1]), written: Number(written![1]) });
  });

  it("loads no chapter (s06's would start the offline model): node's modules and its own", () => {
    const OWN = ['./inspector/page.ts', '../shared/trace.ts'];
    // page.ts puts together the files beside it: they import each other (untrusted.ts nothing).
    const inspector = readdirSync(join(REPO, 'scripts/inspector')).filter((f) => f.endsWith('.ts'));
    const beside = (name: string) => inspector.some((f) => name === `./${f}`);
    for (const file of ['scripts/inspect.ts', ...inspector.map((f) => `scripts/inspector/${f}`)]) {
      const source = readFileSync(join(REPO, file), 'utf8');
      const loaded = [...source.matchAll(/^import (?!type )[^;]*?from '([^']+)'/gm)]
        .map((m) => m[1]);
      if (!file.endsWith('untrusted.ts')) expect(loaded.length, file).toBeGreaterThan(0);
      const others = loaded
        .filter((name) => !name.startsWith('node:') && !OWN.includes(name))
        .filter((name) => !(file.startsWith('scripts/inspector/') && beside(name)));
      expect(others, `${file} imports only node: modules, the inspector and the tracer`).toEqual([]);
      expect(source, `${file}: no import() either`).not.toMatch(/\bimport\(/);
    }
  });

  it('loads of the SDK only what the tracer needs: not its client, which brings every resource', async () => {
    // What node would load for `npm run inspect`, as esbuild finds it by following the imports.
    const found = await build({
      entryPoints: [join(REPO, 'scripts/inspect.ts')], bundle: true, platform: 'node', format: 'esm',
      write: false, metafile: true, logLevel: 'silent',
    });
    const sdk = Object.keys(found.metafile.inputs).filter((f) => f.includes('node_modules/@anthropic-ai/sdk/'));
    expect(sdk, 'the SDK is reached through shared/trace.ts').not.toEqual([]);
    expect(sdk.filter((f) => /sdk\/(client|index)\.mjs$/.test(f)), 'no client, no index').toEqual([]);
  });
});

// ── The command ────────────────────────────────────────────────────────────────────────────────

describe('npm run inspect', () => {
  const folder = () => mkdtempSync(join(tmpdir(), 'inspect-'));

  it('writes the page beside the trace, readable by you alone, and prints where', () => {
    const dir = folder();
    writeFileSync(join(dir, 'run.jsonl'), jsonl(...conversation(2)));
    const outcome = inspect(['run.jsonl'], dir); // a relative path is from where you ran it
    expect(outcome).toMatchObject({ code: 0, stdout: join(dir, 'run.html') });
    expect(outcome.stderr).toMatch(/^inspect: [\d.]+ MB page written in \d+ ms$/);
    expect(statSync(join(dir, 'run.html')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'run.html'), 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('replaces an earlier page, and a link where the page goes, never what it links to', () => {
    const dir = folder();
    writeFileSync(join(dir, 'run.jsonl'), jsonl(...conversation(1)));
    writeFileSync(join(dir, 'elsewhere.txt'), 'not to be overwritten', { mode: 0o644 });
    symlinkSync(join(dir, 'elsewhere.txt'), join(dir, 'run.html'));
    expect(inspect([join(dir, 'run.jsonl')], '/').code).toBe(0);
    expect(readFileSync(join(dir, 'elsewhere.txt'), 'utf8')).toBe('not to be overwritten');
    expect(lstatSync(join(dir, 'run.html')).isFile()).toBe(true);
    expect(statSync(join(dir, 'run.html')).mode & 0o777).toBe(0o600);
  });

  it('takes the newest trace of a folder', () => {
    const dir = folder();
    for (const [name, age] of [['old.jsonl', 60], ['new.jsonl', 0], ['newer.txt', -60]] as const) {
      writeFileSync(join(dir, name), '');
      const when = Date.now() / 1000 - age;
      utimesSync(join(dir, name), when, when);
    }
    expect(newestTrace(dir)).toBe(join(dir, 'new.jsonl'));
    expect(newestTrace(join(dir, 'missing'))).toBeUndefined();
  });

  it('with no trace named, takes the newest of npm run demo’s too: a demo run files its traces under its copy', () => {
    const home = folder();
    const trace = (copy: string, name: string, age: number) => {
      mkdirSync(join(home, '.learn-agent-harness', 'demo', copy), { recursive: true });
      const traces = traceFolder(join(home, '.learn-agent-harness', 'demo', copy), home);
      mkdirSync(traces, { recursive: true });
      writeFileSync(join(traces, name), jsonl(...conversation(1)));
      const when = Date.now() / 1000 - age;
      utimesSync(join(traces, name), when, when);
      return join(traces, name);
    };
    trace('lah-demo-s01', 'older.jsonl', 60);
    const newest = trace('lah-demo-s05', 'newest.jsonl', 0);
    const outcome = inspect([], folder(), home); // from a folder with no trace of its own: the repo
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe(pagePath(newest));
    expect(outcome.stderr, 'and says which trace it took').toContain(newest);
  });

  it('with no trace to read, says where it looked and how to make one (exit 2)', () => {
    const outcome = inspect([], folder(), folder()); // a fresh folder and home: nothing traced
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^inspect: no trace in \/.*\.learn-agent-harness\/traces\//);
    expect(outcome.stderr).toContain('--trace');
  });

  it('refuses a file that is not a trace, or is not there (exit 2)', () => {
    const dir = folder();
    writeFileSync(join(dir, 'package.json'), '{\n  "name": "x"\n}\n');
    const notATrace = inspect(['package.json'], dir);
    expect(notATrace.code).toBe(2);
    expect(notATrace.stderr).toBe(`inspect: ${join(dir, 'package.json')} is not a trace: its ` +
      'first line is not {"type":"trace",…}');
    const missing = inspect(['gone.jsonl'], dir);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('no such file') });
  });
});
