/**
 * Builds many rollouts on every core (src/threads/parallel-rollouts.ts), handing each outcome to
 * `emit` in input order as soon as it is ready, so results are written out as they come and
 * never held together. A worker takes each rollout's lock itself (a freeze's or a read-only copy),
 * in turn with this thread (one rollout lock at a time per process, docs/format.md#lock-mechanism,
 * src/lock/lock-turns.ts); copying, parsing, building and serialising happen in the worker, whose
 * results' memory comes back to it once written.
 * `workerSnapshotSource` and `serveSnapshotRequest` serve export's workers, which ask this thread
 * for the locked copies instead.
 */
import { JsonWriter } from '../json/canonical-json.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { freezeAndCopy, type FrozenCopy } from '../ops/freeze.js';
import { copyReadOnlySnapshot, type ReadOnlyCopy } from '../ops/read-snapshot.js';
import type { StoreOptions } from '../ops/store.js';
import { releaseOnce } from '../jsonl/copy-buffers.js';
import { estimateJsonlBytes } from '../layout/estimate-size.js';
import { forTransfer, mapRolloutsParallel, type ThreadOptions } from '../threads/parallel-rollouts.js';
import { BUILD_WORKER_URL } from '../threads/job-workers.js';
import { appendMembers, statusAfterBuild, statusMembers } from './result-status.js';
import { outcomeOf, type BuildOutcome } from './build-outcome.js';
import type { SnapshotSource } from '../chains/build-rollout.js';

export interface BuildManyOptions {
  freeze: boolean;
  model?: string;
  /** Serialise each result (`BuildOutcome.json`); false when only summaries are wanted. */
  serialise: boolean;
  /** Compute each masked rollout's first divergences (`BuildOutcome.divergences`). */
  divergences?: boolean;
  /**
   * Members to append to a result's JSON after the status members (with `status`), e.g. its
   * divergences with their decoded text.
   */
  extraMembers?: (outcome: BuildOutcome) => object | undefined | Promise<object | undefined>;
  /**
   * Receives each outcome in input order. Its `release`, once its `output` is written or dropped,
   * lets the next results reuse that memory. A returned promise holds the next builds back
   * until it resolves (output slower than the builds).
   */
  emit: (outcome: BuildOutcome, index: number) => void | Promise<void>;
  /**
   * Give each outcome its rollout's status (`BuildOutcome.status`) and append `status`,
   * `conditions`, `verdict` and `error_kind` to its JSON. A preview's status comes from the copy
   * it builds from (src/rollout-read/read-rollout.ts); a freeze's is read in this thread after it.
   */
  status?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** How many threads the job may use (default: decided by its size). */
  threads?: ThreadOptions;
}

/** A worker's request: the locked copy for one rollout. */
export interface SnapshotRequest {
  freeze: boolean;
  rolloutId: string;
}

/** What build-worker.ts receives as `workerData.shared`. */
export interface BuildWorkerShared {
  store: StoreOptions;
  freeze: boolean;
  model?: string;
  serialise: boolean;
  /** A preview's status is read with its copy (`BuildManyOptions.status`). */
  status: boolean;
  divergences: boolean;
}

export async function buildMany(store: StoreOptions, ids: readonly string[], options: BuildManyOptions): Promise<void> {
  let done = 0;
  // This thread's JSON writer and reader for the job (each worker has its own).
  const writer = new JsonWriter();
  const jsonReader = new JsonBytesReader();
  const status = options.status === true;
  const divergences = options.divergences === true;
  const shared: BuildWorkerShared = {
    store: { ...store },
    freeze: options.freeze,
    model: options.model,
    serialise: options.serialise,
    status,
    divergences,
  };
  await mapRolloutsParallel<BuildOutcome, SnapshotRequest>(ids, {
    workerUrl: BUILD_WORKER_URL,
    shared,
    minItems: 8,
    estimatedBytes: estimateJsonlBytes(store.dir, ids),
    chunkSize: 4,
    // In this thread (no workers): one build at a time, as the reference's consumer does.
    concurrency: 1,
    threads: options.threads,
    local: (id) =>
      outcomeOf(store, id, {
        freeze: options.freeze,
        status,
        model: options.model,
        serialise: options.serialise,
        writer,
        jsonReader,
        divergences,
      }),
    // Each worker takes its rollouts' locks itself, in turn with this thread.
    workersLock: true,
    onDone: (n) => {
      done += n;
      options.onProgress?.(done, ids.length);
    },
    // A worker's serialised result goes back to it once written, for its next results.
    fromWorker: (o, giveBack) => {
      if (o.output instanceof Uint8Array) o.release = releaseOnce(o.output.buffer as ArrayBuffer, giveBack);
    },
    emit: async (o, i) => {
      // Built here: memory of its own from this thread's copy buffers, reused once written.
      if (o.output instanceof Uint8Array) o.release ??= releaseOnce(o.output.buffer as ArrayBuffer);
      if (status) {
        o.status ??= await statusAfterBuild(store, ids[i], o.verdict);
        const extra = options.extraMembers ? await options.extraMembers(o) : undefined;
        if (o.output instanceof Uint8Array)
          o.output = appendMembers(
            o.output,
            extra ? { ...statusMembers(o.status, o.verdict), ...extra } : statusMembers(o.status, o.verdict),
          );
      }
      await options.emit(o, i);
    },
  });
}

/**
 * A worker's `SnapshotSource`: asks the main thread (answered by `serveSnapshotRequest`). A
 * copy's memory goes back to the main thread through `giveBack` once released.
 */
export function workerSnapshotSource(
  request: (q: SnapshotRequest) => Promise<unknown>,
  giveBack?: (memory: ArrayBuffer) => void,
): SnapshotSource {
  const withRelease = <C extends FrozenCopy | ReadOnlyCopy>(copy: C): C => {
    const memory = copy.bytes?.buffer as ArrayBuffer | undefined;
    return { ...copy, release: memory && giveBack && releaseOnce(memory, giveBack) };
  };
  return {
    frozen: async (rolloutId) => withRelease((await request({ freeze: true, rolloutId })) as FrozenCopy),
    readOnly: async (rolloutId) => withRelease((await request({ freeze: false, rolloutId })) as ReadOnlyCopy),
  };
}

/** Main thread: answers a worker's `SnapshotRequest`, transferring the copied bytes. */
export function serveSnapshotRequest(store: StoreOptions) {
  return async (q: SnapshotRequest) => {
    const copy = q.freeze ? await freezeAndCopy(store, q.rolloutId) : await copyReadOnlySnapshot(store, q.rolloutId);
    const transfer: ArrayBuffer[] = [];
    // A copy's J is memory of its own from copy-buffers.ts: moved whole (the worker gives it
    // back), never copied; the release function stays here.
    const { release, ...rest } = copy;
    if (release && copy.bytes) transfer.push(copy.bytes.buffer as ArrayBuffer);
    const value = {
      ...rest,
      bytes: release ? copy.bytes : forTransfer(copy.bytes, transfer),
      intentBytes: forTransfer(copy.intentBytes, transfer),
      ...('stateBytes' in copy ? { stateBytes: forTransfer(copy.stateBytes, transfer) } : {}),
    };
    return { value, transfer };
  };
}
