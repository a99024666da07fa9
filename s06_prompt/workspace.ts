/**
 * The workspace boundary (new in s02): every path the model gives a file tool is resolved here and
 * refused if it lands outside the folder the agent was started in. And writes that never leave
 * half a file.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readlinkSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { statSync, writeFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export const WORKDIR = process.cwd(); // the agent works in the folder you start it from
export const ROOT = realpathSync(WORKDIR); // the same folder, with any symlinks on the way resolved

/** Resolve a path the model gave us, and refuse it if it lands outside the workspace. */
export function safePath(path: string): string {
  const full = resolve(WORKDIR, path);
  const rel = relative(ROOT, realPath(full));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    const only = 'file tools only work inside it';
    throw new Error(`${path} is outside the workspace (${WORKDIR}); ${only}`);
  }
  return full;
}

/**
 * Where `path` really is, every symlink followed. A new file has no real path yet: its deepest
 * existing folder is resolved and the rest added. A link to a file not made yet is followed too.
 */
function realPath(path: string, links = 0): string {
  let head = path;
  const rest: string[] = [];
  while (!exists(head)) {
    rest.unshift(basename(head));
    head = dirname(head);
  }
  try {
    return join(realpathSync(head), ...rest);
  } catch (err) {
    // ENOENT for a path that exists: `head` is a link to nothing (yet). Follow it by hand.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || links >= 40) throw err;
    return realPath(join(resolve(dirname(head), readlinkSync(head)), ...rest), links + 1);
  }
}

/** Is there anything at `path` (a dangling symlink counts)? */
export function exists(path: string): boolean {
  try {
    return !!lstatSync(path);
  } catch {
    return false;
  }
}

/** What a file that is not a regular file is, for error messages. */
export function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'directory';
  if (info.isFIFO()) return 'FIFO (named pipe)';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice()) return 'character device';
  return info.isBlockDevice() ? 'block device' : 'special file';
}

/** Write to a temp file, then rename it over the target: a crash never leaves half a file. */
export function writeAtomic(path: string, text: string): void {
  // Through a symlink to the file it names, and with the file's permissions (a script stays
  // executable). A link to a file not made yet makes it, in a new folder if need be.
  const target = realPath(path);
  safePath(target); // check the file really written, too: a link can change after the first check
  mkdirSync(dirname(target), { recursive: true });
  // Only ever replace a regular file: a rename over a folder fails, and for "." the temp file
  // would land outside.
  if (exists(target) && !statSync(target).isFile()) {
    const kind = kindOf(statSync(target));
    throw new Error(`${path} is a ${kind}, not a regular file; nothing was written`);
  }
  // The temp file goes next to the target (a rename is atomic only within one file system), under
  // a random name, and 'wx' fails if anything is already there: a file or link planted at that
  // name is never used.
  const tmp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, text, { flag: 'wx', mode: exists(target) ? statSync(target).mode : 0o666 });
    renameSync(tmp, target);
  } catch (err) {
    // Leave no temp file behind. EEXIST means the name was taken: that file is not ours to delete.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') rmSync(tmp, { force: true });
    throw err;
  }
}
