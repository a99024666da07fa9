/**
 * Type-check one chapter folder with tsc, as `npm run check sNN` does before any exercise check:
 * esbuild, which runs the chapter, only strips the types, so `keepResults = "3"` where a number is
 * declared would run, and fail later in some unrelated way. Only the chapter's own files and what
 * they import are checked, so a type error in a chapter you are not working on does not show.
 *
 *   typeErrors('/repo/s05_context_compact') → undefined, or the errors as esbuild shows its own:
 *     s05_context_compact/code.ts:25:7: error TS2322: Type 'string' is not assignable to …
 *         25 │ const MAX_ROUNDS: number = '30';
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The type errors of the .ts files in `folder` (a chapter), shown with their lines; or undefined. */
export function typeErrors(folder: string): string | undefined {
  const root = dirname(folder);
  // The repo's tsconfig, narrowed to this folder (paths in full, so the file can live anywhere).
  const dir = mkdtempSync(join(tmpdir(), 'typecheck-'));
  const config = join(dir, 'tsconfig.json');
  const typeRoots = [join(root, 'node_modules', '@types')];
  const include = [join(folder, '*.ts')];
  const narrowed = { extends: join(root, 'tsconfig.json'), include, compilerOptions: { typeRoots } };
  writeFileSync(config, JSON.stringify(narrowed));
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  const args = ['--noEmit', '--pretty', 'false', '-p', config];
  const run = spawnSync(tsc, args, { cwd: root, encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  if (run.status === 0) return undefined;
  // tsc: `s05_context_compact/code.ts(25,7): error TS2322: Type 'string' is not assignable to …`
  const errors = [...run.stdout.matchAll(/^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/gm)];
  if (errors.length === 0) return (run.stdout + run.stderr).trim() || `tsc failed (exit ${run.status})`;
  return errors
    .map(([, file, line, column, code, message]) => {
      const source = readFileSync(join(root, file), 'utf8').split('\n')[Number(line) - 1] ?? '';
      const gutter = `${line} │ `;
      const caret = `${' '.repeat(gutter.length - 2)}╵ ${' '.repeat(Number(column) - 1)}^`;
      return `${file}:${line}:${column}: error ${code}: ${message}\n    ${gutter}${source}\n    ${caret}`;
    })
    .join('\n\n');
}
