/**
 * One temporary folder for the whole test run, as TMPDIR for the test workers and every chapter they
 * start: each run's workspace and home are made inside it (run-chapter.ts), and so is anything a
 * test or a chapter's tool makes with os.tmpdir() or mktemp. Nothing lands in the shared /tmp, and
 * whatever a failing test leaves behind goes when the run ends.
 */
import { mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(inMemory() ?? tmpdir(), 'lah-suite-'));
  process.env.TMPDIR = dir; // read by os.tmpdir() in the workers vitest starts after this
  // Every process a test starts talks plain HTTP to a local fake, or no network at all, so none
  // needs extra CA certificates; but node reads and parses the file NODE_EXTRA_CA_CERTS names at
  // every start, needed or not: 0.09 CPU-s a process, on a machine that sets it for everything
  // (a container with a proxy's certificate, say), and a run starts some 300 node processes.
  delete process.env.NODE_EXTRA_CA_CERTS;
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * /dev/shm where it is a memory file system that may run programs (Linux mounts it so, mostly) and
 * has a gigabyte free. The chapters write their session logs a line at a time with fsync, and the
 * tests make thousands of small files; on a disk that costs kernel time and waits (6 of the 60
 * CPU-s that s04's and s06's tests took, here), in memory little. The chapters do the same.
 */
function inMemory(): string | undefined {
  try {
    const mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map((line) => line.split(' '));
    const shm = mounts.find(([, where, type]) => where === '/dev/shm' && type === 'tmpfs');
    if (!shm || shm[3].split(',').includes('noexec')) return undefined;
    const free = statfsSync('/dev/shm');
    return free.bavail * free.bsize >= 1024 ** 3 ? '/dev/shm' : undefined;
  } catch {
    return undefined; // not Linux, or no /dev/shm
  }
}
