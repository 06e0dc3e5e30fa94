import { toTokcapError, type TokcapError } from '../errors.js';
import { scanDirectory } from '../layout/scan-directory.js';
import { compareCodePoints } from '../json/canonical-json.js';
import type { Shard } from '../layout/shard.js';
import type { StoreOptions } from '../ops/store.js';
import { reviveError } from '../jsonl/remote-jsonl.js';
import { estimateJsonlBytes } from '../layout/estimate-size.js';
import { mapRolloutsParallel, type SerialisedError, type ThreadOptions } from '../threads/parallel-rollouts.js';
import { VERIFY_WORKER_URL } from '../threads/job-workers.js';

/** What verify-worker.ts returns for a rollout it could not verify. */
export interface WorkerFailure {
  failed: SerialisedError;
}
import { compareFindings, type Finding } from './findings.js';
import { verifyRollout } from './verify-rollout.js';
import { JsonBytesReader } from '../json/parse-json.js';

export interface VerifyResult {
  /** No error finding and every rollout checked: a rollout that could not be read is not ok. */
  ok: boolean;
  /** Sorted as defined; empty when they were given to `onFindings` instead. */
  findings: Finding[];
  /** Rollouts that could not be verified at all (lock timeout, I/O error). */
  failed: { rolloutId: string; error: TokcapError }[];
  /** The ids of `failed`, sorted: checked by nobody, so never reported as verified. */
  unchecked: string[];
  /** Rollouts attempted (checked or not). */
  rollouts: number;
  /** The named `ids` with no capture file in the directory (or outside `shard`), as given: not attempted. */
  missing: string[];
}

export interface VerifyOptions {
  ids?: readonly string[];
  /** Only the rollouts (of the directory, or of `ids`) in this shard. */
  shard?: Shard;
  onProgress?: (done: number, total: number) => void;
  /** Called once, before the first rollout, with how many will be attempted (a caller's progress bar). */
  onStart?: (total: number) => void;
  /** How many threads the job may use (default: decided by its size). */
  threads?: ThreadOptions;
  /**
   * Takes the findings a rollout at a time, in the order of the sorted findings (rollouts by id),
   * instead of the result holding them all: memory holds a rollout's findings, not the store's.
   * A returned promise is awaited (while a few are pending, the job waits for it).
   */
  onFindings?: (findings: Finding[]) => void | Promise<void>;
}

/** verify-digests over every rollout present (or the given ids), findings sorted as defined. */
export async function verifyDirectory(store: StoreOptions, options: VerifyOptions = {}): Promise<VerifyResult> {
  const listing = await scanDirectory(store.dir, { shard: options.shard });
  const ids = options.ids ? options.ids.filter((id) => listing.rollouts.has(id)) : [...listing.rollouts.keys()].sort();
  const missing = options.ids ? options.ids.filter((id) => !listing.rollouts.has(id)) : [];
  options.onStart?.(ids.length);
  const onFindings = options.onFindings;
  // Given findings rollout by rollout, they come out sorted if the rollouts are (the id is the
  // findings' first key); a rollout's own are sorted as they come.
  if (onFindings && options.ids) ids.sort(compareCodePoints);
  const failures: (VerifyResult['failed'][number] | undefined)[] = [];
  let done = 0;
  // This thread's JSON reader for the job (each worker has its own).
  const jsonReader = new JsonBytesReader();
  let givenError = false;
  const failedInWorker = (r: WorkerFailure, i: number) => {
    failures[i] = { rolloutId: ids[i], error: toTokcapError(reviveError(r.failed), { rolloutId: ids[i] }) };
  };
  // Emitted results are not kept (`perRollout` has holes where they were).
  const given = (r: Finding[] | WorkerFailure, i: number) => {
    if (!Array.isArray(r)) return failedInWorker(r, i);
    if (r.length === 0) return;
    givenError ||= r.some((f) => f.severity === 'error');
    return onFindings!(r.sort(compareFindings));
  };
  // Rollouts are verified on every core (src/threads/parallel-rollouts.ts); results in id order.
  const perRollout = await mapRolloutsParallel<Finding[] | WorkerFailure>(ids, {
    workerUrl: VERIFY_WORKER_URL,
    shared: { ...store },
    minItems: 8,
    estimatedBytes: estimateJsonlBytes(store.dir, ids),
    chunkSize: 4,
    concurrency: 8,
    threads: options.threads,
    local: async (id, i) => {
      try {
        return await verifyRollout(store, id, { jsonReader });
      } catch (e) {
        failures[i] = { rolloutId: id, error: toTokcapError(e, { rolloutId: id }) };
        return [];
      }
    },
    // Each worker copies J under the lock itself, in turn with this thread.
    workersLock: true,
    ...(onFindings ? { emit: (r: Finding[] | WorkerFailure, i: number) => given(r, i) } : {}),
    onDone: (n) => {
      done += n;
      options.onProgress?.(done, ids.length);
    },
  });
  // A rollout a worker could not verify (lock timeout, I/O error) fails as it would have here.
  perRollout.forEach((r, i) => {
    if (!Array.isArray(r)) failedInWorker(r, i);
  });
  const failed = failures.filter((f) => f !== undefined);
  // In the order the ids were given (they were sorted for `onFindings`).
  if (onFindings && options.ids) {
    const at = new Map(options.ids.map((id, k) => [id, k]));
    failed.sort((a, b) => at.get(a.rolloutId)! - at.get(b.rolloutId)!);
  }
  const findings = perRollout.flatMap((r) => (Array.isArray(r) ? r : [])).sort(compareFindings);
  const unchecked = failed.map((f) => f.rolloutId).sort(compareCodePoints);
  return {
    ok: unchecked.length === 0 && !givenError && !findings.some((f) => f.severity === 'error'),
    findings,
    failed,
    unchecked,
    rollouts: ids.length,
    missing,
  };
}
