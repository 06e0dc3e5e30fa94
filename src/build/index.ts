/** The trajectory builder (`prefix_merging`) and the consumer result (docs/format.md#builder). */
export {
  buildChains,
  type BuildCall,
  type BuildChain,
  type BuildNotes,
  type CallStatus,
  type ChainBuild,
  type LinkOutcome,
  type ParentLinkReason,
} from './chain-builder.js';
export {
  assemble,
  assembleWithChains,
  BUILDER_NAME,
  consumerErrorString,
  consumerResultFor,
  failedBuild,
  finishConsumerResult,
  noRecordsResult,
  NO_SAFE_CHAIN,
  NO_TOKEN_RECORDS,
  type AssembledBuild,
  type BuildMetrics,
  type CaptureSnapshot,
  type ConsumerResult,
  type FailedBuildResult,
  type SnapshotFacts,
  type SuccessfulBuildResult,
} from './consumer-result.js';
export { checkPrefixContiguity, projectChain, type ProjectedResponse } from './projection.js';
export { PythonBuildError } from './python-semantics.js';
