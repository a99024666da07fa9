/**
 * The terminal rules every chapter follows (s01–s06; shared runtime, not a chapter's mechanism).
 *
 * The model's answer goes to stdout; everything about the run (banner, tool calls, token counts,
 * errors) goes to stderr, so `code.ts -p "…" > answer.txt` keeps just the answer. Colour only on a
 * terminal, and never when NO_COLOR is set (https://no-color.org).
 */
const COLOR = process.stderr.isTTY && !process.env.NO_COLOR;
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g; // C0 but tab and newline, DEL, C1
export const DIM = 2;
export const YELLOW = 33;
export const MAGENTA = 35;
export const CYAN = 36;

/** `text` in a colour on a terminal, else plain; its control characters as escapes (`\x1b`). */
export function paint(color: number, text: string): string {
  const shown = text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return COLOR ? `\x1b[${color}m${shown}\x1b[0m` : shown;
}
