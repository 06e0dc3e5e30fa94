import { describe, expect, it } from 'vitest';
import { CONDITIONS, ROLLOUT_STATUSES, type Condition } from '../../../src/status/rollout-status.js';
import { VERDICTS } from '../../../src/status/verdict.js';
import { decodeOutcomes, encodeOutcomes } from '../../../src/watch/batch-codec.js';
import {
  errorRow,
  packRow,
  placeholderRow,
  rowData,
  withBookkeeping,
  PackedRow,
  type RolloutRow,
} from '../../../src/watch/rows.js';
import { rowJson } from '../../../src/watch/snapshot-json.js';

/** A plain row with every field given. */
function plain(over: Partial<RolloutRow> = {}): RolloutRow {
  return {
    ...rowData(placeholderRow('r1', 1700000000123.5)),
    loaded: true,
    calls: 7,
    version: 3,
    snapshotId: 'snap-1',
    changedAt: 42,
    seq: 9,
    ...over,
  };
}

/** As a row crosses from the read worker (encoded, cloned, decoded), its bookkeeping set again as the model does. */
function crossed(r: PackedRow): PackedRow {
  const [out] = decodeOutcomes(structuredClone(encodeOutcomes([{ ok: true, row: r }])), [r.id]);
  if (!out.ok || !('row' in out)) throw new Error('not a row');
  return withBookkeeping(out.row, r.changedAt, r.seq);
}

describe('packed rows', () => {
  it('keep every status, verdict, would-mask and flag, through a thread crossing too', () => {
    let n = 0;
    for (const status of ROLLOUT_STATUSES)
      for (const verdict of [null, ...VERDICTS])
        for (const wouldMask of [null, false, true])
          for (let flags = 0; flags < 64; flags++) {
            const r = plain({
              status,
              verdict,
              wouldMask,
              loaded: (flags & 1) !== 0,
              frozen: (flags & 2) !== 0,
              retired: (flags & 4) !== 0,
              tornTail: (flags & 8) !== 0,
              incompleteFlag: (flags & 16) !== 0,
              unbuilt: (flags & 32) !== 0,
            });
            const packed = packRow(r);
            expect(rowData(packed)).toEqual(r);
            expect(rowData(crossed(packed))).toEqual(r);
            n++;
          }
    expect(n).toBe(ROLLOUT_STATUSES.length * 4 * 3 * 64);
  });

  it('keep every combination of conditions, in the order src/status gives them', () => {
    for (let mask = 0; mask < 1 << CONDITIONS.length; mask++) {
      const conditions = CONDITIONS.filter((_, i) => mask & (1 << i)) as Condition[];
      const packed = packRow(plain({ conditions }));
      expect(packed.conditions).toEqual(conditions);
      expect(crossed(packed).conditions).toEqual(conditions);
    }
  });

  it('keep lists, causes, build errors and read errors; rows without them share one empty list', () => {
    const r = plain({
      danglingIntents: ['c1', 'c2'],
      incompleteMarkers: ['', 'c3'],
      causes: [{ code: 'dangling_intents', message: 'two intents without entries', calls: ['c1', 'c2'] }],
      buildError: 'no chain',
      error: { kind: 'corrupt', message: 'bad line 3' },
    });
    const packed = packRow(r);
    expect(rowData(packed)).toEqual(r);
    expect(rowData(crossed(packed))).toEqual(r);
    expect(rowJson(crossed(packed))).toEqual(rowJson(r));
    const a = packRow(plain());
    const b = crossed(packRow(plain({ id: 'r2' })));
    expect(a.extra).toBeNull();
    expect(b.danglingIntents).toBe(a.danglingIntents);
    expect(b.causes).toBe(a.conditions);
    expect('buildError' in rowData(a) || 'error' in rowData(a)).toBe(false);
  });

  it('an unreadable row stays unreadable: unavailable, no verdict or facts of its own, its error kept', () => {
    const before = packRow(
      plain({
        verdict: 'masked',
        wouldMask: true,
        conditions: ['dangling'],
        causes: [{ code: 'dangling_intents', message: 'x' }],
      }),
    );
    const failed = errorRow(before, { kind: 'lock_timeout', message: 'lock held' }, 5, 10);
    for (const r of [failed, crossed(failed)]) {
      expect(r.loaded).toBe(true);
      expect(r.status).toBe('unavailable');
      expect(r.verdict).toBe('unavailable');
      expect(r.wouldMask).toBeNull();
      expect(r.conditions).toEqual([]);
      expect(r.causes).toEqual([]);
      expect(r.error).toEqual({ kind: 'lock_timeout', message: 'lock held' });
      expect(r.seq).toBe(10);
    }
    // Nothing of it is known now: no calls, version or intents (null and empty, never a stale value).
    expect([failed.calls, failed.version, failed.danglingIntents, failed.incompleteMarkers]).toEqual([
      null,
      null,
      [],
      [],
    ]);
    expect([crossed(failed).calls, crossed(failed).version]).toEqual([null, null]);
  });

  it('a placeholder is not loaded and claims nothing', () => {
    const p = placeholderRow('r9', 5);
    expect(rowData(p)).toEqual({
      ...rowData(plain()),
      id: 'r9',
      loaded: false,
      calls: 0,
      version: 0,
      snapshotId: '',
      mtimeMs: 5,
      changedAt: null,
      seq: 0,
    });
    expect(p.verdict).toBeNull();
    expect(p.error).toBeUndefined();
    expect(rowData(withBookkeeping(p, 3, 4))).toEqual({ ...rowData(p), changedAt: 3, seq: 4 });
  });
});
