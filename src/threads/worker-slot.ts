/**
 * One worker thread of a job (./parallel-rollouts.ts): started (or taken from an early start),
 * its results put in order, its requests answered, and what it leaves behind when it stops or
 * dies (the chunk it held, a lock turn) handed back to the job.
 */
import { closeSync } from 'node:fs';
import { MessageChannel, Worker } from 'node:worker_threads';
import { reclaimLockTurn } from '../lock/lock-turns.js';
import { giveEarlyJob, WORKER_RESOURCE_LIMITS } from './early-workers.js';
import type { OrderedEmitter } from './ordered-emitter.js';
import type { ParallelOptions } from './parallel-options.js';
import { replyToWorker, type ThreadGive, type ThreadRequest } from './thread-requests.js';

type FromWorker =
  | { type: 'chunk'; chunk: number; results: unknown[]; redo: number[] }
  | { type: 'chunk_failed'; chunk: number }
  | ThreadRequest
  | ThreadGive
  | { type: 'done' };

/** What the job shares with each of its worker slots. */
export interface SlotJob<R, Q> {
  readonly options: ParallelOptions<R, Q>;
  readonly ids: readonly string[];
  readonly chunkSize: number;
  /** The next chunk to claim (shared with the workers). */
  readonly counter: Int32Array;
  /** The chunk each worker is computing (-1: none). */
  readonly claims: Int32Array;
  /** 1 once a chunk's results are in or being computed in the job's thread. */
  readonly returned: Uint8Array;
  /** Chunks a worker claimed and will not return: the job's thread computes them. */
  readonly orphans: number[];
  /** Items a worker could not compute: the job's thread computes them. */
  readonly redo: number[];
  readonly lockTurns: SharedArrayBuffer | undefined;
  readonly out: OrderedEmitter<R>;
}

/** Resolves once worker `slot` has stopped, whatever its end; never rejects. */
export function runWorkerSlot<R, Q>(job: SlotJob<R, Q>, slot: number, early: Worker | undefined): Promise<void> {
  const { options, returned, orphans, out } = job;
  return new Promise<void>((resolve) => {
    let worker: Worker;
    // Memory moved back to the worker: it takes it without turning its event loop.
    const memory = options.fromWorker ? new MessageChannel() : undefined;
    const giveBack = (m: ArrayBuffer) => {
      try {
        memory?.port1.postMessage(m, [m]);
      } catch {
        // detached, or the worker has stopped: nothing to give
      }
    };
    const { ids, chunkSize, counter, claims, lockTurns } = job;
    const workerData = {
      shared: options.shared,
      ids,
      chunkSize,
      counter,
      claims,
      slot,
      lockTurns,
      memoryPort: memory?.port2,
    };
    const transferList = memory ? [memory.port2] : [];
    try {
      if (early) {
        worker = early;
        giveEarlyJob(worker, workerData, transferList);
      } else
        worker = new Worker(options.workerUrl, { workerData, transferList, resourceLimits: WORKER_RESOURCE_LIMITS });
    } catch {
      memory?.port1.close();
      resolve();
      return;
    }
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      memory?.port1.close();
      // Died between taking a lock and releasing it: closing its descriptor unlocks it.
      if (lockTurns) {
        reclaimLockTurn(lockTurns, slot, (fd) => {
          try {
            closeSync(fd);
          } catch {
            // already closed
          }
        });
      }
      // Stopped without saying it was done (it died): its chunk is an orphan.
      const c = Atomics.load(claims, slot);
      if (c >= 0 && !returned[c]) orphans.push(c);
      resolve();
    };
    worker.on('message', (m: FromWorker) => {
      if (m.type === 'chunk_failed') {
        if (!returned[m.chunk]) orphans.push(m.chunk);
      } else if (m.type === 'chunk') {
        // Already computed in the job's thread (taken for an orphan before this message came): ignore.
        if (returned[m.chunk]) return;
        const base = m.chunk * chunkSize;
        returned[m.chunk] = 1;
        const again = new Set(m.redo);
        for (const k of m.redo) job.redo.push(base + k);
        m.results.forEach((r, k) => {
          if (again.has(k)) return;
          options.fromWorker?.(r as R, giveBack);
          out.put(base + k, r as R);
        });
        options.onDone?.(m.results.length - m.redo.length);
      } else if (m.type === 'request') {
        const serve = options.serve;
        const answer = Promise.resolve(out.drained()).then(() =>
          out.stopped()
            ? Promise.reject(new Error('stopped'))
            : serve
              ? serve(m.request as Q)
              : Promise.reject(new Error('internal: no request handler')),
        );
        replyToWorker(worker, m.seq, answer);
      } else if (m.type === 'give') {
        options.recycle?.(m.memory);
      } else if (m.type === 'done') {
        void worker.terminate().finally(finish);
      }
    });
    worker.on('error', finish);
    worker.on('exit', finish);
  });
}
