/**
 * Writing HTML: escaping (nothing from a trace may become markup) and the formats of numbers,
 * dollars, times and dates that the header, the chart and the list share.
 */
import type { Row } from './replay.ts';
import { textOf } from './untrusted.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
};
/** Text as HTML text or an attribute value: nothing in it can open a tag or end a quote. */
export const escapeHtml = (text: unknown) => textOf(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * JSON that can sit inside <script type="application/json">: a `</script>` or `<!--` in any text
 * would end the data island or change how the HTML parser reads it, so no `<` appears raw. U+2028
 * and U+2029 are escaped too, for any tool that still reads the JSON as JavaScript.
 */
export function jsonForScript(json: string): string {
  const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(4, '0');
  return json.replace(/[<\u2028\u2029]/g, (c) => `\\u${hex(c)}`);
}

export const number = (n: number) => n.toLocaleString('en-US');
export const dollars = (value: number | undefined) =>
  value === undefined ? '—' : `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`;
export const seconds = (ms: number | null) =>
  ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
export const inputOf = (u: NonNullable<Row['usage']>) => u.read + u.written + u.uncached;

/** A span of time: `4.2 s`, or minutes and seconds (`12:05`) past a minute. */
export function duration(ms: number): string {
  if (ms < 60_000) return seconds(ms);
  const whole = Math.floor(ms / 1000);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

export function when(iso: string | undefined): string {
  if (!iso || Number.isNaN(Date.parse(iso))) return 'an unknown time';
  return `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
