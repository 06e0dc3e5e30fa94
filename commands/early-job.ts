/**
 * A job's worker thread started at process start, before commander and the command's modules
 * load (~0.1-0.2 s of this thread): the job takes it, or stops it (src/threads/early-workers.ts).
 *
 * verify-digests' worker, when its job is plainly big enough for one: DIR plain to see without the
 * option table (./plain-dir.ts), and its first entries already holding the JSONL from which the
 * job uses a worker started early (`earlyWorkerPays`). build's only when TOKCAP_WORKERS asks for
 * workers: by default its job starts one from `WORKER_MIN_BYTES` (at 64 MB its two threads cost
 * 1.45x the CPU of one; docs/decisions/0006-early-workers.md). With TOKCAP_WORKERS=2 or more,
 * every such job starts its worker early, whatever the size, as the job does; TOKCAP_WORKERS=1 none.
 */
import { firstJsonlSizes } from '../src/layout/estimate-size.js';
import { plainDir } from './plain-dir.js';
import { startEarlyWorker } from '../src/threads/early-workers.js';
import { BUILD_WORKER_URL, earlyWorkerPays, VERIFY_WORKER_URL } from '../src/threads/job-workers.js';

/**
 * Each command's worker module and, if it starts one early by default, its options that take no
 * separate value and leave the job every rollout of DIR (`--color=…`, `--lock-wait=…`: one word).
 */
const EARLY_JOBS: Record<string, { url: URL; plain?: RegExp }> = {
  'verify-digests': { url: VERIFY_WORKER_URL, plain: /^(?:-q|--quiet|--strict|--json|--no-color|--color=.*|--lock-wait=.*)$/ },
  build: { url: BUILD_WORKER_URL },
};

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
  if (threads !== undefined) {
    if (threads >= 2) startEarlyWorker(job.url, threads);
    return;
  }
  if (job.plain === undefined) return;
  const dir = plainDir(args, env, job.plain);
  if (dir === undefined) return;
  const seen = firstJsonlSizes(dir);
  if (earlyWorkerPays(seen.bytes, seen.files)) startEarlyWorker(job.url);
}
