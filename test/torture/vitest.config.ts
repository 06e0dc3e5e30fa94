import { defineConfig } from 'vitest/config';

/**
 * `npm run torture`: the reliability suites (test/reliability/**) in their long form. The suites
 * read TOKCAP_TORTURE=1 (set by the npm script) and pick the long durations and iteration counts:
 * concurrent writers 10 minutes, 1,000 SIGKILLs, a 100 MB line, a 60 s writer-latency run.
 * TOKCAP_TORTURE_SCALE=0.1 shortens every long value tenfold; TOKCAP_SEED=N replays a run.
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/reliability/**/*.test.ts', 'test/torture/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    testTimeout: 3_600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    globalSetup: ['test/support/python-on-path.ts'],
    // One suite at a time: they measure timing and compete for the same CPUs.
    fileParallelism: false,
  },
});
