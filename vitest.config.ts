import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    setupFiles: ['tests/helpers/setup.ts'],
    // Chapters run as subprocesses; give each test room, but nothing here should come close.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
