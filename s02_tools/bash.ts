/**
 * The bash tool (s01, in code.ts there) and, new in s02, the gate in front of it: commands that
 * can wreck a machine are refused before they run.
 */
import os from 'node:os';
import { runCommand } from '../shared/processes.ts';
import { keepEnds } from '../shared/text.ts';
import { WORKDIR } from './workspace.ts';

const MAX_OUTPUT = 20_000; // characters; a `cat` of a huge log must not flood the context
export const TIMEOUT = 120; // seconds a command may run, unless the model asks for more

// A blocklist is a speed bump, not a sandbox: `find / -delete` walks straight past it. Real
// isolation is a container or a VM.
// Where a command word starts: after a separator, maybe behind sudo, time, env X=1 …, maybe with
// its folder. So `mkfs` is found in `time mkfs`, `x && /sbin/mkfs.ext4` and `| sudo mkfs`, but not
// in `man mkfs`.
const CMD =
  String.raw`(?:^|[;&|({\x60\n])\s*` + // the start, or after ; & | ( { ` or a newline
  String.raw`(?:(?:sudo|doas|time|nice|nohup|exec|command|env|xargs)(?:\s+-\S+)*\s+|\w+=\S*\s+)*` +
  String.raw`(?:[^\s;&|()\x60]*\/)?`; // /sbin/ in /sbin/mkfs
// What a recursive rm must never be given: /, a top-level system folder, the home folder (~, $HOME,
// or its path written out) or anyone's (~alice, /home/alice), with or without /*, and with any /.
// or /.. after it (~/. is the home folder too).
const SYSTEM_DIRS =
  String.raw`bin|boot|dev|etc|home|lib\w*|media|mnt|opt|proc|root|run|sbin|snap|srv|sys|tmp|usr` +
  String.raw`|var|Applications|Library|System|Users|Volumes|private`; // Linux, then macOS
const HOME = os.homedir().replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); // as a regex
const HOMES =
  String.raw`~[\w.-]*|\$HOME|\$\{HOME\}|\/(?:home|Users)\/[^\s/;&|)]+` + (HOME && `|${HOME}`);
// Each /. or /.. must end where a slash or the argument does, so a run of dots is read one way
// only: `~/....x` is rejected at once, not after trying every way to split the dots.
const ROOTS =
  String.raw`(?:${HOMES}|\/(?:${SYSTEM_DIRS})?)(?:\/*\.\.?(?=[\/\s;&|)*]|$))*\/*\*?(?=[\s;&|)]|$)`;
// Disks and partitions, not /dev/null.
const DISK = String.raw`\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|r?disk|mapper\/)`;
// sh, bash, /bin/bash …
const SHELL = String.raw`(?:sudo\s+(?:-\S+\s+)*)?(?:[^\s;&|()\x60]*\/)?(?:ba|da|k|z)?sh\b`;
// python3, perl, ruby, node: given no script (nothing, flags, or -) they run what is piped in.
// So `curl … | python3` runs the download; `curl … | python3 -m json.tool` only prints it.
const RUNTIME = String.raw`(?:sudo\s+)?(?:[^\s;&|()\x60]*\/)?(?:python[\d.]*|perl|ruby|node)`;
const NO_SCRIPT = String.raw`(?:\s+-\S*)*\s*(?=[;&|)\n]|$)`;
// The rest of one simple command, up to where the next one may start.
const ARGS = String.raw`[^;&|\n(){}\x60]*`;

const DANGEROUS: [RegExp, string][] = [
  // -r, -R, -rf … or --recursive anywhere, and a dangerous target as ANY argument (`rm -rf x ~`).
  [
    new RegExp(String.raw`${CMD}rm(?=${ARGS}\s(?:-[a-zA-Z]*[rR]|--recursive))${ARGS}\s${ROOTS}`),
    'recursive delete of /, the home folder or a system folder',
  ],
  [
    new RegExp(String.raw`${CMD}(?:mkfs(?:\.\w+)?|mke2fs|wipefs)(?=\s|$)`),
    'formatting or wiping a file system (mkfs, mke2fs, wipefs)',
  ],
  // dd of=/dev/sda and > /dev/sda; tee or shred given a disk; cp with a disk as its target (last).
  [
    new RegExp(
      String.raw`${CMD}dd\s${ARGS}\bof=${DISK}|>\s*${DISK}` +
        String.raw`|${CMD}(?:tee|shred)(?=\s)${ARGS}\s${DISK}` +
        String.raw`|${CMD}cp\s${ARGS}\s${DISK}[^\s;&|)]*\s*(?=[;&|)\n]|$)`,
    ),
    'raw write to a disk',
  ],
  // name(){ name|name& };name — the classic is called ":", but any name works.
  [/(?<![\w:.-])([\w:.-]+)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&/, 'fork bomb'],
  // curl … | bash, and the forms without a pipe: bash <(curl …) and bash -c "$(curl …)"; the same
  // with python3 and the like.
  [
    new RegExp(
      String.raw`\b(?:curl|wget)\b.*\|\s*(?:${SHELL}|${RUNTIME}${NO_SCRIPT})` + // curl … | sh
        // sh <(curl …), sh -c "$(curl …)"
        String.raw`|${CMD}(?:${SHELL}|${RUNTIME})\s+(?:-\S+\s+)*` +
        String.raw`\(?(?:<\(|\$\()\s*(?:curl|wget)\b`,
    ),
    'piping a download into a shell',
  ],
];

/**
 * The command as the gate reads it. Quoted text is usually a message (git commit -m "…", echo
 * "…"), so it is blanked out and its words are not taken for commands. Kept, minus the quotes: a
 * quoted single word ("$HOME" is still an argument), text with $(…) or backticks (the shell runs
 * those), and the script after -c (bash -c '…' runs it), which is kept as a subshell (…).
 */
function unquote(command: string): string {
  const quoted = /(-c\s+)?(?:"((?:[^"\\]|\\.)*)"|'([^']*)')/g;
  return command.replace(quoted, (_, dashC, double, single) => {
    const inner: string = double ?? single;
    if (dashC) return `${dashC}(${inner})`;
    return /\s/.test(inner) && !/\$\(|`/.test(inner) ? '""' : inner;
  });
}

// s01: always TIMEOUT → s02: the model may ask for more time, and the gate comes first.
export async function runBash(command: string, timeout = TIMEOUT): Promise<string> {
  const danger = DANGEROUS.find(([pattern]) => pattern.test(unquote(command)));
  if (danger) throw new Error(`refused: ${danger[1]}. Do this by hand if it is really wanted.`);
  const { output, status } = await runCommand(command, { cwd: WORKDIR, timeoutSeconds: timeout });
  // Keep the head and the tail (errors and summaries tend to be at the ends), each cut between
  // characters: half an emoji is text the API refuses (shared/text.ts).
  const shown = keepEnds(output, MAX_OUTPUT);
  // trimEnd, not trim: the first line's indentation can matter (`cat -n` pads its numbers).
  return `${shown.trimEnd() || '(no output)'}\n[${status}]`;
}
