/**
 * A job's worker thread started before the job is known: at process start, for a command that
 * will run such a job (verify-digests), while this thread loads the command line and lists the
 * directory. A worker's own start (Node's start-up in the thread, then its modules) takes ~0.15 s,
 * as long as this thread's way to the job; started with the job, it came in only for the last
 * ~40 % of a 64 MB verify (docs/decisions/0006-early-workers.md).
 *
 * The worker waits, doing nothing, for its job (`serveRolloutWorker` on `{ early: true }`):
 * `mapRolloutsParallel` hands it one (`takeEarlyWorker`), or stops it when the job is too small.
 * Until then it does not keep the process alive, so a command that fails first exits at once.
 */
import { availableParallelism } from 'node:os';
import { Worker, type TransferListItem } from 'node:worker_threads';

/** A worker started early, and whether it is still alive (an exit before its job: not usable). */
interface EarlyWorker {
  worker: Worker;
  alive: boolean;
}

const early = new Map<string, EarlyWorker>();

/**
 * Options every rollout worker is made with. A smaller young generation than V8's default: each
 * worker is a whole heap, and its default nursery alone adds tens of MB of peak RSS at no
 * measurable speed gain.
 */
export const WORKER_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 8 };

/**
 * Starts the worker of `url`, to wait for a job (once per module: a second call does nothing);
 * none if the job may use one thread only (`threads`, as in `ThreadOptions`, or one core).
 */
export function startEarlyWorker(url: URL, threads?: number): void {
  if ((threads ?? availableParallelism()) <= 1 || early.has(url.href)) return;
  let worker: Worker;
  try {
    worker = new Worker(url, { workerData: { early: true }, resourceLimits: WORKER_RESOURCE_LIMITS });
  } catch {
    return;
  }
  const entry: EarlyWorker = { worker, alive: true };
  worker.on('error', () => (entry.alive = false));
  worker.on('exit', () => (entry.alive = false));
  worker.unref();
  early.set(url.href, entry);
}

/** Whether a worker of `url` was started early and waits for its job. */
export function earlyWorkerWaiting(url: URL): boolean {
  return early.get(url.href)?.alive === true;
}

/**
 * The waiting worker of `url` (once), alive and counted by the process again, or undefined.
 * The caller gives it its job with `giveEarlyJob` or stops it.
 */
export function takeEarlyWorker(url: URL): Worker | undefined {
  const entry = early.get(url.href);
  early.delete(url.href);
  if (entry === undefined) return undefined;
  if (!entry.alive) return undefined;
  entry.worker.ref();
  return entry.worker;
}

/** What an early worker waits for: the `workerData` a worker started with its job would have had. */
export function giveEarlyJob(worker: Worker, data: unknown, transfer: readonly TransferListItem[] = []): void {
  worker.postMessage({ type: 'job', data }, transfer);
}

/** Whether `workerData` says the worker was started early (and waits for its job). */
export function startedEarly(data: unknown): data is { early: true } {
  return typeof data === 'object' && data !== null && (data as { early?: unknown }).early === true;
}
