/**
 * How the fake says no, for every section of it: a Refusal carries the status and message the
 * real API would answer with (the server sends it in the API's error envelope), and the two
 * readers every check of a request uses.
 */

export const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export class Refusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}
export const bad = (message: string) => new Refusal(400, message);

export const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The content of one message as blocks (a string is one text block). */
export function blocksOf(content: unknown): any[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content as any[]);
}
