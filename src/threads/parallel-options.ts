/**
 * What a caller gives a job spread over threads (src/threads/parallel-rollouts.ts): the worker
 * module, the local fallback, and how results come back. Its own module so that the job's parts
 * (the worker slot, the ordered emitter) take the options without importing the job.
 */
import type { TransferListItem } from 'node:worker_threads';

/** How many threads a job may use; the caller decides (the CLI from TOKCAP_WORKERS). */
export interface ThreadOptions {
  /**
   * Threads in all, this one included (at most MAX_THREADS). 1 (or 0) keeps the job in this
   * thread; 2 or more starts that many minus one workers whatever the job's size. Default: one
   * per core, for jobs big enough to pay for a worker.
   */
  threads?: number;
  /** Told how many worker threads a job started, before it starts them (for diagnostics). */
  onWorkers?: (workers: number, items: number) => void;
}

export interface ParallelOptions<R, Q> {
  /** The worker module (runs `serveRolloutWorker`). */
  workerUrl: URL;
  /** Passed to every worker as `workerData.shared`. */
  shared: unknown;
  /** Computes one item in this thread (also the fallback). */
  local: (id: string, index: number) => Promise<R>;
  /**
   * Workers take rollout locks themselves, in turn with this thread and each other
   * (src/lock/lock-turns.ts), instead of asking this thread for every locked copy.
   */
  workersLock?: boolean;
  /** Answers a worker's request (e.g. a copy of J under the lock), in this thread. */
  serve?: (request: Q) => Promise<{ value: unknown; transfer?: TransferListItem[] }>;
  /** Takes back memory a worker gives back when done with it (e.g. a copy of J it was sent). */
  recycle?: (memory: ArrayBuffer) => void;
  /**
   * Called with each result a worker sent, and a function that moves memory back to that worker
   * for its next results (`serveRolloutWorker`'s `reuse`), e.g. a result's bytes once written.
   */
  fromWorker?: (result: R, giveBack: (memory: ArrayBuffer) => void) => void;
  /** Called as results arrive (any order), e.g. for progress. */
  onDone?: (count: number) => void;
  /**
   * Called with each result in input order as soon as it and all before it are in; the result
   * is then not kept (the returned array has holes), so a caller that writes results out as
   * they come never holds them all. A returned promise is awaited before the next `emit`; while
   * several are pending, this thread claims no chunk and answers no worker request, so slow
   * writing holds the computing back instead of piling results up in memory.
   */
  emit?: (result: R, index: number) => void | Promise<void>;
  /**
   * Stops the work: no chunk is claimed after it fires, requests are refused, and the call
   * rejects with `signal.reason` once the workers have stopped. (So does an error thrown by
   * `emit`, with that error.)
   */
  signal?: AbortSignal;
  /** Fewer items than this: no worker. */
  minItems?: number;
  /**
   * The job's size in JSONL bytes (an estimate): below `WORKER_MIN_BYTES` no worker is started,
   * unless `threads.threads` asks for them explicitly.
   */
  estimatedBytes?: number;
  chunkSize?: number;
  /** Items of a chunk in flight at once in this thread (default 16). */
  concurrency?: number;
  threads?: ThreadOptions;
}
