/**
 * What a command needs to start a job's worker before the job (./early-workers.ts): the worker
 * modules, named in one place for the job and for the early start (in the bundled command line
 * these name its bundled workers, dist/cli/NAME.js: scripts/bundle-cli.mjs), and the size from
 * which a job starts one. Imports nothing: it is loaded first thing.
 */
export const VERIFY_WORKER_URL = new URL('../verify/verify-worker.js', import.meta.url);
export const BUILD_WORKER_URL = new URL('../build/build-worker.js', import.meta.url);

/**
 * Below about this much JSONL, verify, build and export finish as fast in one thread as with a
 * worker, whose start-up (module loading, a cold JIT) the job is too short to pay back
 * (measured on 2 cores: 65 MB even, 260 MB 1.3x faster with a worker; session 12, after the
 * lock turn's fix and the bundled workers, under load 6-10: two threads 0.8-0.9x one at 65 MB,
 * 0.7x at 5,000 rollouts of 6 KB; BENCHMARKS.md, "Issue 15 (session 12)").
 */
export const WORKER_MIN_BYTES = 96 * 2 ** 20;

/**
 * From this much JSONL, in rollouts of this size or more on average, a job uses a worker that was
 * started before it (./early-workers.ts): its start was paid while this thread loaded the command.
 * Measured on 2 cores, verify-digests, two threads (the worker started early) against one
 * (session 13, BENCHMARKS.md, "Issue 15 (session 13)"): 64 MB in 200 rollouts of 320 KB 0.96x
 * the wall time even under load 4-5, where no core is free; 17 MB in 200 rollouts, 43 MB in
 * 5,000 and 62 MB in 1,750 (25-36 KB each) 1.2-1.5x, slower: small rollouts make the threads take
 * turns for the lock for each one, and the job is too short to pay for the worker's cold JIT.
 */
export const EARLY_WORKER_MIN_BYTES = 48 * 2 ** 20;
export const EARLY_WORKER_MIN_ROLLOUT_BYTES = 128 * 2 ** 10;

/** Whether a job of `bytes` of JSONL in `rollouts` rollouts is big enough for a worker started early. */
export function earlyWorkerPays(bytes: number, rollouts: number): boolean {
  return bytes >= WORKER_MIN_BYTES || (bytes >= EARLY_WORKER_MIN_BYTES && bytes >= rollouts * EARLY_WORKER_MIN_ROLLOUT_BYTES);
}
