/**
 * tokcap's public library API: the entry points a program needs to do what the command line
 * does, and their types. Every name is listed here on purpose; etc/tokcap.api.md is the report of
 * this surface (`npm run api` writes it, `npm test` fails when it is stale), so a change to the API
 * shows as a diff. Everything else in src/ is internal: import it from its module only inside
 * this repository.
 *
 * A store is a capture directory and a lock wait (`StoreOptions`); every call takes one.
 * This module imports no CLI or UI package.
 *
 * @packageDocumentation
 */

// Errors: every failure is a TokcapError with a kind (docs/cli.md#exit-codes maps kinds to exit codes).
export {
  TokcapError,
  isTokcapError,
  type ErrorKind,
  type ErrorFacts,
  type TokcapErrorOptions,
  type PyErrorClass,
  type SystemError,
} from './errors.js';

// JSON values as tokcap reads and writes them: a float with an integral value (`1.0`) is a
// JsonFloat, so that it is written back as a float (the metrics' fractions, records' numbers).
export { JsonFloat, type JsonValue, type JsonObject } from './json/value.js';

// A store, its rollouts and their ids
export { DEFAULT_LOCK_WAIT_MS, type StoreOptions } from './ops/store.js';
export { isValidRolloutId } from './layout/rollout-id.js';
export type { FileKind } from './layout/file-names.js';
export { scanDirectory, sortedRolloutIds, type DirectoryListing, type ScanOptions } from './layout/scan-directory.js';
export type { Shard } from './layout/shard.js';
export type { ThreadOptions } from './threads/parallel-rollouts.js';

// Facts: what a rollout holds
export { rolloutFacts, type RolloutFacts, type FactsOptions } from './facts/rollout-facts.js';
export { directoryFacts, type DirectoryFacts, type DirectoryFactsOptions } from './facts/directory-facts.js';

// Status, conditions, verdict and summary counts (docs/cli.md#status)
export {
  ROLLOUT_STATUSES,
  CONDITIONS,
  rolloutStatus,
  type RolloutStatus,
  type Condition,
  type RolloutStatusAnswer,
} from './status/rollout-status.js';
export { VERDICTS, verdictOf, type Verdict, type VerdictAnswer } from './status/verdict.js';
export { summarise, type StatusSummary } from './status/summary.js';
export { readRolloutStatus, type StatusRead, type StatusReadOptions } from './rollout-read/read-status.js';

// Build: the reference consumer's result (prefix_merging) and why it is masked
export {
  buildRollout,
  buildRolloutDetailed,
  type BuildRolloutOptions,
  type DetailedBuild,
} from './chains/build-rollout.js';
export type {
  ConsumerResult,
  SuccessfulBuildResult,
  FailedBuildResult,
  BuildMetrics,
  CaptureSnapshot,
} from './chains/consumer-result.js';
export type { ProjectedResponse, ProjectionUsage } from './chains/projection.js';
export type {
  ChainBuild,
  BuildCall,
  BuildChain,
  BuildNotes,
  CallStatus,
  LinkOutcome,
  ParentLinkReason,
} from './chains/chain-builder.js';
export type { DiscardedDuplicate } from './chains/dedupe.js';
export type { TokenEntry, ParentResolution } from './records/token-entry.js';
export { maskCauses, type MaskCause, type MaskCauseCode, type MaskContext } from './chains/mask-causes.js';

// Verify
export { verifyDirectory, type VerifyResult, type VerifyOptions } from './verify/verify-directory.js';
export { FINDING_SEVERITY, type Finding, type FindingCode, type Severity } from './verify/findings.js';

// Operations that change a store
export { freezeRollout, snapshotSummary, type Snapshot } from './ops/freeze.js';
export { retireRollouts, type RemovalResult } from './ops/retire.js';
export { dropRollout, dropRolloutOutcome, type DropOutcome, type DropRefusal } from './ops/drop.js';
export { deleteRollouts } from './ops/delete.js';
export { sweepRetired, type SweepOptions, type SweepResult, type SweepCandidate } from './ops/sweep.js';

// Export
export { exportStore } from './export/export-store.js';
export type { ExportOptions, ExportHooks, ExportSummary, ExportStream } from './export/export-run.js';
export type { ExportedRollout } from './export/export-item.js';
export { EXPORT_FORMATS, type ExportFormatName } from './export/formats.js';
export { parseFieldSelection, type FieldSelection } from './export/fields.js';

export { tokcapVersion } from './version.js';
