import { giveBackCopyBuffer } from '../jsonl/copy-buffers.js';
import { serveJsonlRequest, type JsonlRequest } from '../jsonl/remote-jsonl.js';
import { estimateJsonlBytes } from '../layout/estimate-size.js';
import type { FileKind } from '../layout/file-names.js';
import { scanDirectory, type DirectoryListing } from '../layout/scan-directory.js';
import type { StoreOptions } from '../ops/store.js';
import { SUMMARY_WORKER_MIN_ROLLOUTS } from '../threads/job-workers.js';
import { mapRolloutsParallel, type ThreadOptions } from '../threads/parallel-rollouts.js';
import { rolloutFacts, type RolloutFacts } from './rollout-facts.js';
import { JsonBytesReader } from '../json/parse-json.js';

export interface DirectoryFacts {
  rollouts: Map<string, RolloutFacts>;
  invalidNames: string[];
  tempStateFiles: string[];
}

export interface DirectoryFactsOptions {
  deep?: boolean;
  /** Only these rollouts (validated by the caller); default: every rollout present. */
  ids?: readonly string[];
  /** Called after each rollout, for progress display. */
  onProgress?: (done: number, total: number) => void;
  listing?: DirectoryListing;
  /** How many threads the job may use (default: decided by its size). */
  threads?: ThreadOptions;
}

/** What facts workers share (facts-worker.ts): `files[i]` is the file mask of the i-th id. */
export interface FactsShared {
  store: StoreOptions;
  deep: boolean | undefined;
  files: Uint8Array;
}

const MASK_KINDS: FileKind[] = ['incomplete', 'intents', 'jsonl', 'state'];

function maskOf(files: ReadonlySet<FileKind> | undefined): number {
  if (!files) return 0xff;
  let m = 0;
  MASK_KINDS.forEach((k, i) => (m |= files.has(k) ? 1 << i : 0));
  return m;
}

export function kindsOf(mask: number): ReadonlySet<FileKind> | undefined {
  if (mask === 0xff) return undefined;
  return new Set(MASK_KINDS.filter((_, i) => mask & (1 << i)));
}

/**
 * Facts of every rollout of the directory (or of the given ids), in id order. Many rollouts are
 * spread over worker threads (src/threads/parallel-rollouts.ts); the result is the same.
 */
export async function directoryFacts(
  store: StoreOptions,
  options: DirectoryFactsOptions = {},
): Promise<DirectoryFacts> {
  const rollouts = new Map<string, RolloutFacts>();
  const listing = options.listing ?? (await scanDirectory(store.dir));
  await forEachRolloutFacts(store, { ...options, listing }, (id, facts) => {
    rollouts.set(id, facts);
  });
  return { rollouts, invalidNames: listing.invalidNames, tempStateFiles: listing.tempStateFiles };
}

/**
 * `directoryFacts` handed over one rollout at a time, in id order, and not kept: memory stays that
 * of the rollouts in flight, whatever the directory's size. A promise returned by `each` is
 * awaited (and holds the work back) before the next rollout is handed over.
 */
export async function forEachRolloutFacts(
  store: StoreOptions,
  options: DirectoryFactsOptions,
  each: (id: string, facts: RolloutFacts) => void | Promise<void>,
): Promise<void> {
  const listing = options.listing ?? (await scanDirectory(store.dir));
  const ids = options.ids ? options.ids.filter((id) => listing.rollouts.has(id)) : [...listing.rollouts.keys()].sort();
  let done = 0;
  // This thread's JSON reader for the job (each worker has its own).
  const jsonReader = new JsonBytesReader();
  const files = Uint8Array.from(ids, (id) => maskOf(listing.rollouts.get(id)));
  const shared: FactsShared = { store: { ...store }, deep: options.deep, files };
  await mapRolloutsParallel<RolloutFacts, JsonlRequest>(ids, {
    workerUrl: new URL('./facts-worker.js', import.meta.url),
    shared,
    // A worker pays for its start-up (~0.1 s on 2 cores) only with enough to share. The summary
    // reads a few small files per rollout: from about 20,000 rollouts (100,000: 3.4 s in one
    // thread, 2.4 s with a worker; 10,000: 0.65 s, 0.78 s). --deep parses J, but each copy is
    // made in this thread (under the lock), so as for verify it pays from about 96 MB of JSONL
    // (mix-2k, 60 MB: 0.74 s in one thread, 0.85 s with a worker).
    minItems: options.deep ? 8 : SUMMARY_WORKER_MIN_ROLLOUTS,
    estimatedBytes: options.deep ? estimateJsonlBytes(store.dir, ids) : undefined,
    threads: options.threads,
    local: (id) => rolloutFacts(store, id, { deep: options.deep, files: listing.rollouts.get(id), jsonReader }),
    serve: serveJsonlRequest,
    recycle: giveBackCopyBuffer,
    onDone: (n) => {
      done += n;
      options.onProgress?.(done, ids.length);
    },
    emit: (facts, i) => each(ids[i], facts),
  });
}
