/**
 * A process setting for `watch --once`, made by the command line for its own process (the
 * library leaves its host's process alone), as parquet-memory.ts does for the export.
 *
 * What a load of 100,000 rollouts keeps is ~25-30 MB of the main thread's heap (the rows, the
 * listing). V8 sets the next full collection's limit at up to 4x what the last one left, and the
 * first one runs when the placeholders are placed: the garbage of the whole load (copy records,
 * replaced placeholders, the batches' replies) then piles up to ~110 MB of old space before the
 * next, or never meets it, and the peak RSS of the run (~235 MB, ~185 MB when a collection
 * happens to run mid-load) is mostly that garbage. A growing factor of 1.5 keeps it to about half
 * of what is live. V8 reads the factor at each full collection, so setting it now applies to the
 * next one (and to the read worker's, started after).
 */
import { setFlagsFromString } from 'node:v8';

export function settleOnceMemory(): void {
  setFlagsFromString('--heap-growing-percent=50');
}
