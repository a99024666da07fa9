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
