import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // One TMPDIR for the whole run, removed at its end: nothing a test makes lands in the shared /tmp.
    globalSetup: ['tests/helpers/global-setup.ts'],
    setupFiles: ['tests/helpers/setup.ts'],
    // Tests mostly wait on chapter subprocesses, so use both cores even on a two-core machine
    // (the default leaves one core for the main thread).
    maxWorkers: 2,
    // Test files share their worker instead of each starting a fresh one: about 12 CPU-s less with six
    // chapters. Nothing a test file sets is left for the next (the one test that sets process.env
    // restores it; chapters run as subprocesses with an environment of their own).
    isolate: false,
    // Chapters run as subprocesses; give each test room, but nothing here should come close, not even
    // with other work holding both cores (a run that hangs is killed at 60 s: see run-chapter.ts).
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
