/**
 * One temporary folder for the whole test run, as TMPDIR for the test workers and every chapter they
 * start: each run's workspace and home are made inside it (run-chapter.ts), and so is anything a
 * test or a chapter's tool makes with os.tmpdir() or mktemp. Nothing lands in the shared /tmp, and
 * whatever a failing test leaves behind goes when the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'lah-suite-'));
  process.env.TMPDIR = dir; // read by os.tmpdir() in the workers vitest starts after this
  return () => rmSync(dir, { recursive: true, force: true });
}
