/**
 * A process setting for `watch`'s load, made by the command line for its own process (the
 * library leaves its host's process alone), as parquet-memory.ts does for the export.
 *
 * What a load of 100,000 rollouts keeps is ~25-30 MB of the main thread's heap (the rows, the
 * listing). V8 sets the next full collection's limit at up to 4x what the last one left, and the
 * first one runs when the placeholders are placed: the garbage of the whole load (copy records,
 * replaced placeholders, the batches' replies) then piles up to ~110 MB of old space before the
 * next, or never meets it, and the peak RSS of the run (~235 MB, ~185 MB when a collection
 * happens to run mid-load) is mostly that garbage. A growing factor of 1.5 keeps it to about half
 * of what is live. V8 reads the factor at each full collection, so setting it now applies to the
 * next one (and to the read worker's, started after). Measured:
 * docs/decisions/0009-watch-heap-growing-factor.md.
 */
import { growHeap } from '../cli/v8-flags.js';

export function settleOnceMemory(): void {
  growHeap('slowly');
}

/** What `settleLoadMemory` needs of the directory model. */
export interface LoadingModel {
  readonly ready: boolean;
  subscribe(listener: () => void): () => void;
}

/**
 * The live view's first load: the same factor while it runs, V8's own again once every rollout
 * is read. The load's garbage is `--once`'s plus the row arrays of the snapshots the view is
 * handed (a copy of every row, ~1 MB each at 100,000, in V8's large-object space) and the view's
 * sorted rows; with the default factor the main heap grew to ~120 MB at 100,000 and the peak RSS
 * to ~250 MB. After the load the view runs for hours, mostly idle, where collecting at 1.5x what
 * is live would cost frames for nothing.
 */
export function settleLoadMemory(model: LoadingModel): void {
  if (model.ready) return;
  growHeap('slowly');
  const stop = model.subscribe(() => {
    if (!model.ready) return;
    stop();
    growHeap('as-v8-chooses');
  });
}
