/**
 * The rows of `tokcap watch`'s directory view, as plain data: one row per rollout, derived from
 * the rollout's facts and a read-only preview build. No UI, no filesystem here: the store reads
 * live in directory-model.ts; the view only ever sees these values.
 */
import type { ErrorKind } from '../errors.js';
import type { MaskCause } from '../build/mask-causes.js';
import type { RolloutFacts } from '../facts/rollout-facts.js';
import type { RowPreview } from './preview.js';

/**
 * The one-word state of a rollout, by precedence: a retired tombstone, then a torn tail (crash
 * artefact), dangling intents, an incomplete flag or marker, frozen, live.
 */
export const ROW_STATES = ['live', 'frozen', 'retired', 'incomplete', 'dangling', 'torn'] as const;
export type RowState = (typeof ROW_STATES)[number];

export interface RowError {
  kind: ErrorKind | string;
  message: string;
}

export interface RolloutRow {
  readonly id: string;
  /** false until the first read of this rollout finished (the other fields are placeholders). */
  readonly loaded: boolean;
  readonly state: RowState;
  readonly frozen: boolean;
  readonly retired: boolean;
  readonly tornTail: boolean;
  readonly incompleteFlag: boolean;
  /** Entry lines in J (what `inspect` counts). */
  readonly calls: number;
  readonly danglingIntents: readonly string[];
  /** Call ids in the incomplete-marker file, one per mark, "" kept. */
  readonly incompleteMarkers: readonly string[];
  readonly version: number;
  readonly snapshotId: string;
  /** Newest mtime among the rollout's files (ms since the epoch); 0 when unknown. */
  readonly mtimeMs: number;
  /** When this model saw the rollout change (ms, model clock); null for what the first scan found. */
  readonly changedAt: number | null;
  /**
   * Whether the reference consumer would mask this rollout if it were consumed now; null when
   * not built (a retired tombstone is never consumed again, or the row is not loaded yet).
   */
  readonly wouldMask: boolean | null;
  /** Every mask cause, in `build`'s vocabulary (empty when not masked). */
  readonly causes: readonly MaskCause[];
  /** The preview build's `error` string, for a failed build. */
  readonly buildError?: string;
  /** Why the rollout (or part of it) could not be read; the row still shows what was read. */
  readonly error?: RowError;
  /** Bumped every time the row's content changes (views key reloads on it). */
  readonly seq: number;
}

export function placeholderRow(id: string, mtimeMs = 0): RolloutRow {
  return {
    id,
    loaded: false,
    state: 'live',
    frozen: false,
    retired: false,
    tornTail: false,
    incompleteFlag: false,
    calls: 0,
    danglingIntents: [],
    incompleteMarkers: [],
    version: 0,
    snapshotId: '',
    mtimeMs,
    changedAt: null,
    wouldMask: null,
    causes: [],
    seq: 0,
  };
}

export function rowState(f: Pick<RolloutFacts, 'retired' | 'torn_tail' | 'dangling_intents' | 'incomplete_flag' | 'incomplete_marker_calls' | 'frozen'>): RowState {
  if (f.retired) return 'retired';
  if (f.torn_tail) return 'torn';
  if (f.dangling_intents.length > 0) return 'dangling';
  if (f.incomplete_flag || f.incomplete_marker_calls.length > 0) return 'incomplete';
  if (f.frozen) return 'frozen';
  return 'live';
}

export interface RowInputs {
  id: string;
  facts: RolloutFacts;
  /** Absent for a retired rollout (not built). */
  preview?: RowPreview;
  changedAt: number | null;
  seq: number;
}

/** Derives a row from what was read. */
export function deriveRow({ id, facts, preview, changedAt, seq }: RowInputs): RolloutRow {
  let error: RowError | undefined = facts.errors.length > 0 ? { kind: facts.errors[0].kind, message: facts.errors[0].message } : undefined;
  if (preview?.kind === 'unreadable') error ??= preview.error;
  const built = preview?.kind === 'built' ? preview : undefined;
  return {
    id,
    loaded: true,
    state: rowState(facts),
    frozen: facts.frozen,
    retired: facts.retired,
    tornTail: facts.torn_tail,
    incompleteFlag: facts.incomplete_flag,
    calls: facts.entries,
    // The preview's snapshot is the one the causes were computed from; prefer its view.
    danglingIntents: built?.danglingIntents ?? facts.dangling_intents,
    incompleteMarkers: facts.incomplete_marker_calls,
    version: facts.version,
    snapshotId: facts.snapshot_id,
    mtimeMs: facts.mtime_ms,
    changedAt,
    wouldMask: built ? built.wouldMask : null,
    causes: built?.causes ?? [],
    buildError: built?.buildError,
    error,
    seq,
  };
}

/** A row for a rollout whose read failed as a whole. */
export function errorRow(previous: RolloutRow, error: RowError, changedAt: number | null, seq: number): RolloutRow {
  return { ...previous, loaded: true, error, changedAt, seq };
}

// ---------------------------------------------------------------------------------------------
// Totals, filters and sort orders (shared by the live view, --once and its JSON)
// ---------------------------------------------------------------------------------------------

export interface DirectoryTotals {
  rollouts: number;
  /** Rows read at least once. */
  loaded: number;
  live: number;
  frozen: number;
  retired: number;
  /** Incomplete flag or at least one incomplete marker. */
  incomplete: number;
  /** Rollouts with at least one dangling intent. */
  dangling: number;
  torn: number;
  wouldMask: number;
  unreadable: number;
  invalidNames: number;
  tempStateFiles: number;
}

/**
 * Counts rollouts by condition. Conditions overlap (a frozen rollout can have a torn tail); the
 * row's badge shows only the first by precedence, the totals count each.
 */
export function directoryTotals(rows: Iterable<RolloutRow>, invalidNames: number, tempStateFiles: number): DirectoryTotals {
  const t: DirectoryTotals = {
    rollouts: 0,
    loaded: 0,
    live: 0,
    frozen: 0,
    retired: 0,
    incomplete: 0,
    dangling: 0,
    torn: 0,
    wouldMask: 0,
    unreadable: 0,
    invalidNames,
    tempStateFiles,
  };
  for (const r of rows) {
    t.rollouts++;
    if (!r.loaded) continue;
    t.loaded++;
    if (r.retired) t.retired++;
    else if (r.frozen) t.frozen++;
    else t.live++;
    if (r.incompleteFlag || r.incompleteMarkers.length > 0) t.incomplete++;
    if (r.danglingIntents.length > 0) t.dangling++;
    if (r.tornTail) t.torn++;
    if (r.wouldMask === true) t.wouldMask++;
    if (r.error) t.unreadable++;
  }
  return t;
}

export interface RowFilter {
  /** Substring of the id (case-insensitive); empty = all. */
  search: string;
  masked: boolean;
  incomplete: boolean;
  dangling: boolean;
}

export const NO_FILTER: RowFilter = { search: '', masked: false, incomplete: false, dangling: false };

export function rowMatches(r: RolloutRow, f: RowFilter): boolean {
  if (f.search !== '' && !r.id.toLowerCase().includes(f.search.toLowerCase())) return false;
  if (f.masked && r.wouldMask !== true) return false;
  if (f.incomplete && !(r.incompleteFlag || r.incompleteMarkers.length > 0)) return false;
  if (f.dangling && r.danglingIntents.length === 0) return false;
  return true;
}

export const SORT_MODES = ['recent', 'id', 'state', 'calls'] as const;
export type SortMode = (typeof SORT_MODES)[number];

export const SORT_LABEL: Record<SortMode, string> = {
  recent: 'recent first',
  id: 'id',
  state: 'state',
  calls: 'most calls',
};

export function nextSortMode(m: SortMode): SortMode {
  return SORT_MODES[(SORT_MODES.indexOf(m) + 1) % SORT_MODES.length];
}

/** Most alarming first: what needs a look sorts to the top in `state` order. */
const STATE_RANK: Record<RowState, number> = { torn: 0, dangling: 1, incomplete: 2, live: 3, frozen: 4, retired: 5 };

function byId(a: RolloutRow, b: RolloutRow): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const COMPARATORS: Record<SortMode, (a: RolloutRow, b: RolloutRow) => number> = {
  recent: (a, b) => b.mtimeMs - a.mtimeMs || byId(a, b),
  id: byId,
  state: (a, b) =>
    Number(!!b.error) - Number(!!a.error) ||
    STATE_RANK[a.state] - STATE_RANK[b.state] ||
    Number(b.wouldMask === true) - Number(a.wouldMask === true) ||
    b.mtimeMs - a.mtimeMs ||
    byId(a, b),
  calls: (a, b) => b.calls - a.calls || byId(a, b),
};

/** Filters and sorts (a new array; the input is not modified). */
export function visibleRows(rows: Iterable<RolloutRow>, filter: RowFilter, sort: SortMode): RolloutRow[] {
  const out: RolloutRow[] = [];
  for (const r of rows) if (rowMatches(r, filter)) out.push(r);
  return out.sort(COMPARATORS[sort]);
}
