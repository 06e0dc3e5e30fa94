/**
 * A rollout's status read on its own, where no reading of the whole rollout gives it
 * (read-rollout.ts): after a freeze's build, for export lines, for `inspect --deep`'s listing. The
 * facts as `inspect` reads them (index plus unindexed tail), then `rolloutStatus`.
 *
 * After a read of the records failed (a build, a preview, `--deep`'s count of every line), the
 * status is still the summary's answer (the rule in rollout-status.ts): the summary's read is
 * made again with J's lines failing with that same error, never read again. Nothing waits twice
 * for one lock, and a rollout whose summary needs J's unindexed tail is `unavailable` with the
 * error that was met, not with a second one.
 */
import { errorFromFacts, toTokcapError, type ErrorFacts } from '../errors.js';
import { rolloutFacts, type FactsOptions, type RolloutFacts } from '../facts/rollout-facts.js';
import { SUFFIX } from '../layout/file-names.js';
import type { StoreOptions } from '../ops/store.js';
import {
  isUnavailableKind,
  rolloutStatus,
  unavailableStatus,
  type RolloutStatusAnswer,
} from '../status/rollout-status.js';

export interface StatusRead {
  /** Absent when the facts could not be gathered at all. */
  facts?: RolloutFacts;
  status: RolloutStatusAnswer;
  /**
   * Why the records could not be read although the status could be answered (a lock timeout
   * or an I/O error on J's lines): the parts that need them are unavailable. Absent otherwise,
   * and always when the status is `unavailable` (its `error` says why).
   */
  recordsError?: ErrorFacts;
}

export interface StatusReadOptions extends Pick<FactsOptions, 'files'> {
  /** The records could not be read already: J's lines fail with this error instead of being read. */
  recordsError?: ErrorFacts;
}

export async function readRolloutStatus(
  store: StoreOptions,
  rolloutId: string,
  options: StatusReadOptions = {},
): Promise<StatusRead> {
  const { recordsError } = options;
  const factsOptions: FactsOptions = { files: options.files };
  if (recordsError) {
    factsOptions.readJsonl = () => Promise.reject(errorFromFacts(recordsError, { rolloutId }));
  }
  try {
    const facts = await rolloutFacts(store, rolloutId, factsOptions);
    const status = rolloutStatus(facts);
    return recordsError && status.status !== 'unavailable' ? { facts, status, recordsError } : { facts, status };
  } catch (e) {
    const err = toTokcapError(e, { rolloutId });
    return { status: unavailableStatus(err.facts()) };
  }
}

/** The failure that stopped the read of J's lines in `facts`, when it is one that leaves the rollout unread. */
export function recordsFailure(facts: RolloutFacts): ErrorFacts | undefined {
  return facts.errors.find((e) => e.file.endsWith(SUFFIX.jsonl) && isUnavailableKind(e.kind));
}

/**
 * The answer for facts read further than the summary reads (`inspect --deep`, `inspect DIR ID`):
 * their own when J's lines were read; otherwise the summary's, with the failure as `recordsError`.
 */
export async function statusOfFullRead(
  store: StoreOptions,
  rolloutId: string,
  facts: RolloutFacts,
  options: Pick<FactsOptions, 'files'> = {},
): Promise<StatusRead> {
  const failure = recordsFailure(facts);
  if (failure === undefined) return { facts, status: rolloutStatus(facts) };
  return readRolloutStatus(store, rolloutId, { files: options.files, recordsError: failure });
}
