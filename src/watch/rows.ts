/**
 * The rows of `tokcap watch`'s directory view, as plain data: one row per rollout, derived from
 * the rollout's facts and a read-only preview build. No UI, no filesystem here: the store reads
 * live in directory-model.ts; the view only ever sees these values.
 */
import { errorFactsOf } from '../errors.js';
import type { MaskCause } from '../chains/mask-causes.js';
import type { RolloutFacts } from '../facts/rollout-facts.js';
import {
  CONDITIONS,
  knownVersion,
  type Condition,
  type RolloutStatus,
  type RolloutStatusAnswer,
} from '../status/rollout-status.js';
import { countRollout, emptySummary, type StatusSummary } from '../status/summary.js';
import type { Verdict, VerdictAnswer } from '../status/verdict.js';
import type { RowPreview } from '../rollout-read/row-read.js';
import { RowList, RowListBuilder } from './row-list.js';

export type { RolloutRow, RowError } from './rollout-row.js';
import type { RolloutRow, RowError } from './rollout-row.js';

/** One empty list for every empty list of every row (100,000 rows keep no 400,000 arrays). */
const NONE: readonly never[] = Object.freeze([]);

// A row as the model keeps it (`PackedRow`): the flags, status, verdict and conditions in one
// small integer, the lists that are almost always empty in one optional object. 100,000 rows
// then hold 9 fields each instead of 22 (about 100 bytes less per row), and a row crosses
// from the read worker as a few numbers.
const LOADED = 1;
const FROZEN = 2;
const RETIRED = 4;
const TORN_TAIL = 8;
const INCOMPLETE_FLAG = 16;
const UNBUILT = 32;
const STATUS_SHIFT = 6;
const VERDICT_SHIFT = 8;
const WOULD_MASK_SHIFT = 10;
const CONDITIONS_SHIFT = 12;
/** As many bits as there are conditions: a condition added to src/status is kept, not cut off. */
const CONDITIONS_MASK = (1 << CONDITIONS.length) - 1;

const STATUSES: readonly RolloutStatus[] = ['live', 'frozen', 'retired', 'unavailable'];
const VERDICT_CODES: readonly (Verdict | null)[] = [null, 'trainable', 'masked', 'unavailable'];
const WOULD_MASK_CODES: readonly (boolean | null)[] = [null, false, true];
/** One frozen list per combination of conditions (in CONDITIONS order, as src/status gives them). */
const CONDITION_LISTS: (readonly Condition[] | undefined)[] = [NONE];

function conditionsOfMask(mask: number): readonly Condition[] {
  return (CONDITION_LISTS[mask] ??= Object.freeze(CONDITIONS.filter((_, i) => mask & (1 << i))));
}

function maskOfConditions(conditions: readonly Condition[]): number {
  let mask = 0;
  for (const c of conditions) mask |= 1 << CONDITIONS.indexOf(c);
  return mask;
}

/** What a few rows have (lists, errors); null on a row that has none of it. */
interface RowExtra {
  readonly danglingIntents: readonly string[];
  readonly incompleteMarkers: readonly string[];
  readonly causes: readonly MaskCause[];
  readonly buildError?: string;
  readonly error?: RowError;
}

/**
 * A `RolloutRow` in 9 fields (and the model's two). Immutable; crosses threads as numbers
 * (batch-codec.ts). Not spreadable: `rowData` gives a plain copy.
 */
export class PackedRow implements RolloutRow {
  constructor(
    readonly id: string,
    readonly bits: number,
    readonly calls: number | null,
    readonly version: number | null,
    readonly mtimeMs: number,
    readonly changedAt: number | null,
    readonly seq: number,
    readonly snapshotId: string,
    readonly extra: RowExtra | null,
    /**
     * The change signature of the files this row was read from (file-signature.ts), and the
     * kinds present joined by `+`, for the model to tell whether to read it again; null when
     * unknown (not read, or the read failed). On the row, not in two maps beside it: ~90 bytes
     * per rollout less.
     */
    readonly readKey: number | null = null,
    readonly readKinds: string | null = null,
  ) {}

  get loaded(): boolean {
    return (this.bits & LOADED) !== 0;
  }
  get status(): RolloutStatus {
    return STATUSES[(this.bits >> STATUS_SHIFT) & 3];
  }
  get conditions(): readonly Condition[] {
    return conditionsOfMask((this.bits >> CONDITIONS_SHIFT) & CONDITIONS_MASK);
  }
  get frozen(): boolean {
    return (this.bits & FROZEN) !== 0;
  }
  get retired(): boolean {
    return (this.bits & RETIRED) !== 0;
  }
  get tornTail(): boolean {
    return (this.bits & TORN_TAIL) !== 0;
  }
  get incompleteFlag(): boolean {
    return (this.bits & INCOMPLETE_FLAG) !== 0;
  }
  get verdict(): Verdict | null {
    return VERDICT_CODES[(this.bits >> VERDICT_SHIFT) & 3];
  }
  get unbuilt(): boolean {
    return (this.bits & UNBUILT) !== 0;
  }
  get wouldMask(): boolean | null {
    return WOULD_MASK_CODES[(this.bits >> WOULD_MASK_SHIFT) & 3];
  }
  get danglingIntents(): readonly string[] {
    return this.extra?.danglingIntents ?? NONE;
  }
  get incompleteMarkers(): readonly string[] {
    return this.extra?.incompleteMarkers ?? NONE;
  }
  get causes(): readonly MaskCause[] {
    return this.extra?.causes ?? NONE;
  }
  get buildError(): string | undefined {
    return this.extra?.buildError;
  }
  get error(): RowError | undefined {
    return this.extra?.error;
  }
}

/** Any row (packed or a plain object) as a `PackedRow`; `over` replaces some of its fields. */
export function packRow(r: RolloutRow, over?: Partial<RolloutRow>): PackedRow {
  return packFields(over === undefined && !(r instanceof PackedRow) ? r : { ...rowData(r), ...over });
}

function packFields(v: RolloutRow): PackedRow {
  const list = <T>(a: readonly T[]): readonly T[] => (a.length === 0 ? NONE : a);
  const bits =
    (v.loaded ? LOADED : 0) |
    (v.frozen ? FROZEN : 0) |
    (v.retired ? RETIRED : 0) |
    (v.tornTail ? TORN_TAIL : 0) |
    (v.incompleteFlag ? INCOMPLETE_FLAG : 0) |
    (v.unbuilt ? UNBUILT : 0) |
    (STATUSES.indexOf(v.status) << STATUS_SHIFT) |
    (VERDICT_CODES.indexOf(v.verdict) << VERDICT_SHIFT) |
    (WOULD_MASK_CODES.indexOf(v.wouldMask) << WOULD_MASK_SHIFT) |
    (maskOfConditions(v.conditions) << CONDITIONS_SHIFT);
  const hasExtra =
    v.danglingIntents.length > 0 ||
    v.incompleteMarkers.length > 0 ||
    v.causes.length > 0 ||
    v.buildError !== undefined ||
    v.error !== undefined;
  const extra: RowExtra | null = hasExtra
    ? {
        danglingIntents: list(v.danglingIntents),
        incompleteMarkers: list(v.incompleteMarkers),
        causes: list(v.causes),
        ...(v.buildError !== undefined && { buildError: v.buildError }),
        ...(v.error !== undefined && { error: v.error }),
      }
    : null;
  return new PackedRow(v.id, bits, v.calls, v.version, v.mtimeMs, v.changedAt, v.seq, v.snapshotId, extra);
}

/**
 * The row with the model's bookkeeping set: when it changed, its sequence number, and the
 * signature of the files it was read from (`kinds` one string per combination, from the caller).
 */
export function withBookkeeping(
  r: PackedRow,
  changedAt: number | null,
  seq: number,
  signature?: { key: number; kinds: string },
): PackedRow {
  return new PackedRow(
    r.id,
    r.bits,
    r.calls,
    r.version,
    r.mtimeMs,
    changedAt,
    seq,
    r.snapshotId,
    r.extra,
    signature?.key ?? null,
    signature?.kinds ?? null,
  );
}

/** A plain-object copy of a row (packed or not), with every field as its own property. */
export function rowData(r: RolloutRow): RolloutRow {
  const out: RolloutRow = {
    id: r.id,
    loaded: r.loaded,
    status: r.status,
    conditions: r.conditions,
    frozen: r.frozen,
    retired: r.retired,
    tornTail: r.tornTail,
    incompleteFlag: r.incompleteFlag,
    calls: r.calls,
    danglingIntents: r.danglingIntents,
    incompleteMarkers: r.incompleteMarkers,
    version: r.version,
    snapshotId: r.snapshotId,
    mtimeMs: r.mtimeMs,
    changedAt: r.changedAt,
    verdict: r.verdict,
    unbuilt: r.unbuilt,
    wouldMask: r.wouldMask,
    causes: r.causes,
    seq: r.seq,
  };
  // Optional fields are left out rather than set to undefined.
  if (r.buildError !== undefined) (out as { buildError?: string }).buildError = r.buildError;
  if (r.error !== undefined) (out as { error?: RowError }).error = r.error;
  return out;
}

/** The row of a rollout not read yet. */
export function placeholderRow(id: string, mtimeMs = 0): PackedRow {
  return new PackedRow(
    id,
    (STATUSES.indexOf('live') << STATUS_SHIFT) | (VERDICT_CODES.indexOf(null) << VERDICT_SHIFT),
    0,
    0,
    mtimeMs,
    null,
    0,
    '',
    null,
  );
}

function wouldMaskOf(v: VerdictAnswer | undefined): boolean | null {
  return v === undefined || v.verdict === 'unavailable' ? null : v.verdict === 'masked';
}

export interface RowInputs {
  id: string;
  facts: RolloutFacts;
  status: RolloutStatusAnswer;
  preview?: RowPreview;
  changedAt: number | null;
  seq: number;
}

/**
 * Derives a row from what was read. What was not read is not shown as a value: an unavailable
 * rollout has no calls, version or intents (null and empty), a state that did not parse no version.
 */
export function deriveRow({ id, facts, status, preview, changedAt, seq }: RowInputs): PackedRow {
  let error: RowError | undefined = facts.errors.length > 0 ? errorFactsOf(facts.errors[0]) : undefined;
  if (preview?.kind === 'unreadable') error ??= preview.error;
  const built = preview?.kind === 'built' ? preview : undefined;
  const unread = status.status === 'unavailable';
  return packFields({
    id,
    loaded: true,
    status: status.status,
    conditions: status.conditions,
    frozen: facts.frozen,
    retired: facts.retired,
    tornTail: facts.torn_tail,
    incompleteFlag: facts.incomplete_flag,
    calls: unread ? null : facts.entries,
    // The preview's snapshot is the one the causes were computed from; prefer its view.
    danglingIntents: unread ? NONE : (built?.danglingIntents ?? facts.dangling_intents),
    incompleteMarkers: unread ? NONE : facts.incomplete_marker_calls,
    version: unread ? null : knownVersion(facts),
    snapshotId: facts.snapshot_id,
    mtimeMs: facts.mtime_ms,
    changedAt,
    verdict: preview?.verdict.verdict ?? null,
    unbuilt: preview?.verdict.unbuilt ?? false,
    wouldMask: wouldMaskOf(preview?.verdict),
    causes: built?.causes ?? [],
    buildError: built?.buildError,
    error,
    seq,
  });
}

/** A row for a rollout whose read failed as a whole: unavailable, nothing else claimed. */
export function errorRow(previous: RolloutRow, error: RowError, changedAt: number | null, seq: number): PackedRow {
  return packRow(previous, {
    loaded: true,
    status: 'unavailable',
    conditions: NONE,
    verdict: 'unavailable',
    unbuilt: true,
    wouldMask: null,
    causes: NONE,
    calls: null,
    version: null,
    danglingIntents: NONE,
    incompleteMarkers: NONE,
    error,
    changedAt,
    seq,
  });
}

// ---------------------------------------------------------------------------------------------
// Totals, filters and sort orders (shared by the live view, --once and its JSON)
// ---------------------------------------------------------------------------------------------

export interface DirectoryTotals {
  rollouts: number;
  /** Rows read at least once. */
  loaded: number;
  /** Counts of the loaded rows by status, condition and verdict (src/status/summary.ts). */
  summary: StatusSummary;
  invalidNames: number;
  tempStateFiles: number;
}

/** Counts the loaded rows with the library's summary (the same counts every command prints). */
export function directoryTotals(
  rows: Iterable<RolloutRow>,
  invalidNames: number,
  tempStateFiles: number,
): DirectoryTotals {
  const t: DirectoryTotals = { rollouts: 0, loaded: 0, summary: emptySummary(), invalidNames, tempStateFiles };
  for (const r of rows) countRow(t, r);
  return t;
}

/**
 * Adds a row to `totals` (`weight` -1: takes it out), as `directoryTotals` counts it: a model that
 * keeps its totals up to date as rows come and go pays per change, not per row of the directory.
 */
export function countRow(totals: DirectoryTotals, r: RolloutRow, weight: 1 | -1 = 1): void {
  totals.rollouts += weight;
  if (!r.loaded) return;
  totals.loaded += weight;
  countRollout(totals.summary, r, r.verdict === null ? undefined : { verdict: r.verdict, unbuilt: r.unbuilt }, weight);
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
  if (f.masked && r.verdict !== 'masked') return false;
  if (f.incomplete && !r.conditions.includes('incomplete')) return false;
  if (f.dangling && !r.conditions.includes('dangling')) return false;
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
const STATUS_RANK: Record<RolloutStatus, number> = { unavailable: 0, live: 1, frozen: 2, retired: 3 };

function byId(a: RolloutRow, b: RolloutRow): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const COMPARATORS: Record<SortMode, (a: RolloutRow, b: RolloutRow) => number> = {
  recent: (a, b) => b.mtimeMs - a.mtimeMs || byId(a, b),
  id: byId,
  state: (a, b) =>
    Number(!!b.error) - Number(!!a.error) ||
    STATUS_RANK[a.status] - STATUS_RANK[b.status] ||
    b.conditions.length - a.conditions.length ||
    Number(b.wouldMask === true) - Number(a.wouldMask === true) ||
    b.mtimeMs - a.mtimeMs ||
    byId(a, b),
  calls: (a, b) => (b.calls ?? -1) - (a.calls ?? -1) || byId(a, b),
};

/** Filters and sorts (a new array; the input is not modified). */
export function visibleRows(rows: Iterable<RolloutRow>, filter: RowFilter, sort: SortMode): RolloutRow[] {
  const out: RolloutRow[] = [];
  for (const r of rows) if (rowMatches(r, filter)) out.push(r);
  return out.sort(COMPARATORS[sort]);
}

/** What changed among the rows between two states of a directory. */
export interface RowDelta {
  /** Rows added or changed (as they are now). */
  readonly changed: readonly RolloutRow[];
  /** Ids of rows removed. */
  readonly removed: readonly string[];
  /**
   * The rows that were replaced or removed, as the old state had them (when known): a few
   * changes are then placed by binary search instead of a pass over every row.
   */
  readonly replaced?: readonly RolloutRow[];
}

/** Up to this many changes, `updateVisibleRows` places each by binary search. */
const FEW_CHANGES = 64;

/**
 * `visibleRows` of the new state, from `previous` (`visibleRows` of the old state, same filter
 * and sort) and what changed since: the rows that stayed keep their order, and the changed ones
 * are placed among them. A few changes with the rows they replaced are each placed by binary
 * search, copying only the blocks they touch (row-list.ts); more are sorted among themselves and
 * merged in, so a load of N rollouts shown as it goes costs O(N) per frame instead of a sort of
 * every row (O(N log N) comparisons) per frame.
 */
export function updateVisibleRows(previous: RowList, delta: RowDelta, filter: RowFilter, sort: SortMode): RowList {
  if (delta.changed.length === 0 && delta.removed.length === 0) return previous;
  const cmp = COMPARATORS[sort];
  // The order is total (ties broken by id), so an old row's place is exact.
  if (delta.replaced && delta.changed.length + delta.replaced.length <= FEW_CHANGES)
    return previous.update(
      delta.replaced,
      delta.changed.filter((r) => rowMatches(r, filter)),
      cmp,
    );
  const stale = new Set<string>(delta.removed);
  for (const r of delta.changed) stale.add(r.id);
  const added: RolloutRow[] = [];
  for (const r of delta.changed) if (rowMatches(r, filter)) added.push(r);
  added.sort(cmp);
  const out = new RowListBuilder();
  let a = 0;
  previous.forEach((r) => {
    if (stale.has(r.id)) return;
    while (a < added.length && cmp(added[a], r) < 0) out.push(added[a++]);
    out.push(r);
  });
  while (a < added.length) out.push(added[a++]);
  return out.done();
}

function sameFilter(a: RowFilter, b: RowFilter): boolean {
  return (
    a === b ||
    (a.search === b.search && a.masked === b.masked && a.incomplete === b.incomplete && a.dangling === b.dangling)
  );
}

/** A state of the directory as `VisibleRowsCache` needs it (the model's snapshot is one). */
export interface RowsState {
  readonly rows: readonly RolloutRow[];
  readonly version: number;
  /** What changed since the state of version `since`; absent when unknown (everything is sorted again). */
  readonly delta?: RowDelta & { readonly since: number };
}

/**
 * The visible rows of successive states of one directory for a view: each state's rows are
 * derived from the last ones computed (`updateVisibleRows`) when the state says what changed
 * since, and sorted afresh otherwise (first state, another filter or sort, a state skipped).
 */
export class VisibleRowsCache {
  private last: { version: number; filter: RowFilter; sort: SortMode; rows: RowList } | undefined;

  rows(state: RowsState, filter: RowFilter, sort: SortMode): RowList {
    const last = this.last;
    if (last && last.version === state.version && last.sort === sort && sameFilter(last.filter, filter))
      return last.rows;
    const rows =
      last && state.delta && last.version === state.delta.since && last.sort === sort && sameFilter(last.filter, filter)
        ? updateVisibleRows(last.rows, state.delta, filter, sort)
        : RowList.of(visibleRows(state.rows, filter, sort));
    this.last = { version: state.version, filter, sort, rows };
    return rows;
  }
}
