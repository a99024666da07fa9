import { beforeAll } from 'vitest';

/**
 * One chapter run shared by the tests of a describe block: `const r = shared(() => runChapter(…))`,
 * then `r().stdout` in each test. Several checks, one subprocess.
 */
export function shared<T>(run: () => Promise<T>): () => T {
  let result: T;
  beforeAll(async () => {
    result = await run();
  });
  return () => result;
}

/**
 * A run made once, on first use, for the tests that start from what it left (a session to resume,
 * say): `const made = once(() => runChapter(…))`, then `await made()` in each. Unlike `shared`, it
 * costs nothing where no test that uses it runs.
 */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}
