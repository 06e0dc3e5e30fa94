import { scanDirectory, type DirectoryListing } from '../layout/scan-directory.js';
import type { StoreOptions } from '../ops/store.js';
import { mapInOrder } from '../util/map-in-order.js';
import { rolloutFacts, type RolloutFacts } from './rollout-facts.js';

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
}

/** Facts of every rollout of the directory (or of the given ids), in id order. */
export async function directoryFacts(store: StoreOptions, options: DirectoryFactsOptions = {}): Promise<DirectoryFacts> {
  const listing = options.listing ?? (await scanDirectory(store.dir));
  const ids = options.ids ? options.ids.filter((id) => listing.rollouts.has(id)) : [...listing.rollouts.keys()].sort();
  const rollouts = new Map<string, RolloutFacts>();
  let done = 0;
  const results = await mapInOrder(ids, 16, async (id) => {
    const f = await rolloutFacts(store, id, { deep: options.deep, files: listing.rollouts.get(id) });
    options.onProgress?.(++done, ids.length);
    return f;
  });
  ids.forEach((id, i) => rollouts.set(id, results[i]));
  return { rollouts, invalidNames: listing.invalidNames, tempStateFiles: listing.tempStateFiles };
}
