/**
 * For `npm run bench:suite` only: node preloads this into a chapter process (--import, see
 * run-chapter.ts), and at exit it appends the CPU seconds the process itself spent to the file
 * named in its URL (?log=…). The commands the chapter ran, and its exits by a signal, are not
 * counted. It changes nothing else: an 'exit' listener that only writes a line.
 */
import { appendFileSync } from 'node:fs';

const log = new URL(import.meta.url).searchParams.get('log');
process.on('exit', () => {
  const { userCPUTime, systemCPUTime } = process.resourceUsage();
  try {
    appendFileSync(log, `${(userCPUTime + systemCPUTime) / 1e6}\n`);
  } catch {
    // A run under `ulimit -f`, say: the figure is lost, the chapter's exit stays its own.
  }
});
