/**
 * tokcap's public library API. Data path: directory scan (layout) → rollout files (state,
 * sidefiles, jsonl) → entries (records) → chains (build) → results (facts, verify, build).
 * This module imports no CLI or UI package.
 */
export { TokcapError, isTokcapError, toTokcapError, type ErrorKind, type ErrorFacts, type PyErrorClass, type SystemError } from './errors.js';

// Layout and ids
export { isValidRolloutId, assertValidRolloutId, validateRolloutIdBatch, dedupeIds, invalidRolloutIdError } from './layout/rollout-id.js';
export { pyRepr } from './layout/py-repr.js';
export { SUFFIX, CAPTURE_SUFFIXES, rolloutPaths, rolloutFileName, type FileKind, type RolloutPaths } from './layout/file-names.js';
export { classifyName, scanDirectory, sortedRolloutIds, type DirectoryListing, type EntryClass } from './layout/scan-directory.js';

// JSON
export { JsonFloat, truthy, isJsonObject, type JsonValue, type JsonObject } from './json/value.js';
export { parseJson, parseJsonBytes } from './json/parse-json.js';
export { canonicalJson, canonicalJsonBytes, orderedJson, compareCodePoints } from './json/canonical-json.js';
export { formatFloat } from './json/float-layout.js';
export { round4 } from './json/round4.js';

// Records, digests, JSONL
export {
  tokenEntrySchema,
  defineTokenEntrySchema,
  validateTokenEntry,
  entryRuleViolation,
  KNOWN_FIELDS,
  type TokenEntry,
  type TokenEntrySchema,
  type ParentResolution,
} from './records/token-entry.js';
export { entryToJson, canonicalEntryJson } from './records/canonical-entry.js';
export { computeTokenDigest, computeTokenDigestOfParts, sha256Hex, EMPTY_TOKEN_DIGEST, TokenSequence, type TokenId } from './digest/token-digest.js';
export { scanLines, scanFileLines, type ScannedLine, type ScanOptions } from './jsonl/line-scanner.js';
export { classifyLine, type LineVerdict } from './jsonl/classify-line.js';
export { readEntries, type EntriesRead } from './jsonl/read-entries.js';

// State and side files
export { readState } from './state/read-state.js';
export { writeState, type StateWriteVariant } from './state/write-state.js';
export * as stateFields from './state/rollout-state.js';
export type { RolloutState } from './state/rollout-state.js';
export { parseIntents, readIntents, danglingIntents } from './sidefiles/intents.js';
export { parseIncompleteMarkers, readIncompleteMarkers } from './sidefiles/incomplete-markers.js';

// Locks
export { withRolloutLock, type RolloutLockOptions, type HeldLock, type LockMode } from './lock/rollout-lock.js';

// Operations
export { DEFAULT_LOCK_WAIT_MS, type StoreOptions } from './ops/store.js';
export { reconcileIndex, type ReconcileResult } from './ops/reconcile.js';
export { freezeRollout, freezableRollouts, newSnapshotId, snapshotSummary, type Snapshot } from './ops/freeze.js';
export { tokcapVersion } from './version.js';
export { readSnapshotReadOnly, type ReadOnlySnapshot } from './ops/read-snapshot.js';
export { dropRollout, dropRolloutOutcome, type DropOutcome, type DropRefusal } from './ops/drop.js';
export { retireRollouts, retireRolloutsOutcome, type RemovalResult } from './ops/retire.js';
export { deleteRollouts } from './ops/delete.js';
export { sweepRetired, type SweepResult, type SweepOptions, type SweepCandidate } from './ops/sweep.js';
export { appendEntry, beginCall, markIncomplete, type AppendResult, type WriterOptions } from './ops/writer.js';

// Build (the reference consumer, prefix_merging)
export { buildRollout, buildRolloutDetailed, type BuildRolloutOptions, type DetailedBuild } from './build/build-rollout.js';
export { buildChains, type ChainBuild, type BuildCall, type BuildChain, type BuildNotes } from './build/chain-builder.js';
export { assemble, failedBuild, noRecordsResult, finishConsumerResult, type ConsumerResult } from './build/consumer-result.js';
export { maskCauses, describeReason, type MaskCause, type MaskCauseCode, type MaskContext } from './build/mask-causes.js';

// Export
export * from './export/index.js';

// Fixtures
export { generateStore, MIX_SHAPES, shapeOf, type FixtureOptions, type MixShape } from './fixture/generate-store.js';

// Rollout status, consumer verdict and summary counts (docs/cli.md#contract-v2)
export {
  ROLLOUT_STATUSES,
  CONDITIONS,
  rolloutStatus,
  unavailableStatus,
  isUnavailableKind,
  readRolloutStatus,
  VERDICTS,
  verdictOf,
  unavailableVerdict,
  emptySummary,
  countRollout,
  summarise,
  summaryJson,
  type RolloutStatus,
  type Condition,
  type RolloutStatusAnswer,
  type StatusRead,
  type Verdict,
  type VerdictAnswer,
  type StatusSummary,
  type StatusSummaryJson,
} from './status/index.js';

// Results
export { rolloutFacts, type RolloutFacts, type FactsOptions } from './facts/rollout-facts.js';
export { directoryFacts, type DirectoryFacts, type DirectoryFactsOptions } from './facts/directory-facts.js';
export { verifyRollout } from './verify/verify-rollout.js';
export { verifyDirectory, type VerifyResult, type VerifyOptions } from './verify/verify-directory.js';
export type { ThreadOptions } from './threads/parallel-rollouts.js';
export { FINDING_SEVERITY, compareFindings, type Finding, type FindingCode, type Severity } from './verify/findings.js';
