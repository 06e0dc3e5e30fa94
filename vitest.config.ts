import { defineConfig } from 'vitest/config';

/**
 * Suites that assert on timing (a lock wait, a writer's latency, a key-to-frame, a run's length):
 * they run last, one file at a time, as every file did before, so that no other file competes
 * with them for the CPU.
 */
const TIMED = [
  'test/src/lock/**/*.test.ts',
  'test/reliability/lock-discipline.test.ts',
  'test/reliability/concurrent-writers.test.ts',
  'test/commands/export/interrupt.test.ts',
  // How many results a dead worker's chunk holds back depends on how soon its exit is seen.
  'test/src/threads/parallel-rollouts-workers.test.ts',
];

export default defineConfig({
  test: {
    exclude: ['test/torture/**', 'test/cluster/**', 'node_modules/**', 'dist/**'],
    testTimeout: 30000,
    hookTimeout: 30000,
    pool: 'forks',
    globalSetup: ['test/support/python-on-path.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'tokcap',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: ['test/torture/**', 'test/cluster/**', 'node_modules/**', 'dist/**', ...TIMED],
          // Two files at a time even on two cores (vitest's default there is one): most files
          // wait on the processes they spawn (the binary, python3), leaving the other core idle.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timed',
          include: TIMED,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
