/**
 * The inspector reads a trace without trusting it: any line may hold anything (a run killed
 * mid-write, a faulty endpoint's reply, a hand-edited file). The three readers every part of
 * the page uses on its values.
 */

export const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const finite = (value: unknown): value is number => Number.isFinite(value);

/**
 * Any value of a trace as text. String() throws on an object whose toString is not a function
 * ({"toString":1}: a faulty endpoint's error type, say), and so does `${…}`: an object is shown
 * as its JSON instead.
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}
