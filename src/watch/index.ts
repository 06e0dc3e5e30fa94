/**
 * The UI-free model of `tokcap watch`: directory rows, rollout detail, the --once JSON snapshot.
 * Nothing here imports React or Ink; the view (commands/watch/) renders these values.
 */
export { DirectoryModel, DEFAULT_READERS, type DirectoryModelOptions, type DirectorySnapshot, type WatchReaders, type FileStat } from './directory-model.js';
export {
  SORT_MODES,
  SORT_LABEL,
  NO_FILTER,
  deriveRow,
  directoryTotals,
  countRow,
  updateVisibleRows,
  VisibleRowsCache,
  nextSortMode,
  placeholderRow,
  packRow,
  rowData,
  PackedRow,
  rowMatches,
  visibleRows,
  type DirectoryTotals,
  type RolloutRow,
  type RowError,
  type RowFilter,
  type RowDelta,
  type SortMode,
} from './rows.js';
export { previewRollout, readRow, rowPreview, type PreviewContext, type PreviewOutcome, type RowPreview, type RowRead } from './preview.js';
export { loadRolloutDetail, assembleDetail, chainTree, type RolloutDetail, type TreeNode, type UnplacedCall, type BuildVerdict, type DigestCheck, type DetailReaders } from '../status/rollout-detail.js';
export { watchSnapshotJson, rowJson, type WatchSnapshotJson, type WatchRolloutJson } from './snapshot-json.js';
