/**
 * Row reads of many rollouts at a time, for the directory model: each rollout is copied ONCE,
 * under one short shared lock, by the main thread (src/ops/rollout-copy.ts), and its row (facts,
 * status, preview build) is computed from that copy, here or in the read worker
 * (read-worker.ts), which takes no lock at all. The outcome carries the row without its model
 * bookkeeping (`changedAt`, `seq`) and the stamps of the files read, the rollout's change
 * signature as of the copy.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { toTokcapError } from '../errors.js';
import { JsonBytesReader } from '../json/parse-json.js';
import type { FileKind } from '../layout/file-names.js';
import {
  COPIED_KINDS,
  closeCopied,
  copyRolloutInTurn,
  copyRolloutNow,
  type CopyArena,
  type RolloutCopyRecord,
} from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import { copySignature, type CopySignature } from './file-signature.js';
import { readRow, type RowRead } from '../rollout-read/row-read.js';
import { deriveRow, type PackedRow, type RowError } from './rows.js';

export type RowReadOutcome =
  /** `signature`: of the files as read; absent when the copy failed (the lock was not granted). */
  | { ok: true; row: PackedRow; signature?: CopySignature }
  /** No capture file was there any more. */
  | { ok: true; gone: true }
  /**
   * The read failed as a whole (an unexpected error, not a store condition); or, for a batch read
   * without waiting (`BatchOptions.wait` false), `lockHeld`: another process holds the rollout's
   * lock, nothing was read (the caller waits for it on its own).
   */
  | { ok: false; error: RowError; lockHeld?: true };

/** How a batch takes its rollouts' locks. */
export interface BatchOptions {
  /**
   * Wait for a lock another process holds, up to the store's lock wait (default true). False:
   * one attempt, and the rollout's outcome says `lockHeld`: one held lock holds up no batch.
   */
  wait?: boolean;
  /** Ends a wait for a lock (the rollout's outcome is then the abort's error). */
  signal?: AbortSignal;
}

/** A copy that found the lock held by another process, in a batch that does not wait. */
export function heldElsewhere(record: RolloutCopyRecord, options: BatchOptions | undefined): boolean {
  return options?.wait === false && record.failure?.kind === 'lock_timeout';
}

/** The outcome of a rollout whose lock was held (see `heldElsewhere`). */
export function lockHeldOutcome(record: RolloutCopyRecord): RowReadOutcome {
  return { ok: false, error: record.failure!, lockHeld: true };
}

/** The row of a read, before the model gives it its `changedAt` and `seq`. */
export function rowOf(id: string, read: RowRead): PackedRow {
  return deriveRow({ id, ...read, changedAt: null, seq: 0 });
}

/** The files a copy found (those it could not read included); undefined when the copy failed. */
function copiedFiles(record: RolloutCopyRecord): Set<FileKind> | undefined {
  if (record.failure) return undefined;
  const files = new Set<FileKind>();
  for (const kind of COPIED_KINDS) if (record.spans[kind] || record.errors?.[kind]) files.add(kind);
  return files;
}

/**
 * The outcome for one copied rollout (no lock taken: any thread). Only when the copy failed as a
 * whole (the lock was not granted) do the facts read the files that need no lock, as `inspect`.
 */
export async function rowFromCopy(
  store: StoreOptions,
  arena: Uint8Array,
  record: RolloutCopyRecord,
  jsonReader?: JsonBytesReader,
): Promise<RowReadOutcome> {
  const id = record.rolloutId;
  const files = copiedFiles(record);
  if (files?.size === 0) return { ok: true, gone: true };
  try {
    const read = await readRow(store, { arena, record }, files, jsonReader);
    return record.failure
      ? { ok: true, row: rowOf(id, read) }
      : { ok: true, row: rowOf(id, read), signature: copySignature(record.stamps) };
  } catch (e) {
    return { ok: false, error: toTokcapError(e, { rolloutId: id }).facts() };
  }
}

/**
 * Main thread: copies the rollouts into `arena`, one lock at a time, in order. The descriptors
 * copied from are left open in `arena.fds` (up to `arena.keepFds`), for the thread that parses
 * the batch to close.
 */
export async function copyBatch(
  store: StoreOptions,
  ids: readonly string[],
  arena: CopyArena,
  options?: BatchOptions,
): Promise<RolloutCopyRecord[]> {
  arena.used = 0;
  closeCopied(arena);
  const records: RolloutCopyRecord[] = [];
  let since = performance.now();
  // Not waiting: one attempt (a wait of 0), its failure a lock_timeout (`heldElsewhere`).
  const inTurn = options?.wait === false ? { ...store, lockWaitMs: 0 } : store;
  for (const id of ids) {
    // Synchronous while locks are free at once: no promise per rollout.
    records.push(copyRolloutNow(store, id, arena) ?? (await copyRolloutInTurn(inTurn, id, arena, options?.signal)));
    if (arena.fds.length > arena.keepFds) closeCopied(arena);
    // Uncontended locks resolve in microtasks: without this, keys and frames would wait for the
    // whole batch.
    if (performance.now() - since > YIELD_EVERY_MS) {
      await yieldToEventLoop();
      since = performance.now();
    }
  }
  return records;
}

/** Longest stretch of copying between two turns of the event loop. */
const YIELD_EVERY_MS = 8;

/** A batch read entirely in this thread (`arena` is this batch's alone until it resolves). */
export async function readBatchHere(
  store: StoreOptions,
  ids: readonly string[],
  arena: CopyArena,
  options?: BatchOptions,
): Promise<RowReadOutcome[]> {
  const out: RowReadOutcome[] = [];
  const jsonReader = new JsonBytesReader();
  // One rollout at a time through the arena: its memory stays one rollout's.
  for (const id of ids) {
    const [record] = await copyBatch(store, [id], arena, options);
    closeCopied(arena);
    out.push(
      heldElsewhere(record, options)
        ? lockHeldOutcome(record)
        : await rowFromCopy(store, arena.bytes, record, jsonReader),
    );
  }
  return out;
}
