/**
 * What a command needs to start a job's worker before the job (./early-workers.ts): the worker
 * modules, named in one place for the job and for the early start (in the bundled command line
 * these name its bundled workers, dist/cli/NAME.js: scripts/bundle-cli.mjs), and the size from
 * which a job starts one. Imports nothing: it is loaded first thing.
 */
export const VERIFY_WORKER_URL = new URL('../verify/verify-worker.js', import.meta.url);
export const BUILD_WORKER_URL = new URL('../rollout-read/build-worker.js', import.meta.url);

/**
 * Below about this much JSONL, verify, build and export finish as fast in one thread as with a
 * worker, whose start-up (module loading, a cold JIT, a second compile) the job is too short to
 * pay back (docs/decisions/0005-worker-thresholds.md).
 */
export const WORKER_MIN_BYTES = 96 * 2 ** 20;

/**
 * From this much JSONL, in rollouts of this size or more on average, a job uses a worker that was
 * started before it (./early-workers.ts): its start was paid while this thread loaded the command.
 * Smaller rollouts make the threads take turns for the lock for each one, and a shorter job does
 * not pay for the worker's cold JIT (docs/decisions/0006-early-workers.md).
 */
export const EARLY_WORKER_MIN_BYTES = 48 * 2 ** 20;
export const EARLY_WORKER_MIN_ROLLOUT_BYTES = 128 * 2 ** 10;

/**
 * Rollouts from which inspect's summary (not --deep, whose rollouts are sized in bytes as a
 * verify's) starts worker threads (docs/decisions/0005-worker-thresholds.md).
 */
export const SUMMARY_WORKER_MIN_ROLLOUTS = 20_000;

/**
 * Threads a job uses at most, this one included, whatever the cores or TOKCAP_WORKERS say: each
 * worker is an isolate with a heap of its own, and the process's threads take one rollout lock
 * at a time (src/lock/lock-turns.ts). Not measured beyond 2 cores.
 */
export const MAX_THREADS = 8;

/** Whether a job of `bytes` of JSONL in `rollouts` rollouts is big enough for a worker started early. */
export function earlyWorkerPays(bytes: number, rollouts: number): boolean {
  return (
    bytes >= WORKER_MIN_BYTES || (bytes >= EARLY_WORKER_MIN_BYTES && bytes >= rollouts * EARLY_WORKER_MIN_ROLLOUT_BYTES)
  );
}
