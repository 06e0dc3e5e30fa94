/**
 * The consumer verdict of a rollout: would the reference consumer give a trainable sample, a
 * masked one, or could tokcap not read the rollout to tell? Derived from one build
 * (`buildRolloutDetailed`, the only place a preview or a frozen build is computed); every
 * command and the watch view render this answer.
 */
import { errorFactsOf, type ErrorFacts } from '../errors.js';
import type { DetailedBuild } from '../chains/build-rollout.js';
import type { MaskCause } from '../chains/mask-causes.js';
import { isUnavailableKind } from './rollout-status.js';

/**
 * - `trainable`: the result's `mask_sample` is false.
 * - `masked`: `mask_sample` is true, including every failed-build result (no records, no safe
 *   chain, retired, corrupt...): those are masked and "could not be built".
 * - `unavailable`: the rollout could not be read (lock timeout, I/O error, a capture file that is
 *   not a regular file): neither trainable nor masked.
 */
export const VERDICTS = ['trainable', 'masked', 'unavailable'] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface VerdictAnswer {
  verdict: Verdict;
  /** The result is the failed-build dictionary (no rebuilt response): "could not be built". */
  unbuilt: boolean;
  /** Why it is masked (empty when trainable or unavailable). */
  causes: MaskCause[];
  /**
   * The failure that stopped the read or freeze, when one did (its message without the Python
   * class the result's `error` string starts with). Plain data: it crosses from build workers.
   */
  error?: ErrorFacts;
}

export function verdictOf(build: Pick<DetailedBuild, 'result' | 'causes' | 'readFailure'>): VerdictAnswer {
  const kind = build.readFailure?.kind;
  const unbuilt = build.result.rebuilt_response === null;
  const failure = build.readFailure && { error: build.readFailure.facts() };
  if (kind !== undefined && isUnavailableKind(kind)) return { verdict: 'unavailable', unbuilt, causes: [], ...failure };
  return { verdict: build.result.mask_sample ? 'masked' : 'trainable', unbuilt, causes: build.causes, ...failure };
}

/** The verdict when the rollout's facts could not be read, so no build was attempted. */
export function unavailableVerdict(error: ErrorFacts): VerdictAnswer {
  return { verdict: 'unavailable', unbuilt: true, causes: [], error: errorFactsOf(error) };
}
