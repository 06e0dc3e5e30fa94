/**
 * One locked read of a rollout for everything a view shows of it: the state file, J, the intents
 * and the incomplete markers, copied under ONE short shared lock on an existing lock file
 * (docs/format.md#lock-modes; no lock file created, nothing written), each with the inode, size and mtime
 * of the descriptor it was read from. The facts (rollout-facts.ts, option `copy`) and the
 * read-only snapshot a preview build parses (`snapshotCopyOf`) both come from this copy, so the
 * watch view reads a rollout once, not once for its facts and again for its verdict.
 *
 * The bytes go into a `CopyArena`: many rollouts' copies in one buffer, which moves to a worker
 * thread whole (one transfer, no per-file allocation) and is reused once parsed. Only the main
 * thread calls `copyRollout` (it takes the lock); parsing can happen anywhere.
 */
import { closeSync, constants, existsSync, openSync, readSync } from 'node:fs';
import { errorFromFacts, TokcapError, ioError, toTokcapError, type ErrorFacts } from '../errors.js';
import { rolloutPaths, type FileKind, type RolloutPaths } from '../layout/file-names.js';
import { NOT_NOW, withReadLockNow, withRolloutLockSyncFn } from '../lock/rollout-lock.js';
import { fdStat, fileType } from '../native/fd-stat.js';
import { retiredError } from './freeze.js';
import type { ReadOnlyCopy } from './read-snapshot.js';
import { lockWaitOf, type StoreOptions } from './store.js';

/** What the descriptor a file was copied from said (a change signature for the watch). */
export interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** A file's bytes in the arena: `length` bytes from `at`. */
export interface ArenaSpan {
  at: number;
  length: number;
}

export const COPIED_KINDS = ['state', 'jsonl', 'intents', 'incomplete'] as const satisfies readonly FileKind[];
export type CopiedKind = (typeof COPIED_KINDS)[number];

/**
 * Plain data (it crosses to a worker with its arena): where each present file's bytes are, and
 * its stamp. A file absent at the time of the copy has neither.
 */
export interface RolloutCopyRecord {
  rolloutId: string;
  spans: Partial<Record<CopiedKind, ArenaSpan>>;
  stamps: Partial<Record<CopiedKind, FileStamp>>;
  /** Files that exist but could not be read (a FIFO or directory named like one, an I/O error). */
  errors?: Partial<Record<CopiedKind, CopyError>>;
  /**
   * The lock was not granted in time (`lock_timeout`) or could not be taken: nothing was copied.
   * The facts then answer from the files that need no lock, as `inspect` does.
   */
  failure?: CopyError;
}

/** A copy's error as plain data: it crosses to the thread that reads the copy. */
export interface CopyError extends ErrorFacts {
  file?: string;
}

/** Growable byte storage for many copies; `bytes` is its current buffer. */
export class CopyArena {
  bytes: Buffer;
  used = 0;
  /**
   * Descriptors of the copied files, left open by `copyRolloutNow` and `copyRolloutInTurn`:
   * closing them needs no lock, so it is done after the release, by whoever closes the batch
   * (`closeCopied`, or the watch's read worker: a `close` is as dear as a `read`).
   */
  fds: number[] = [];
  /** How many descriptors `fds` may hold before copyBatch closes them itself (0: at once). */
  keepFds = 0;

  constructor(capacity = 256 * 1024) {
    // allocUnsafeSlow: an ArrayBuffer of its own (transferable), not a slice of Node's pool.
    this.bytes = Buffer.allocUnsafeSlow(capacity);
  }

  /** Room for `n` more bytes at `used`. */
  reserve(n: number): void {
    if (this.used + n <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.used + n));
    this.bytes.copy(bigger, 0, 0, this.used);
    this.bytes = bigger;
  }
}

/** Closes the descriptors the copies into `arena` left open (after their locks were released). */
export function closeCopied(arena: CopyArena): void {
  closeDescriptors(arena.fds);
  arena.fds = [];
}

/** Closes descriptors, ignoring errors (nothing was written through them). */
export function closeDescriptors(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // a read-only descriptor: nothing to lose
    }
  }
}

/** A view of one copied file (no copy of the bytes). */
export function spanBytes(arena: Uint8Array, span: ArenaSpan | undefined): Buffer | undefined {
  if (span === undefined) return undefined;
  return Buffer.from(arena.buffer, arena.byteOffset + span.at, span.length);
}

/**
 * Copies the rollout's files into `arena` under one shared lock (main thread only). Never
 * throws for the store's sake: a lock not granted in time or a file that cannot be read is
 * reported in `failure`, with nothing copied.
 */
export async function copyRollout(
  store: StoreOptions,
  rolloutId: string,
  arena: CopyArena,
): Promise<RolloutCopyRecord> {
  try {
    return copyRolloutNow(store, rolloutId, arena) ?? (await copyRolloutInTurn(store, rolloutId, arena));
  } finally {
    closeCopied(arena);
  }
}

/**
 * `copyRollout` through the lock's queue: waits for its turn and for the lock (until `signal`
 * aborts, if given: the copy then fails with its reason). Leaves the
 * descriptors of the files copied open in `arena.fds` (see `closeCopied`).
 */
export async function copyRolloutInTurn(
  store: StoreOptions,
  rolloutId: string,
  arena: CopyArena,
  signal?: AbortSignal,
): Promise<RolloutCopyRecord> {
  const paths = rolloutPaths(store.dir, rolloutId);
  const record: RolloutCopyRecord = { rolloutId, spans: {}, stamps: {} };
  const start = arena.used;
  try {
    await withRolloutLockSyncFn(
      paths.lock,
      rolloutId,
      'shared',
      { waitMs: lockWaitOf(store), readOnly: true, signal },
      () => copyFiles(paths, rolloutId, arena, record),
    );
  } catch (e) {
    return failedCopy(e, rolloutId, arena, start);
  }
  return record;
}

/**
 * `copyRollout` done synchronously when the lock is free at once (rollout-lock.ts
 * `withReadLockNow`): no promise, no turn of the event loop. Undefined when it would have to wait
 * (then `copyRolloutInTurn` waits its turn). Leaves the descriptors of the files copied open in
 * `arena.fds` (see `closeCopied`).
 */
export function copyRolloutNow(
  store: StoreOptions,
  rolloutId: string,
  arena: CopyArena,
): RolloutCopyRecord | undefined {
  const paths = rolloutPaths(store.dir, rolloutId);
  const record: RolloutCopyRecord = { rolloutId, spans: {}, stamps: {} };
  const start = arena.used;
  try {
    const done = withReadLockNow(
      paths.lock,
      rolloutId,
      () => copyFiles(paths, rolloutId, arena, record),
      (fd) => arena.fds.push(fd),
    );
    if (done === NOT_NOW) return undefined;
  } catch (e) {
    return failedCopy(e, rolloutId, arena, start);
  }
  return record;
}

/** Under the lock. Synchronous: one short copy, no thread-pool round trip while the lock is held. */
function copyFiles(paths: RolloutPaths, rolloutId: string, arena: CopyArena, record: RolloutCopyRecord): void {
  for (const kind of COPIED_KINDS) {
    try {
      copyFile(paths[kind], rolloutId, kind, arena, record);
    } catch (e) {
      const err = toTokcapError(e, { rolloutId, file: paths[kind] });
      (record.errors ??= {})[kind] = { ...err.facts(), file: err.file };
    }
  }
}

function failedCopy(e: unknown, rolloutId: string, arena: CopyArena, start: number): RolloutCopyRecord {
  const err = toTokcapError(e, { rolloutId });
  arena.used = start;
  return { rolloutId, spans: {}, stamps: {}, failure: { ...err.facts(), file: err.file } };
}

function copyFile(
  path: string,
  rolloutId: string,
  kind: CopiedKind,
  arena: CopyArena,
  record: RolloutCopyRecord,
): void {
  // Most rollouts have no marker file: a failed open costs an exception, a lookup does not.
  if (kind === 'incomplete' && !existsSync(path)) return;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ELOOP') throw notRegular(path, 'a symbolic link', rolloutId);
    throw ioError(e, path, rolloutId);
  }
  try {
    // No `Stats` object: a watch load fstats every file it copies (native/fd-stat.ts).
    const st = fdStat(fd);
    const type = fileType(st.mode);
    if (type !== 'file')
      throw notRegular(
        path,
        type === 'directory' ? 'a directory' : type === 'fifo' ? 'a FIFO' : 'not a regular file',
        rolloutId,
      );
    // To end of file, should it have grown since the fstat; a short read means the end.
    const at = arena.used;
    record.spans[kind] = { at, length: 0 };
    let want = st.size + 1;
    for (;;) {
      arena.reserve(want);
      const r = readSync(fd, arena.bytes, arena.used, want, null);
      arena.used += r;
      if (r < want) break;
      want = Math.max(want, 64 * 1024);
    }
    record.spans[kind] = { at, length: arena.used - at };
    record.stamps[kind] = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } catch (e) {
    delete record.spans[kind];
    closeSync(fd);
    throw e instanceof TokcapError ? e : ioError(e, path, rolloutId);
  }
  // Closed after the lock is released (it changes nothing a writer could see).
  arena.fds.push(fd);
}

function notRegular(path: string, what: string, rolloutId: string): TokcapError {
  return new TokcapError('io', `refusing to read ${what}: capture files must be regular files`, {
    file: path,
    rolloutId,
    pyClass: 'OSError',
  });
}

/** A copy error as the error it was. */
export function copyError(record: RolloutCopyRecord, error: CopyError | undefined): TokcapError | undefined {
  return error && errorFromFacts(error, { rolloutId: record.rolloutId, file: error.file });
}

/**
 * The read-only snapshot's copy (read-snapshot.ts) from a rollout copy: what
 * `copyReadOnlySnapshot` would have returned at that moment, with its refusals in its order (the
 * lock; the state file; a retired rollout; J; the intents). `retired`: the state says so (the
 * facts parsed it already).
 */
export function snapshotCopyOf(arena: Uint8Array, record: RolloutCopyRecord, retired: boolean): ReadOnlyCopy {
  const fail = (e: CopyError | undefined) => {
    const err = copyError(record, e);
    if (err) throw err;
  };
  fail(record.failure);
  fail(record.errors?.state);
  if (retired) throw retiredError(record.rolloutId);
  fail(record.errors?.jsonl);
  fail(record.errors?.intents);
  // The markers are part of the rollout's answer: one that could not be read leaves it unread.
  fail(record.errors?.incomplete);
  return {
    rolloutId: record.rolloutId,
    stateBytes: spanBytes(arena, record.spans.state),
    bytes: spanBytes(arena, record.spans.jsonl),
    intentBytes: spanBytes(arena, record.spans.intents),
  };
}
