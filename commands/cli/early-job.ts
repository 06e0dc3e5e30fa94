/**
 * A job's worker thread started at process start, before commander and the command's modules
 * load (~0.1-0.2 s of this thread): the job takes it, or stops it (src/threads/early-workers.ts).
 *
 * verify-digests' worker, when its job is plainly big enough for one: DIR plain to see in the
 * plan (./plan.ts), and its first entries already holding the JSONL from which the job uses a
 * worker started early (`earlyWorkerPays`). build's only when TOKCAP_WORKERS asks for workers: by
 * default its job starts one from `WORKER_MIN_BYTES` (at 64 MB its two threads cost 1.45x the CPU
 * of one; docs/decisions/0006-early-workers.md). With TOKCAP_WORKERS=2 or more, every such job
 * starts its worker early, whatever the size, as the job does; TOKCAP_WORKERS=1 none.
 */
import { firstJsonlSizes } from '../../src/layout/estimate-size.js';
import { plainDir, type Plan } from './plan.js';
import type { Settings } from './settings.js';
import type { GlobalOptions, VerifyDigestsCommandOptions } from './options.js';
import { startEarlyWorker } from '../../src/threads/early-workers.js';
import { BUILD_WORKER_URL, earlyWorkerPays, VERIFY_WORKER_URL } from '../../src/threads/job-workers.js';

/** verify-digests' options that leave its job every rollout of DIR. */
const VERIFY_KEEPS: readonly (keyof (GlobalOptions & VerifyDigestsCommandOptions))[] = [
  'quiet',
  'strict',
  'json',
  'color',
  'lockWait',
];

/**
 * Each command's worker module and, if it starts one early by default, the options that leave
 * its job what the early start assumes.
 */
const EARLY_JOBS: Record<string, { url: URL; keeps?: readonly string[] }> = {
  'verify-digests': { url: VERIFY_WORKER_URL, keeps: VERIFY_KEEPS },
  build: { url: BUILD_WORKER_URL },
};

export function startEarlyJob(plan: Plan, settings: Settings): void {
  const job = plan.command === undefined ? undefined : EARLY_JOBS[plan.command];
  if (job === undefined) return;
  if (settings.threads !== undefined) {
    if (settings.threads >= 2) startEarlyWorker(job.url, settings.threads);
    return;
  }
  if (job.keeps === undefined) return;
  const dir = plainDir(plan, settings, job.keeps);
  if (dir === undefined) return;
  const seen = firstJsonlSizes(dir);
  if (earlyWorkerPays(seen.bytes, seen.files)) startEarlyWorker(job.url);
}
