/**
 * The messages of a batch between the main thread and the read worker (read-worker.ts), as a
 * few flat arrays instead of objects: the copy records going out (~8 objects per rollout) and the
 * outcomes coming back (a row, its signature) would otherwise be structured-cloned object by
 * object, on the main thread, which is the load's bottleneck. Numbers go in one Float64Array
 * (transferred, not copied); ids as one string; what few rollouts have (errors, lists, a
 * snapshot id) beside them, by index.
 */
import type { CopiedKind, CopyError, RolloutCopyRecord } from '../ops/rollout-copy.js';
import { COPIED_KINDS } from '../ops/rollout-copy.js';
import type { RowReadOutcome } from './row-batch.js';
import { PackedRow, type RowError } from './rows.js';

/** Per copied kind: flags bit (span, stamp), then at, length, ino, size, mtimeMs. */
const PER_KIND = 5;
const PER_RECORD = 1 + PER_KIND * COPIED_KINDS.length;

export interface EncodedRecords {
  /** The rollout ids joined by newlines (an id has none). */
  ids: string;
  numbers: Float64Array;
  /** [record index, errors, failure] of the records that have either. */
  odd: [number, Partial<Record<CopiedKind, CopyError>> | undefined, CopyError | undefined][];
}

export function encodeRecords(records: readonly RolloutCopyRecord[]): EncodedRecords {
  const numbers = new Float64Array(records.length * PER_RECORD);
  const odd: EncodedRecords['odd'] = [];
  const ids: string[] = [];
  records.forEach((r, i) => {
    ids.push(r.rolloutId);
    const o = i * PER_RECORD;
    let flags = 0;
    COPIED_KINDS.forEach((kind, k) => {
      const span = r.spans[kind];
      const stamp = r.stamps[kind];
      const at = o + 1 + k * PER_KIND;
      if (span) {
        flags |= 1 << (2 * k);
        numbers[at] = span.at;
        numbers[at + 1] = span.length;
      }
      if (stamp) {
        flags |= 2 << (2 * k);
        numbers[at + 2] = stamp.ino;
        numbers[at + 3] = stamp.size;
        numbers[at + 4] = stamp.mtimeMs;
      }
    });
    numbers[o] = flags;
    if (r.errors || r.failure) odd.push([i, r.errors, r.failure]);
  });
  return { ids: ids.join('\n'), numbers, odd };
}

export function decodeRecords(e: EncodedRecords): RolloutCopyRecord[] {
  const ids = e.ids === '' ? [] : e.ids.split('\n');
  const records = ids.map((rolloutId, i): RolloutCopyRecord => {
    const o = i * PER_RECORD;
    const flags = e.numbers[o];
    const record: RolloutCopyRecord = { rolloutId, spans: {}, stamps: {} };
    COPIED_KINDS.forEach((kind, k) => {
      const at = o + 1 + k * PER_KIND;
      if (flags & (1 << (2 * k))) record.spans[kind] = { at: e.numbers[at], length: e.numbers[at + 1] };
      if (flags & (2 << (2 * k)))
        record.stamps[kind] = { ino: e.numbers[at + 2], size: e.numbers[at + 3], mtimeMs: e.numbers[at + 4] };
    });
    return record;
  });
  for (const [i, errors, failure] of e.odd) {
    if (errors) records[i].errors = errors;
    if (failure) records[i].failure = failure;
  }
  return records;
}

/** Per outcome: tag, bits, calls, version, mtimeMs, signature key, index of its kinds in `words`. */
const PER_OUTCOME = 7;
const ROW = 0;
const ROW_SIGNED = 1;
const GONE = 2;
const FAILED = 3;

export interface EncodedOutcomes {
  numbers: Float64Array;
  /** The signatures' kinds strings (a few distinct ones per batch). */
  words: string[];
  /** [outcome index, snapshot id, extra, error] of the outcomes that have any of those. */
  odd: [number, string, PackedRow['extra'], RowError | undefined][];
}

/** The outcomes of a batch (their rows' bookkeeping, `changedAt` and `seq`, is the model's: not sent). */
export function encodeOutcomes(outcomes: readonly RowReadOutcome[]): EncodedOutcomes {
  const numbers = new Float64Array(outcomes.length * PER_OUTCOME);
  const words: string[] = [];
  const odd: EncodedOutcomes['odd'] = [];
  outcomes.forEach((out, i) => {
    const o = i * PER_OUTCOME;
    if (!out.ok) {
      numbers[o] = FAILED;
      odd.push([i, '', null, out.error]);
      return;
    }
    if ('gone' in out) {
      numbers[o] = GONE;
      return;
    }
    const r = out.row;
    numbers[o] = out.signature ? ROW_SIGNED : ROW;
    numbers[o + 1] = r.bits;
    // NaN stands for null (not read) in the numbers.
    numbers[o + 2] = r.calls ?? NaN;
    numbers[o + 3] = r.version ?? NaN;
    numbers[o + 4] = r.mtimeMs;
    if (out.signature) {
      numbers[o + 5] = out.signature.key;
      let w = words.indexOf(out.signature.kinds);
      if (w === -1) w = words.push(out.signature.kinds) - 1;
      numbers[o + 6] = w;
    }
    if (r.snapshotId !== '' || r.extra !== null) odd.push([i, r.snapshotId, r.extra, undefined]);
  });
  return { numbers, words, odd };
}

/** The outcomes of `encodeOutcomes`, their rows with this thread's `ids` (the batch's, in order). */
export function decodeOutcomes(e: EncodedOutcomes, ids: readonly string[]): RowReadOutcome[] {
  const n = e.numbers.length / PER_OUTCOME;
  const snapshotIds: string[] = new Array<string>(n).fill('');
  const extras: PackedRow['extra'][] = new Array<PackedRow['extra']>(n).fill(null);
  const errors: (RowError | undefined)[] = new Array<RowError | undefined>(n);
  for (const [i, snapshotId, extra, error] of e.odd) {
    snapshotIds[i] = snapshotId;
    extras[i] = extra;
    errors[i] = error;
  }
  const out: RowReadOutcome[] = [];
  for (let i = 0; i < n; i++) {
    const o = i * PER_OUTCOME;
    const tag = e.numbers[o];
    if (tag === FAILED) out.push({ ok: false, error: errors[i]! });
    else if (tag === GONE) out.push({ ok: true, gone: true });
    else {
      const row = new PackedRow(
        ids[i],
        e.numbers[o + 1],
        orNull(e.numbers[o + 2]),
        orNull(e.numbers[o + 3]),
        e.numbers[o + 4],
        null,
        0,
        snapshotIds[i],
        extras[i],
      );
      out.push(
        tag === ROW_SIGNED
          ? { ok: true, row, signature: { key: e.numbers[o + 5], kinds: e.words[e.numbers[o + 6]] } }
          : { ok: true, row },
      );
    }
  }
  return out;
}

function orNull(n: number): number | null {
  return Number.isNaN(n) ? null : n;
}
