/**
 * The terminal rules every chapter follows (s01–s06; shared runtime, not a chapter's mechanism).
 *
 * The model's answer goes to stdout; everything about the run (banner, tool calls, token counts,
 * errors) goes to stderr, so `code.ts -p "…" > answer.txt` keeps just the answer. Colour only on a
 * terminal, and never when NO_COLOR is set (https://no-color.org).
 */
const COLOR = process.stderr.isTTY && !process.env.NO_COLOR;

export const DIM = 2;
export const YELLOW = 33;
export const MAGENTA = 35;
export const CYAN = 36;

/** `text` in a colour on a terminal; plain everywhere else. */
export function paint(color: number, text: string): string {
  return COLOR ? `\x1b[${color}m${text}\x1b[0m` : text;
}
