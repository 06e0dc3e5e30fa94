import { describe, expect, it } from 'vitest';
import type { RolloutCopyRecord } from '../../../src/ops/rollout-copy.js';
import { decodeOutcomes, decodeRecords, encodeOutcomes, encodeRecords } from '../../../src/watch/batch-codec.js';
import type { RowReadOutcome } from '../../../src/watch/row-batch.js';
import { packRow, placeholderRow, rowData } from '../../../src/watch/rows.js';

/** What the other thread receives: a structured clone of the message. */
const across = <T>(m: T): T => structuredClone(m);

describe('batch messages between the main thread and the read worker', () => {
  it('carry copy records unchanged: spans, stamps, absent files, per-file errors, a failed lock', () => {
    const records: RolloutCopyRecord[] = [
      {
        rolloutId: 'r-all',
        spans: {
          state: { at: 0, length: 10 },
          jsonl: { at: 10, length: 0 },
          intents: { at: 10, length: 7 },
          incomplete: { at: 17, length: 1 },
        },
        stamps: {
          state: { ino: 2 ** 40 + 3, size: 10, mtimeMs: 1796150558158.123 },
          jsonl: { ino: 5, size: 0, mtimeMs: 1 },
          intents: { ino: 6, size: 7, mtimeMs: 2.5 },
          incomplete: { ino: 7, size: 1, mtimeMs: 3 },
        },
      },
      {
        rolloutId: 'r-j-only',
        spans: { jsonl: { at: 18, length: 100 } },
        stamps: { jsonl: { ino: 9, size: 100, mtimeMs: 4 } },
      },
      {
        rolloutId: 'r-fifo',
        spans: {},
        stamps: {},
        errors: { jsonl: { kind: 'io', message: 'refusing to read a FIFO', file: '/d/r-fifo.tokens.jsonl' } },
      },
      { rolloutId: 'r-locked', spans: {}, stamps: {}, failure: { kind: 'lock_timeout', message: 'lock held' } },
      // A system error keeps its facts: the reading thread's line is derived from them.
      {
        rolloutId: 'r-denied',
        spans: {},
        stamps: {},
        errors: {
          state: {
            kind: 'io',
            message: "EACCES: permission denied, open '/d/s'",
            system: { code: 'EACCES', syscall: 'open', path: '/d/s' },
            file: '/d/s',
          },
        },
      },
    ];
    expect(decodeRecords(across(encodeRecords(records)))).toEqual(records);
    expect(decodeRecords(across(encodeRecords([])))).toEqual([]);
  });

  it('carry outcomes unchanged: rows with and without a signature, gone rollouts, failed reads', () => {
    const row = packRow({
      ...rowData(placeholderRow('a', 12.5)),
      loaded: true,
      calls: 3,
      version: 2,
      verdict: 'masked',
      wouldMask: true,
      conditions: ['dangling'],
      danglingIntents: ['c1'],
      causes: [{ code: 'dangling_intents', message: 'm', calls: ['c1'] }],
      snapshotId: 's1',
    });
    const plain = packRow({ ...rowData(placeholderRow('b', 1)), loaded: true, verdict: 'trainable', wouldMask: false });
    const outcomes: RowReadOutcome[] = [
      { ok: true, row, signature: { key: 2 ** 52 + 1, kinds: 'jsonl+state' } },
      { ok: true, row: plain },
      { ok: true, gone: true },
      { ok: false, error: { kind: 'io', message: 'EACCES' } },
      { ok: true, row: plain, signature: { key: 7, kinds: 'jsonl' } },
      {
        ok: false,
        error: {
          kind: 'io',
          message: "EACCES: permission denied, open '/d/s'",
          system: { code: 'EACCES', syscall: 'open', path: '/d/s' },
        },
      },
      {
        ok: true,
        row: packRow({
          ...rowData(placeholderRow('e', 1)),
          loaded: true,
          status: 'unavailable',
          error: { kind: 'io', message: 'x', system: { code: 'ENOENT', syscall: 'open', path: '/d/j' } },
        }),
      },
    ];
    const ids = ['a', 'b', 'c', 'd', 'b', 'd', 'e'];
    const back = decodeOutcomes(across(encodeOutcomes(outcomes)), ids);
    expect(back.map((o) => ('row' in o ? { ...o, row: rowData(o.row) } : o))).toEqual(
      outcomes.map((o) => ('row' in o ? { ...o, row: rowData(o.row) } : o)),
    );
    // The rows take the ids given (this thread's strings), and their class.
    const first = back[0] as { row: unknown };
    expect(first.row).toBeInstanceOf(row.constructor);
  });
});
