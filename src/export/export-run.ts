/**
 * What every export format shares: its options, hooks and summary, the rollouts it covers, the
 * items built on every core in id order, and the error of an interrupted run. The formats
 * (export-store.ts's jsonl and tinker writers, the Parquet dataset, the store copy) build on it.
 */
import { TokcapError } from '../errors.js';
import { compareCodePoints, JsonWriter } from '../json/canonical-json.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { giveBackCopyBuffer } from '../jsonl/copy-buffers.js';
import { estimateJsonlBytes } from '../layout/estimate-size.js';
import { scanDirectory, sortedRolloutIds } from '../layout/scan-directory.js';
import { filterShard, type Shard } from '../layout/shard.js';
import { serveSnapshotRequest, type SnapshotRequest } from '../rollout-read/build-many.js';
import { mapRolloutsParallel, type ThreadOptions } from '../threads/parallel-rollouts.js';
import { exportItem, type ExportItem, type ExportItemOptions } from './export-item.js';
import type { ExportWorkerShared } from './export-worker.js';
import type { ExportedRollout } from './exported-rollout.js';
import type { FieldSelection } from './fields.js';
import type { ExportFormatName } from './formats.js';
import type { ExportTotals } from './tinker.js';

/** Where `--out -` lines go: `write` resolves when the stream can take more. */
export interface ExportStream {
  write(bytes: Uint8Array): Promise<void>;
}

export interface ExportOptions {
  /** The capture directory. */
  dir: string;
  lockWaitMs?: number;
  /**
   * Rollouts to export (valid ids; exported in code-point order, duplicates dropped). Undefined:
   * every rollout of the directory.
   */
  ids?: readonly string[];
  /** Only the rollouts (of the directory, or of `ids`) in this shard. */
  shard?: Shard;
  /** Freeze each rollout first (the reference consumer path); otherwise read-only. */
  freeze: boolean;
  model?: string;
  format: ExportFormatName;
  /** Output file (jsonl) or directory (tinker, store); with `stream`, only the name reported. */
  out: string;
  /**
   * jsonl only: write the lines to this stream as they are produced instead of a file (the
   * CLI's `--out -`). No atomic rename is possible: an interrupted export leaves a partial
   * stream, and `force` does not apply.
   */
  stream?: ExportStream;
  /** Replace an existing output. */
  force: boolean;
  /** Leave masked rollouts out of the output (they are still counted). */
  trainableOnly: boolean;
  /** jsonl only: which keys each line keeps (default: all). */
  fields?: FieldSelection;
  /** tokcap's version for config.json (default: read from tokcap's package.json). */
  version?: string;
  /** Clock for config.json's `created_at` (tests). */
  now?: () => Date;
  /** Checked between rollouts: an aborted export removes its temporary output and throws. */
  signal?: AbortSignal;
  /** How many threads the job may use (default: decided by its size). */
  threads?: ThreadOptions;
  /**
   * Called with the number of rollouts selected, before any output exists: a throw refuses the
   * export with nothing written (the CLI's "no rollouts selected").
   */
  checkSelection?: (selected: number) => void;
}

export interface ExportHooks {
  /** The rollouts are known (before the first is built). */
  onStart?(total: number): void;
  /** One rollout is done (written, or left out by --trainable-only). */
  onRollout?(done: number, total: number, rolloutId: string, rollout: ExportedRollout): void;
  /**
   * A rollout could not be read for a reason of tokcap's own (a lock timeout): it is exported as
   * a failed build; the caller reports the error (the CLI exits 3).
   */
  onRolloutError?(error: TokcapError, rolloutId: string): void;
  /**
   * The temporary output exists: `discardSync` removes it (for signal handlers). It does nothing
   * once the export has been committed or discarded.
   */
  onTemporary?(tempPath: string, discardSync: () => void): void;
}

export interface ExportSummary {
  out: string;
  format: ExportFormatName;
  /** Rollouts built. */
  rollouts: number;
  /** Rollouts written (rollouts minus the masked ones under --trainable-only). */
  exported: number;
  trainable: number;
  masked: number;
  /** Failed builds (the failed-build result; included in masked). */
  failed: number;
  /**
   * Rollouts tokcap could not read (lock timeouts): jsonl and tinker export them as failed builds
   * (included in failed); store leaves them out (in neither trainable nor masked).
   */
  errors: number;
  generated_tokens_captured: number;
  generated_tokens_delivered: number;
  /**
   * Writing the output failed (a full disk, a read-only target): nothing was left at `out`, and
   * the counts are those of the rollouts read until then. Its `file` is the target.
   */
  output_error?: TokcapError;
}

export function abortError(streaming: boolean): TokcapError {
  return new TokcapError(
    'other',
    streaming ? 'export interrupted; the stream is partial' : 'export interrupted; nothing was written at the target',
  );
}

/** The rollouts an export covers, in code-point order: the ids given, else the listing's; both narrowed to the shard. */
export async function exportIds(options: Pick<ExportOptions, 'dir' | 'ids' | 'shard'>): Promise<string[]> {
  // Listed even when ids are given: a DIR that cannot be listed is an error (exit 3) either way.
  const listing = await scanDirectory(options.dir, { shard: options.shard });
  return options.ids === undefined
    ? sortedRolloutIds(listing)
    : filterShard([...new Set(options.ids)], options.shard).sort(compareCodePoints);
}

/**
 * Builds each rollout's export item (on every core, see mapRolloutsParallel) and hands them to
 * `emit` in the order of `ids`, one at a time. `options.signal` aborts between rollouts.
 */
export async function forEachExportItem(
  options: ExportOptions,
  ids: readonly string[],
  itemOptions: ExportItemOptions,
  emit: (item: ExportItem) => Promise<void>,
  streaming = false,
): Promise<void> {
  const store = { dir: options.dir, lockWaitMs: options.lockWaitMs };
  const stop = new AbortController();
  const onAbort = () => stop.abort(abortError(streaming));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const shared: ExportWorkerShared = { store, item: itemOptions };
  // This thread's JSON reader and writer for the export (each worker has its own).
  const own = { writer: new JsonWriter(), jsonReader: new JsonBytesReader() };
  try {
    await mapRolloutsParallel<ExportItem, SnapshotRequest>([...ids], {
      workerUrl: new URL('./export-worker.js', import.meta.url),
      shared,
      minItems: 8,
      estimatedBytes: estimateJsonlBytes(options.dir, ids),
      chunkSize: 4,
      // In this thread (no workers): one rollout at a time, memory bounded by the largest.
      concurrency: 1,
      threads: options.threads,
      local: (id) => exportItem(store, id, itemOptions, undefined, own),
      serve: serveSnapshotRequest(store),
      recycle: giveBackCopyBuffer,
      signal: stop.signal,
      emit,
    });
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

export function summaryOf(options: ExportOptions, totals: ExportTotals): ExportSummary {
  return {
    out: options.out,
    format: options.format,
    rollouts: totals.rollouts,
    exported: totals.exported,
    trainable: totals.trainable,
    masked: totals.masked,
    failed: totals.failed,
    errors: totals.errors,
    generated_tokens_captured: totals.generatedTokensCaptured,
    generated_tokens_delivered: totals.generatedTokensDelivered,
  };
}
