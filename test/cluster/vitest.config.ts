import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the job scripts of docs/cluster.md on a real one-node Slurm, which the
 * npm script starts first (scripts/start-slurm.sh: root and apt). Not in `npm test`, which needs
 * no scheduler; CI runs both.
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/cluster/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
