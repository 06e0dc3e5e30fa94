/**
 * A job's worker thread started before the job is known: at process start, for a command that
 * will run such a job (verify-digests), while this thread loads the command line and lists the
 * directory. A worker's own start (Node's start-up in the thread, then its modules) takes ~0.15 s,
 * as long as this thread's way to the job; started with the job, it came in only for the last
 * ~40 % of a 64 MB verify (BENCHMARKS.md, "Issue 15 (session 12)" and "(session 13)").
 *
 * The worker waits, doing nothing, for its job (`serveRolloutWorker` on `{ early: true }`):
 * `mapRolloutsParallel` hands it one (`takeEarlyWorker`), or stops it when the job is too small.
 * Until then it does not keep the process alive, so a command that fails first exits as before.
 *
 * Or, when the job is known from the command line alone (`startEarlyJob`: a plain
 * `verify-digests DIR`), it starts on it at once: lists DIR itself, tells its ids, and claims
 * chunks from a counter this thread made, taking rollout locks in turn with this thread
 * (src/lock/lock-turns.ts). Its results wait here until the job adopts the worker, its counter
 * and its claims: only if the job has the same ids, chunk size and shared data (the directory may
 * have changed in between, an option the command line hid may differ); otherwise it is stopped
 * and its results dropped. Both threads start cold (~120 ms of JIT and GC each); this way the
 * worker's warm-up overlaps this thread's loading of the command line.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { lockTurnsMemory, reclaimLockTurn } from '../lock/lock-turns.js';
import { closeSync } from 'node:fs';

/** What a worker started on its job at once was given, for the job to check and adopt. */
export interface StartedJob {
  shared: unknown;
  chunkSize: number;
  counter: Int32Array;
  claims: Int32Array;
  lockTurns: SharedArrayBuffer;
  /** The ids the worker listed, in the order it claims them; null if it could not list. */
  ids: Promise<string[] | null>;
  /**
   * Called once the job has checked that the worker's job is its own: the early listeners give
   * way to `onMessage`, which first gets the messages that waited here (chunks' results), in
   * order. False if the worker has died meanwhile: the caller then stops it (`stop`).
   */
  adopt<M>(onMessage: (m: M) => void): boolean;
  /** Stops the worker (the job is not its): no chunk is claimed after this; its results are dropped. */
  stop(): Promise<void>;
}

/** A worker started early, and whether it is still alive (an exit before its job: not usable). */
interface EarlyWorker {
  worker: Worker;
  alive: boolean;
  started?: StartedJob;
}

/** Slots of a started job's claims: one per worker a job may start (at most 7). */
const MAX_WORKERS = 8;

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
  startEarly(url, threads, undefined);
}

/**
 * Starts the worker of `url` on its job at once (see the module comment): its slot-0 worker,
 * listing `shared`'s directory itself (the worker module's `listIds`) and claiming chunks of
 * `chunkSize`. Same conditions as `startEarlyWorker`.
 */
export function startEarlyJob(url: URL, job: { shared: unknown; chunkSize: number }, threads?: number): void {
  startEarly(url, threads, job);
}

function startEarly(url: URL, threads: number | undefined, job: { shared: unknown; chunkSize: number } | undefined): void {
  if ((threads ?? availableParallelism()) <= 1 || early.has(url.href)) return;
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const claims = new Int32Array(new SharedArrayBuffer(4 * MAX_WORKERS)).fill(-1);
  const lockTurns = lockTurnsMemory();
  const start = job && { shared: job.shared, chunkSize: job.chunkSize, counter, claims, slot: 0, lockTurns };
  let worker: Worker;
  try {
    worker = new Worker(url, { workerData: { early: true, start }, resourceLimits: WORKER_RESOURCE_LIMITS });
  } catch {
    return;
  }
  const entry: EarlyWorker = { worker, alive: true };
  let listed: (ids: string[] | null) => void = () => undefined;
  const messages: unknown[] = [];
  const keep = (m: { type?: string; ids?: string[] | null }) => {
    if (m.type === 'ids') listed(m.ids ?? null);
    else messages.push(m);
  };
  const died = () => {
    entry.alive = false;
    listed(null);
    // Died holding the process's lock turn (between a rollout's lock and its release): free it.
    if (start) reclaimLockTurn(lockTurns, 0, closeQuietly);
  };
  if (start) {
    entry.started = {
      ...start,
      ids: new Promise<string[] | null>((resolve) => (listed = resolve)),
      adopt: (onMessage) => {
        if (!entry.alive) return false;
        worker.off('message', keep).off('error', died).off('exit', died);
        for (const m of messages.splice(0)) onMessage(m as never);
        worker.on('message', onMessage);
        return true;
      },
      stop: async () => {
        Atomics.store(counter, 0, 2 ** 30);
        await worker.terminate();
        died();
      },
    };
    worker.on('message', keep);
  }
  worker.on('error', died);
  worker.on('exit', died);
  worker.unref();
  early.set(url.href, entry);
}

/** Closes a descriptor a dead worker had locked (closing it unlocks it); already closed is fine. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** Whether a worker of `url` was started early and waits for its job. */
export function earlyWorkerWaiting(url: URL): boolean {
  return early.get(url.href)?.alive === true;
}

/**
 * The waiting worker of `url` (once), alive and counted by the process again, or undefined.
 * The caller gives it its job with `giveEarlyJob` or stops it; one started on its job comes with
 * `started`, which the caller adopts or stops.
 */
export function takeEarlyWorker(url: URL): { worker: Worker; started?: StartedJob } | undefined {
  const entry = early.get(url.href);
  early.delete(url.href);
  if (entry === undefined) return undefined;
  if (!entry.alive) return undefined;
  entry.worker.ref();
  return { worker: entry.worker, started: entry.started };
}

/** What an early worker waits for: the `workerData` a worker started with its job would have had. */
export function giveEarlyJob(worker: Worker, data: unknown): void {
  worker.postMessage({ type: 'job', data });
}

/** Whether `workerData` says the worker was started early (and waits for its job). */
export function startedEarly<S>(data: unknown): data is { early: true; start?: S } {
  return typeof data === 'object' && data !== null && (data as { early?: unknown }).early === true;
}
