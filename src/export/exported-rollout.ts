/**
 * What an export says of one rollout, whatever the format (counts, verdict, why it was left out).
 * Its own module: the formats (tinker's summaries) read it without importing the export's items.
 */
import type { SerialisedError } from '../threads/thread-requests.js';
import type { VerdictAnswer } from '../status/verdict.js';

/** What the totals, the summary and the hooks learn of one exported rollout. */
export interface ExportedRollout {
  rolloutId: string;
  maskSample: boolean;
  /** A failed build (the failed-build result). */
  failed: boolean;
  /**
   * tokcap could not read the rollout (a lock timeout) or write its result, as it crosses threads;
   * a library user gets it as a TokcapError from `ExportHooks.onRolloutError`.
   * @internal
   */
  error?: SerialisedError;
  generatedTokensCaptured: number;
  generatedTokensDelivered: number;
  /** The consumer verdict; an `unavailable` rollout is left out and named on stderr (docs/cli.md#unavailable). */
  verdict: VerdictAnswer;
}
