/**
 * Work that is independent across rollouts, spread over the cores: this thread and up to
 * `cores - 1` worker threads claim chunks of the id list from a shared counter (so a slow chunk
 * does not stall the others), results are put back in input order, so output stays
 * deterministic. Locks (the process holds one rollout lock at a time,
 * docs/format.md#lock-mechanism): with `workersLock` a worker takes them itself, in turn with
 * this thread and the other workers (src/lock/lock-turns.ts); otherwise it asks this thread
 * (`request`), which takes them in turn with its own reads.
 *
 * Workers are an optimisation only: below `minItems` or `WORKER_MIN_BYTES`, when the compiled
 * worker module is absent (running from sources), with `threads: 1`, or if a worker fails,
 * everything (or the chunks it did not return) is computed here, by the same function.
 *
 * How many threads a job may use is the caller's to say (`ThreadOptions`; the CLI reads it from
 * TOKCAP_WORKERS): the library reads no environment.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { refuseRolloutLocksInThisThread } from '../lock/rollout-lock.js';
import { joinLockTurns, lockTurnsMemory } from '../lock/lock-turns.js';
import { mapInOrder } from './map-in-order.js';
import { earlyWorkerPays, MAX_THREADS, WORKER_MIN_BYTES } from './job-workers.js';
import { earlyWorkerWaiting, startedEarly, takeEarlyWorker } from './early-workers.js';
import { OrderedEmitter } from './ordered-emitter.js';
import { mainThreadRequests, type SerialisedError } from './thread-requests.js';
import { runWorkerSlot, type SlotJob } from './worker-slot.js';
import type { ParallelOptions, ThreadOptions } from './parallel-options.js';

export { serialiseError, type SerialisedError } from './thread-requests.js';
export { WORKER_MIN_BYTES } from './job-workers.js';

export type { ParallelOptions, ThreadOptions } from './parallel-options.js';

/** Memory a worker keeps of what the main thread moved back, at most. */
const MAX_RETURNED = 16;

/** Worker threads to start beside this thread, which computes too: one per other core, up to MAX_THREADS in all. */
export function workerCount(threads: ThreadOptions = {}): number {
  const cores = threads.threads ?? availableParallelism();
  if (cores <= 1) return 0;
  return Math.min(cores, MAX_THREADS) - 1;
}

/** Workers for a job of `ids` in `nChunks` chunks: none unless it is big enough for one. */
function workersFor(ids: readonly string[], nChunks: number, options: ParallelOptions<unknown, unknown>): number {
  const threads = options.threads ?? {};
  // Two threads or more asked for explicitly: workers whatever the job's size. A worker started
  // early (./early-workers.ts) pays from a smaller size than one started now.
  const bytes = options.estimatedBytes;
  const bigEnough =
    (threads.threads !== undefined && threads.threads >= 2) ||
    ((bytes === undefined ||
      bytes >= WORKER_MIN_BYTES ||
      (earlyWorkerWaiting(options.workerUrl) && earlyWorkerPays(bytes, ids.length))) &&
      ids.length >= (options.minItems ?? 2000));
  return bigEnough && existsSync(fileURLToPath(options.workerUrl)) ? Math.min(workerCount(threads), nChunks - 1) : 0;
}

export async function mapRolloutsParallel<R, Q = unknown>(
  ids: readonly string[],
  options: ParallelOptions<R, Q>,
): Promise<R[]> {
  const chunkSize = options.chunkSize ?? 256;
  const nChunks = Math.ceil(ids.length / chunkSize);
  const nWorkers = workersFor(ids, nChunks, options as ParallelOptions<unknown, unknown>);
  // A worker started before the job (./early-workers.ts) is its first, or stopped if it has none.
  let earlyWorker = takeEarlyWorker(options.workerUrl);
  if (earlyWorker && nWorkers === 0) {
    void earlyWorker.terminate();
    earlyWorker = undefined;
  }
  options.threads?.onWorkers?.(nWorkers, ids.length);
  const counter = new Int32Array(new SharedArrayBuffer(4));
  // No chunk is claimed after this.
  const stopClaims = () => Atomics.store(counter, 0, nChunks);
  const onAbort = () => stopClaims();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) stopClaims();
  const job: SlotJob<R, Q> = {
    options,
    ids,
    chunkSize,
    counter,
    // The chunk each worker is computing (-1: none), so that a worker that dies leaves no chunk
    // behind unnoticed.
    claims: new Int32Array(new SharedArrayBuffer(4 * Math.max(1, nWorkers))).fill(-1),
    // 1 once a chunk's results are in or being computed here: a chunk is never delivered twice.
    returned: new Uint8Array(nChunks),
    // Chunks a worker claimed and will not return (it died, or could not post them): computed in
    // this thread before it claims another, so that emitting in order does not wait for the end
    // of the job with every later result held in memory.
    orphans: [],
    // Items a worker could not compute (it threw): computed here, where the error is thrown again
    // with its full detail.
    redo: [],
    lockTurns: options.workersLock && nWorkers > 0 ? lockTurnsMemory() : undefined,
    out: new OrderedEmitter<R>(ids.length, options.emit, options.signal, stopClaims),
  };
  const { returned, orphans, out } = job;

  // With workers, at most two of this thread's own items in flight: their copies take turns for
  // the lock with the workers' requests (one rollout lock at a time), and a worker's request
  // queued behind many of them waited for each one's parse too (a worker idled 4.6 s of 5.3 s
  // in inspect --deep of 2 GB with sixteen in flight).
  const concurrency = nWorkers > 0 ? Math.min(2, options.concurrency ?? 16) : (options.concurrency ?? 16);
  let lastYield = performance.now();
  const runChunk = async (c: number) => {
    returned[c] = 1;
    const start = c * chunkSize;
    const end = Math.min(ids.length, start + chunkSize);
    // A few in flight, so that a rollout waiting for its lock does not hold up the others.
    const results = await mapInOrder(ids.slice(start, end), concurrency, async (id, k) => {
      const r = await options.local(id, start + k);
      // Between items (every 2 ms at most), let workers' requests in: they wait for their
      // copies of J otherwise.
      if (nWorkers > 0 && performance.now() - lastYield > 2) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        lastYield = performance.now();
      }
      return r;
    });
    results.forEach((r, k) => out.put(start + k, r));
    options.onDone?.(end - start);
  };
  const runOrphans = async () => {
    for (let c = orphans.shift(); c !== undefined; c = orphans.shift()) {
      if (!returned[c]) await runChunk(c);
    }
  };

  const workers = Array.from({ length: nWorkers }, (_, w) => runWorkerSlot(job, w, w === 0 ? earlyWorker : undefined));
  for (let c = Atomics.add(counter, 0, 1); c < nChunks; c = Atomics.add(counter, 0, 1)) {
    await runOrphans();
    await runChunk(c);
    // Let worker messages (results, lock requests) in between chunks.
    await out.drained();
  }
  await runOrphans();
  await Promise.all(workers);
  options.signal?.removeEventListener('abort', onAbort);
  await out.settled();
  // Chunks a worker claimed but did not return (it failed or died): redo them here.
  for (let c = 0; c < nChunks; c++) {
    if (!returned[c]) await runChunk(c);
    await out.settled();
  }
  for (const i of job.redo.sort((a, b) => a - b)) {
    out.put(i, await options.local(ids[i], i));
    options.onDone?.(1);
    await out.settled();
  }
  return out.results;
}

/**
 * Bytes to post to another thread without a copy: the same memory when the view owns its whole
 * ArrayBuffer (its buffer is added to `transfer`), else a copy of its own (small Buffers share
 * Node's pool with other data, which must not be detached).
 */
export function forTransfer(bytes: Uint8Array | undefined, transfer: ArrayBuffer[]): Uint8Array | undefined {
  if (bytes === undefined) return undefined;
  const owned =
    bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength && bytes.buffer instanceof ArrayBuffer;
  const out = owned ? new Uint8Array(bytes.buffer as ArrayBuffer) : new Uint8Array(bytes);
  transfer.push(out.buffer as ArrayBuffer);
  return out;
}

/**
 * The worker side: claims chunks until none is left, computes each item with `compute`, posts
 * results per chunk. `request` sends a request to the main thread's `serve` and waits for it.
 */
export function serveRolloutWorker<R>(
  port: import('node:worker_threads').MessagePort,
  data:
    | {
        shared: unknown;
        ids: string[];
        chunkSize: number;
        counter: Int32Array;
        claims: Int32Array;
        slot: number;
        lockTurns?: SharedArrayBuffer;
        memoryPort?: MessagePort;
      }
    | { early: true },
  compute: (
    id: string,
    index: number,
    shared: unknown,
    request: (q: unknown) => Promise<unknown>,
    /** Moves memory back to the main thread (its `recycle`); the worker's views of it go empty. */
    giveBack: (memory: ArrayBuffer) => void,
    /**
     * Memory of at least `size` bytes that the main thread moved back (its `fromWorker`), if
     * any: the smallest such.
     */
    reuse: (size: number) => ArrayBuffer | undefined,
  ) => Promise<R>,
  reviveError: (e: SerialisedError) => Error,
  /** Memory of a result to move to the main thread rather than copy (e.g. its encoded bytes). */
  transferOf?: (result: R) => ArrayBuffer[],
): void {
  // Started before its job (./early-workers.ts): its modules are loaded; the job comes as a message.
  if (startedEarly(data)) {
    port.once('message', (m: { type: 'job'; data: typeof data }) =>
      serveRolloutWorker(port, m.data, compute, reviveError, transferOf),
    );
    return;
  }
  if (data.lockTurns) joinLockTurns(data.lockTurns, data.slot);
  else refuseRolloutLocksInThisThread();
  const { request, giveBack, settle } = mainThreadRequests(port, reviveError);
  port.on('message', settle);
  const { ids, chunkSize, counter, claims, slot, memoryPort } = data;
  const nChunks = Math.ceil(ids.length / chunkSize);
  // Memory the main thread moved back (its `fromWorker`), taken from the port as it is now: this
  // thread's chunks do not turn its event loop. The largest MAX_RETURNED are kept.
  const returned: ArrayBuffer[] = [];
  const reuse = (size: number): ArrayBuffer | undefined => {
    for (
      let m = memoryPort && receiveMessageOnPort(memoryPort);
      m !== undefined;
      m = receiveMessageOnPort(memoryPort!)
    ) {
      returned.push(m.message as ArrayBuffer);
    }
    returned.sort((a, b) => a.byteLength - b.byteLength);
    returned.splice(0, Math.max(0, returned.length - MAX_RETURNED));
    const i = returned.findIndex((m) => m.byteLength >= size);
    return i === -1 ? undefined : returned.splice(i, 1)[0];
  };
  void (async () => {
    for (let c = Atomics.add(counter, 0, 1); c < nChunks; c = Atomics.add(counter, 0, 1)) {
      // Should this thread die now, the main thread knows which chunk to compute instead.
      Atomics.store(claims, slot, c);
      const start = c * chunkSize;
      const end = Math.min(ids.length, start + chunkSize);
      const redo: number[] = [];
      // Two in flight: the next item's request (its copy of J) is answered while this one computes.
      const results = await mapInOrder(ids.slice(start, end), 2, async (id, k): Promise<R | null> => {
        try {
          return await compute(id, start + k, data.shared, request, giveBack, reuse);
        } catch {
          redo.push(k);
          return null;
        }
      });
      redo.sort((a, b) => a - b);
      try {
        const transfer = transferOf ? results.flatMap((r) => (r === null ? [] : transferOf(r))) : [];
        port.postMessage({ type: 'chunk', chunk: c, results, redo }, transfer);
      } catch {
        port.postMessage({ type: 'chunk_failed', chunk: c });
      }
      Atomics.store(claims, slot, -1);
    }
    port.postMessage({ type: 'done' });
  })();
}
