/**
 * `tokcap export` as a library: rollouts of a capture directory written as jsonl build results,
 * a tinker training-run directory, a Parquet dataset or a capture store of their own, streamed
 * one rollout at a time, atomically. No CLI or UI imports here.
 */
export { exportStore, jsonlRecord, exportedCauses, tokcapVersion } from './export-store.js';
export type { ExportOptions, ExportHooks, ExportSummary } from './export-run.js';
export { EXPORT_FORMATS, type ExportFormatName } from './formats.js';
export {
  buildForExport,
  type ExportBuild,
  type MainChainStep,
  type BuildForExportOptions,
} from './build-for-export.js';
export {
  parseFieldSelection,
  applyFieldSelection,
  selectsEverything,
  slimItem,
  ALL_FIELDS,
  EXPORT_RECORD_KEYS,
  TOKENS_PSEUDO_FIELD,
  TOKEN_ARRAY_COUNTS,
  TOKEN_ARRAYS_REMOVED,
  type FieldSelection,
} from './fields.js';
export {
  AtomicOutput,
  checkOutputTarget,
  isTemporaryOutputName,
  isTokcapExportDirectory,
  tempPathFor,
  TEMP_MARKER,
  OLD_MARKER,
  type OutputKind,
  type OutputTargetOptions,
} from './atomic-output.js';
export {
  GroupIndexer,
  ExportTotals,
  rolloutGroupKey,
  iterationDirName,
  tinkerRolloutSummary,
  tinkerMetricsRecord,
  tinkerConfig,
  tinkerError,
  tinkerRolloutOrder,
  prettyJson,
  REWARD_SOURCE_NOT_CAPTURED,
  TINKER_CONFIG,
  TINKER_METRICS,
  TINKER_ITERATION_DIR,
  TINKER_ROLLOUT_SUMMARIES,
  TINKER_SCHEMA_VERSION,
  TINKER_SPLIT,
  TINKER_METRICS_NAMESPACE,
} from './tinker.js';
export { LineSink } from './line-sink.js';
