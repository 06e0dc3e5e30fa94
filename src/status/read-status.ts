/**
 * A rollout's status read on its own (build, export and watch have no facts of their own): the
 * facts as `inspect` reads them (index plus unindexed tail), then `rolloutStatus`.
 */
import { toTokcapError } from '../errors.js';
import { rolloutFacts, type FactsOptions, type RolloutFacts } from '../facts/rollout-facts.js';
import type { StoreOptions } from '../ops/store.js';
import { rolloutStatus, unavailableStatus, type RolloutStatusAnswer } from './rollout-status.js';

export interface StatusRead {
  /** Absent when the facts could not be gathered at all. */
  facts?: RolloutFacts;
  status: RolloutStatusAnswer;
}

export async function readRolloutStatus(store: StoreOptions, rolloutId: string, options: Pick<FactsOptions, 'files' | 'readJsonl'> = {}): Promise<StatusRead> {
  try {
    const facts = await rolloutFacts(store, rolloutId, options);
    return { facts, status: rolloutStatus(facts) };
  } catch (e) {
    const err = toTokcapError(e, { rolloutId });
    return { status: unavailableStatus(err.facts()) };
  }
}
