/**
 * Cutting text to a length without cutting a character in half (s01–s06; shared runtime, not a
 * chapter's mechanism).
 *
 * A JavaScript string counts UTF-16 code units, and an emoji takes two: a surrogate pair. A cut
 * between the two leaves half a character, which the real API refuses ("The request body is not
 * valid JSON: no low surrogate in string"), and from s04 on the bad text is in the session log for
 * good. So every fixed-length cut goes through here.
 */

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** The first `n` code units of `text`, or one fewer where the nth is the first half of a pair. */
export function head(text: string, n: number): string {
  if (text.length <= n) return text;
  return isHighSurrogate(text.charCodeAt(n - 1)) ? text.slice(0, n - 1) : text.slice(0, n);
}

/** The last `n` code units of `text`, or one fewer where the first is the second half of a pair. */
export function tail(text: string, n: number): string {
  if (text.length <= n) return text;
  const start = text.length - n;
  return isHighSurrogate(text.charCodeAt(start - 1)) ? text.slice(start + 1) : text.slice(start);
}

/** `text` at most `max` code units long: its head and its tail, and a line saying what was cut. */
export function keepEnds(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = `\n… (${text.length - max} characters cut) …\n`;
  return head(text, max / 2) + cut + tail(text, max / 2);
}
