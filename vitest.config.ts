import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    exclude: ['test/torture/**', 'test/cluster/**', 'node_modules/**', 'dist/**'],
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // A timeout ends a test that hangs; it never judges speed. On a machine whose two cores are
    // shared with other work, a property test of a few seconds can take a minute.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two files at a time even on two cores (vitest's default there is one): most files wait on
    // the processes they spawn (the binary, python3), leaving the other core idle.
    maxWorkers: 2,
    globalSetup: ['test/support/python-on-path.ts'],
  },
});
