/**
 * verify-digests' worker thread, started at process start, before commander and the command's
 * modules load (~0.1-0.2 s of this thread), when its job is plainly big enough for one: the job
 * takes it, or stops it (src/threads/early-workers.ts). Only when DIR is plain to see without the
 * option table (one positional, or none and $TOKCAP_DIR; no option that takes a separate value)
 * and its first entries already hold the JSONL bytes from which the job uses an early worker
 * (`earlyWorkerPays`); or whatever the size with TOKCAP_WORKERS=2 or more, as the job does.
 * TOKCAP_WORKERS=1 starts none. Otherwise the job starts its worker itself, as it did before.
 */
import { firstJsonlSizes } from '../src/layout/estimate-size.js';
import { startEarlyWorker } from '../src/threads/early-workers.js';
import { earlyWorkerPays, VERIFY_WORKER_URL } from '../src/threads/job-workers.js';

/** Options of verify-digests that take no separate value (`--color=…`, `--lock-wait=…`: one word). */
const PLAIN = /^(?:-q|--quiet|--strict|--json|--no-color|--color=.*|--lock-wait=.*|--shard=.*)$/;

/** TOKCAP_WORKERS: threads in all when it is a whole number, else undefined (each job decides). */
export function threadsFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const workers = env.TOKCAP_WORKERS;
  return workers !== undefined && /^\d+$/.test(workers) ? Number(workers) : undefined;
}

/** `args`: the words after `verify-digests`. */
export function startEarlyJob(args: readonly string[], env: NodeJS.ProcessEnv): void {
  const threads = threadsFromEnv(env);
  if (threads !== undefined) {
    if (threads >= 2) startEarlyWorker(VERIFY_WORKER_URL, threads);
    return;
  }
  const positionals: string[] = [];
  for (const a of args) {
    if (a.startsWith('-') && a !== '-') {
      if (!PLAIN.test(a)) return;
    } else positionals.push(a);
  }
  const dir = positionals.length === 1 ? positionals[0] : positionals.length === 0 ? env.TOKCAP_DIR : undefined;
  if (dir === undefined || dir === '') return;
  const seen = firstJsonlSizes(dir);
  if (earlyWorkerPays(seen.bytes, seen.files)) startEarlyWorker(VERIFY_WORKER_URL);
}
