/**
 * The file tools (new in s02): read_file, write_file and edit_file. Every path goes through the
 * workspace boundary first; every result is bounded; only regular text files are read or edited.
 */
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import { constants, mkdirSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { head } from '../shared/text.ts';
import { kindOf, safePath, writeAtomic } from './workspace.ts';

export const MAX_LINE = 2000; // characters of one line that read_file and grep show
// Bytes; a bigger file is refused (read_file, edit_file) or skipped (grep).
export const MAX_READ = 10_000_000;
// Characters in one tool result (about 25,000 tokens); runTool cuts anything longer.
export const MAX_RESULT = 100_000;
const MAX_BODY = MAX_RESULT - 1_000; // what read_file and edit_file fill, leaving room for a note
// A diff of a huge replace_all can take minutes; edit_file then answers without one.
const DIFF_SECONDS = 2;
export const isBinary = (bytes: Buffer) => bytes.subarray(0, 8000).includes(0);
export const cutLine = (line: string) => {
  return line.length > MAX_LINE ? `${head(line, MAX_LINE)}… (line cut)` : line;
};
const tooBig = (name: string) => {
  const parts = "head, tail, sed -n '100,200p', grep -n";
  return `${name} is over ${MAX_READ / 1e6} MB; look at parts of it with bash: ${parts}`;
};
const notRegular = (name: string, info: Stats) => {
  const why = 'the file tools only read regular files';
  return new Error(`${name} is a ${kindOf(info)}, not a regular file; ${why}`);
};

/**
 * The bytes of a regular file, or undefined if it has more than MAX_READ. Anything else is
 * refused: reading a FIFO waits for a writer that may never come, and /dev/zero never ends.
 */
export async function readRegularFile(path: string, name: string): Promise<Buffer | undefined> {
  // O_NONBLOCK: even opening a FIFO returns at once. Then ask the open handle what it is (fstat),
  // so the path cannot be swapped for something else between the check and the read.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch(async (err) => {
    if (err.code === 'ENXIO') throw notRegular(name, await stat(path)); // open() on a socket
    throw err;
  });
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new Error(`${name} is a directory; use glob to list it`);
    if (!info.isFile()) throw notRegular(name, info);
    return info.size > MAX_READ ? undefined : await handle.readFile();
  } finally {
    await handle.close();
  }
}

// Strict UTF-8: a byte that is not UTF-8 (a Latin-1 "é") throws instead of turning into "\uFFFD".
// ignoreBOM keeps a byte order mark in the text, so writing the text back writes the BOM back.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

interface ReadInput {
  file_path: string;
  offset?: number;
  limit?: number;
}

export async function readFileTool(input: ReadInput): Promise<string> {
  const name = input.file_path;
  const bytes = await readRegularFile(safePath(name), name);
  if (!bytes) throw new Error(tooBig(name));
  if (isBinary(bytes)) throw new Error(`${name} is a binary file; read_file shows text only`);
  // Not UTF-8 (Latin-1, say): show it anyway, and say that the � marks are not in the file.
  const text = decodeUtf8(bytes);
  let note = '';
  if (text === undefined) note = '\n(not valid UTF-8: bytes that are not UTF-8 are shown as �)';
  const lines = (text ?? bytes.toString('utf8')).split('\n');
  if (lines.at(-1) === '') lines.pop(); // the newline at the end of the last line
  const start = Math.max(0, (input.offset ?? 1) - 1);
  if (start > 0 && start >= lines.length) {
    throw new Error(`offset ${input.offset} is past the end: ${name} has ${lines.length} lines`);
  }
  // `cat -n` style, so the model can cite line numbers:  "    12\tconst x = 1;"
  // A page ends after `limit` lines or MAX_BODY characters: 2,000 rows of a wide CSV would fill
  // the context.
  const body: string[] = [];
  let size = 0;
  for (const line of lines.slice(start, start + (input.limit ?? 2000))) {
    const numbered = `${String(start + body.length + 1).padStart(6)}\t${cutLine(line)}`;
    if (body.length > 0 && size + numbered.length > MAX_BODY) break;
    body.push(numbered);
    size += numbered.length + 1;
  }
  if (body.length === lines.length) return (body.join('\n') || '(empty file)') + note;
  const end = start + body.length;
  const next = `to read on, use offset ${end + 1}`;
  const page = `(showing lines ${start + 1}-${end} of ${lines.length}; ${next})`;
  return `${body.join('\n')}\n${page}${note}`;
}

interface WriteInput {
  file_path: string;
  content: string;
}

export async function writeFileTool(input: WriteInput): Promise<string> {
  const path = safePath(input.file_path);
  mkdirSync(dirname(path), { recursive: true });
  writeAtomic(path, input.content);
  return `Wrote ${input.content.length} characters to ${input.file_path}`;
}

/** The line ending at `index`: "\r\n" or "\n" (on a last line without one, the file's). */
function lineEndAt(text: string, index: number): string {
  const newline = text.indexOf('\n', index);
  if (newline === -1) return text.includes('\r\n') ? '\r\n' : '\n';
  return text[newline - 1] === '\r' ? '\r\n' : '\n';
}

interface EditInput {
  file_path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export async function editFileTool(input: EditInput): Promise<string> {
  if (!input.old_string) throw new Error('old_string is empty; to create a file use write_file');
  if (input.old_string === input.new_string) {
    throw new Error('old_string and new_string are the same; nothing would change');
  }
  const name = input.file_path;
  const path = safePath(name);
  const bytes = await readRegularFile(path, name);
  if (!bytes) throw new Error(tooBig(name));
  if (isBinary(bytes)) throw new Error(`${name} is a binary file; edit_file edits text only`);
  // Only a file we can decode exactly can be written back unchanged outside the edit.
  const before = decodeUtf8(bytes);
  if (before === undefined) {
    const why = 'edit_file could not write it back unchanged. Use bash';
    throw new Error(`${name} is not valid UTF-8 (Latin-1, say); ${why}`);
  }
  // old_string is plain text, so escape what a regex would read as special. The model writes
  // "\n": let each newline match "\r\n" too, for Windows files and for files that mix both.
  const escaped = input.old_string.replace(/\r\n/g, '\n').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(escaped.replace(/\n/g, '\\r?\\n'), 'g');
  const count = before.match(pattern)?.length ?? 0;
  if (count === 0) {
    const hint = 'Read the file and copy the text exactly, whitespace included.';
    throw new Error(`old_string not found in ${name}. ${hint}`);
  }
  if (count > 1 && !input.replace_all) {
    const hint = 'include more surrounding lines to make it unique, or set replace_all';
    throw new Error(`old_string appears ${count} times in ${name}; ${hint}`);
  }
  // new_string gets the line ending of the text it replaces, so a CRLF line stays CRLF.
  const after = before.replace(pattern, (_match, offset: number) => {
    return input.new_string.replace(/\r?\n/g, lineEndAt(before, offset));
  });
  writeAtomic(path, after);
  // Answer with a unified diff: the model (and you) can see exactly what changed.
  const lf = (text: string) => text.replace(/\r\n/g, '\n');
  const options = { headerOptions: FILE_HEADERS_ONLY, timeout: DIFF_SECONDS * 1000 };
  const [old, now] = [lf(before), lf(after)];
  const diff = createTwoFilesPatch(name, name, old, now, undefined, undefined, options);
  if (diff === undefined) {
    const check = 'the diff took too long to compute, so read the file to check';
    return `Edited ${name} (${count} replacements); ${check}`;
  }
  // A one-word edit in a minified bundle is a diff of two 900 KB lines: cut long lines, then the
  // whole diff.
  const shown = diff.split('\n').map(cutLine).join('\n');
  if (shown === diff && diff.length <= MAX_BODY) return diff;
  const cut = `long lines to their first ${MAX_LINE} characters`;
  return `${head(shown, MAX_BODY)}\n(the edit was applied; this diff was cut to fit, ${cut})`;
}
