import { stripReferenceWhitespace } from '../records/coerce.js';
import { TokcapError } from '../errors.js';
import { JsonFloat, isJsonInt, isJsonObject, truthy, type JsonObject, type JsonValue } from '../json/value.js';

/**
 * A rollout's state file (docs/format.md#state), kept as the parsed JSON object so that unknown keys
 * and their int/float kinds survive every rewrite. Accessors apply the reference's reading rules.
 */
export interface RolloutState {
  /** Whether the state file exists (a missing one reads as the defaults). */
  exists: boolean;
  /** The whole object: written back as is (sorted on write). */
  data: JsonObject;
}

export function defaultStateData(): JsonObject {
  return {
    entry_digests: {},
    frozen: false,
    incomplete: false,
    indexed_size: 0,
    retired: false,
    snapshot_id: '',
    version: 0,
  };
}

export const isFrozen = (s: RolloutState): boolean => truthy(s.data.frozen);
export const isRetired = (s: RolloutState): boolean => truthy(s.data.retired);
export const isIncompleteFlag = (s: RolloutState): boolean => truthy(s.data.incomplete);

/**
 * Python `int(state.get("version", 0))`; anything int() refuses is corruption. So is a version
 * beyond 2^53: no store reaches it by counting changes, a JS number cannot hold it exactly (2^64-1
 * would round up to 2^64 and make every later state write fail), and printing it would fail.
 */
export function stateVersion(s: RolloutState, rolloutId: string): number {
  const v = pyInt(s.data.version ?? 0, rolloutId);
  if (!Number.isSafeInteger(v)) {
    throw new TokcapError('corrupt', `Invalid token-capture state for rollout ${rolloutId}: version is out of range`, {
      rolloutId,
      pyClass: 'ValueError',
    });
  }
  return v;
}

function pyInt(v: JsonValue, rolloutId: string): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') {
    if (Number.isFinite(v)) return Math.trunc(v);
  } else if (typeof v === 'bigint') {
    return Number.isSafeInteger(Number(v)) ? Number(v) : Number.POSITIVE_INFINITY;
  } else if (v instanceof JsonFloat) {
    if (Number.isFinite(v.value)) return Math.trunc(v.value);
  } else if (typeof v === 'string') {
    // Python int(): its whitespace, not JavaScript's (\ufeff is \s, \x85 is not).
    const s = stripReferenceWhitespace(v);
    if (/^[+-]?\d+(?:_\d+)*$/.test(s)) return Number(s.replace(/_/g, ''));
  }
  throw new TokcapError('corrupt', `Invalid token-capture state for rollout ${rolloutId}: version is not an integer`, {
    rolloutId,
    pyClass: 'ValueError',
  });
}

/** `snapshot_id` as a string (undefined when the key is absent, docs/format.md#state-defaults). */
export function snapshotId(s: RolloutState): string | undefined {
  const v = s.data.snapshot_id;
  if (v === undefined) return undefined;
  return typeof v === 'string' ? v : String(v);
}

/** The index, or undefined when `entry_digests` is not an object (legacy). */
export function entryDigests(s: RolloutState): Record<string, string> | undefined {
  const v = s.data.entry_digests;
  return isJsonObject(v) ? (v as Record<string, string>) : undefined;
}

/**
 * `indexed_size` when it is an integer. `boolAsInt` follows the reference's reconciliation,
 * where a JSON boolean counts as an integer (docs/format.md#legacy-state); facts and verify do not count it.
 */
export function indexedSize(s: RolloutState, boolAsInt: boolean): number | undefined {
  const v = s.data.indexed_size;
  if (typeof v === 'boolean') return boolAsInt ? (v ? 1 : 0) : undefined;
  if (v === undefined || !isJsonInt(v)) return undefined;
  return Number(v);
}

/** Call ids of the `refusals` list (newer store); refused intents are not dangling. */
export function refusalCallIds(s: RolloutState): string[] {
  const v = s.data.refusals;
  if (!Array.isArray(v)) return [];
  const out: string[] = [];
  for (const r of v) {
    if (isJsonObject(r) && typeof r.model_call_id === 'string') out.push(r.model_call_id);
  }
  return out;
}

/** The fence of a drop/retire (docs/format.md#drop step 4): everything kept but the index, refusals, retired. */
export function fenceOf(s: RolloutState): JsonObject {
  return { ...s.data, retired: true, indexed_size: 0, entry_digests: {}, refusals: [] };
}
