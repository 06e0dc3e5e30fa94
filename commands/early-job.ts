/**
 * A job's worker thread started at process start, before commander and the command's modules
 * load (~0.1-0.2 s of this thread): the job takes it, or stops it (src/threads/early-workers.ts).
 *
 * verify-digests' worker, when its job is plainly big enough for one: DIR plain to see without the
 * option table (./plain-dir.ts), and its first entries already holding the JSONL from which the
 * job uses a worker started early (`earlyWorkerPays`). build's only when TOKCAP_WORKERS asks for workers: by default its job starts
 * one from `WORKER_MIN_BYTES`, as before (at 64 MB its two threads cost 1.45x the CPU of one, and
 * whether they pay on a free core is for a quiet run to say). With TOKCAP_WORKERS=2 or more, every
 * such job starts its worker early, whatever the size, as the job does; TOKCAP_WORKERS=1 none.
 *
 * A plain `verify-digests DIR` (no ids, no --shard, no --lock-wait: the job is every rollout of
 * DIR with the default lock wait) is known before the command line is parsed: its worker starts
 * verifying at once (`startWorkerOnJob`), warm and ~100 ms into the work when this thread's part of
 * the job starts. The job adopts it only if it turns out to be the same job (same ids, same
 * store options); else it stops it (src/threads/parallel-rollouts.ts).
 */
import { firstJsonlSizes } from '../src/layout/estimate-size.js';
import { plainDir } from './plain-dir.js';
import { startEarlyJob as startWorkerOnJob, startEarlyWorker } from '../src/threads/early-workers.js';
import { BUILD_WORKER_URL, earlyWorkerPays, VERIFY_CHUNK_SIZE, VERIFY_WORKER_URL } from '../src/threads/job-workers.js';
import { DEFAULT_LOCK_WAIT_MS } from '../src/ops/store.js';

/**
 * Each command's worker module and, if it starts one early by default, its options that take no
 * separate value and leave the job every rollout of DIR (`--color=…`, `--lock-wait=…`: one word).
 */
const EARLY_JOBS: Record<string, { url: URL; plain?: RegExp }> = {
  'verify-digests': { url: VERIFY_WORKER_URL, plain: /^(?:-q|--quiet|--strict|--json|--no-color|--color=.*|--lock-wait=.*)$/ },
  build: { url: BUILD_WORKER_URL },
};

/** verify-digests' options that change only what is printed: with them, the job is known from DIR. */
const VERIFY_OUTPUT_ONLY = /^(?:-q|--quiet|--strict|--json|--no-color|--color=.*)$/;

/** TOKCAP_WORKERS: threads in all when it is a whole number, else undefined (each job decides). */
export function threadsFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const workers = env.TOKCAP_WORKERS;
  return workers !== undefined && /^\d+$/.test(workers) ? Number(workers) : undefined;
}

/** `args`: the words after the command. */
export function startEarlyJob(command: string, args: readonly string[], env: NodeJS.ProcessEnv): void {
  const job = EARLY_JOBS[command];
  if (job === undefined) return;
  const threads = threadsFromEnv(env);
  if (threads !== undefined && threads < 2) return;
  // The store options `storeOf` makes for a plain verify (commands/shared.ts), in the same key
  // order: the job compares them.
  const verifyDir = command === 'verify-digests' ? plainDir(args, env, VERIFY_OUTPUT_ONLY) : undefined;
  const onJob = verifyDir === undefined ? undefined : { shared: { dir: verifyDir, lockWaitMs: DEFAULT_LOCK_WAIT_MS }, chunkSize: VERIFY_CHUNK_SIZE };
  // Workers asked for: whatever the size, as the job does.
  if (threads !== undefined) {
    if (onJob) startWorkerOnJob(job.url, onJob, threads);
    else startEarlyWorker(job.url, threads);
    return;
  }
  if (job.plain === undefined) return;
  const dir = plainDir(args, env, job.plain);
  if (dir === undefined) return;
  const seen = firstJsonlSizes(dir);
  if (!earlyWorkerPays(seen.bytes, seen.files)) return;
  if (onJob) startWorkerOnJob(job.url, onJob);
  else startEarlyWorker(job.url);
}
