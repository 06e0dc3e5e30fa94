/**
 * Per-rollout `flock(2)` on `<R>.tokens.lock`, interoperable with the Python store
 * (docs/format.md#locking).
 *
 * - Mutating callers open the lock file like the reference's `open(path, 'a+b')`:
 *   `O_RDWR | O_CREAT | O_APPEND`, mode 0666 filtered by the umask (docs/format.md#lock-mechanism). The file is never
 *   written, truncated or renamed; only sweep unlinks it, from inside `fn` (docs/format.md#lock-file-lifetime, docs/format.md#sweep).
 * - Read-only callers (`readOnly: true`) open an EXISTING lock file with `O_RDONLY` and never
 *   create one (docs/format.md#lock-implementation allows this; it lets read-only commands work in a directory they cannot
 *   write, and keeps lookups from littering orphan lock files). If the lock file does not exist,
 *   nobody holds the lock at that moment: every holder locks an open descriptor of that path, the
 *   lock file is created by the first locked operation of a rollout (before any J/I/M/S exists)
 *   and only sweep removes it, from under its own exclusive lock right before releasing it. A
 *   process still waiting on a swept inode locks a file nobody else opens, so it would not be
 *   excluded by our lock either (docs/format.md#lock-file-lifetime). `fn` then runs without a lock (`held.locked === false`,
 *   `held.fd === -1`). Caveat: this is a snapshot; a writer that starts right after the check
 *   creates the lock file and is not excluded, so such an `fn` may see that writer's very first
 *   files appear mid-write (in practice: there was nothing to read when it started). Callers
 *   that cannot accept that must use `readOnly: false`.
 * - Acquisition never blocks the event loop: `LOCK_NB` attempts with a backoff (1 ms doubling to
 *   25 ms, ./lock-waits.ts) between them, up to `waitMs` (0 means a single attempt), then `lock_timeout` (docs/format.md#lock-implementation).
 * - Each attempt (`tryLockOnce` in ./lock-file.ts, the one attempt every entry point makes) opens the lock file,
 *   locks it and then checks that the locked inode still has a link: if the lock file was swept
 *   or replaced since it was opened (a sweep race, docs/format.md#lock-file-lifetime,
 *   docs/format.md#differs-lock-inode), the stale lock is released and acquisition starts over on
 *   the current file (read-only callers: if it vanished, they proceed unlocked as above). The
 *   overall deadline is not reset.
 * - The lock is always released with `LOCK_UN` and then the descriptor is closed, whatever `fn`
 *   does. Node opens every descriptor with `O_CLOEXEC` (libuv), so child processes spawned while
 *   a lock is held do not inherit it.
 *
 * Never nest: `flock` locks belong to the open file description, so acquiring the lock of a
 * rollout again from inside `fn` (a second `open` of the same file) conflicts with the outer
 * lock of the same process and would wait against itself until the timeout (with blocking
 * `flock`, forever). Such nesting is detected and rejected with
 * `TokcapError('other', 'internal: nested lock of rollout X')`. Detection follows the async call
 * chain (AsyncLocalStorage) rather than a process-wide set: two *independent* concurrent
 * operations of this process on one rollout are not nested; they open separate descriptors,
 * exclude each other through `flock` like two processes would, and simply wait in turn. Any lock
 * requested inside `fn` is rejected, whatever its path, so `dir/./R.tokens.lock` or a symlinked
 * directory does not slip past the guard.
 *
 * `withRolloutLockSyncFn` is the same lock for a synchronous `fn` (a copy: the readers of J, the
 * read-only snapshot). Its `fn` runs, and the lock is released, with no await in between, so a
 * flag set around the call tells nested from independent exactly, and no AsyncLocalStorage is
 * entered: its first `run` turns on V8's promise hooks in the thread for good, which made every
 * promise slower and cost a verify of full-200x12 ~4 % of its wall time
 * (docs/decisions/0008-no-async-context-for-copies.md).
 *
 * docs/format.md#lock-mechanism also requires never holding two different rollouts' locks at once. Calls in
 * this thread take turns (a FIFO mutex around each attempt, and from a granted one to the release:
 * never across a backoff, so a call waiting for a held lock holds up no other), and each `flock` attempt and
 * each held lock also takes the process's turn shared with the other threads (lock-turns.ts), so
 * concurrent readers never hold two locks together, in one thread or in several; requesting a
 * second rollout's lock from inside `fn` is rejected. Holders must therefore keep `fn` short
 * (copy bytes, then parse outside the lock): the other threads wait for it.
 * `withReadLockNow` is the same read-only shared lock for a synchronous `fn`, taken only when no
 * other call holds or awaits a turn, the process's turn is free and the lock is free at once (a
 * watch load's copies).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { TokcapError } from '../errors.js';
import type { LockMode } from './flock.js';
import { giveLockTurn, lockTurnFreed, takeLockTurnNow, tryTakeLockTurn } from './lock-turns.js';
import { ABSENT, closeQuietly, release, SWEPT, tryLockOnce, unlockOnly, type Attempt } from './lock-file.js';
import { pause } from './lock-waits.js';

export type { LockMode } from './flock.js';
export { endLockWaits } from './lock-waits.js';

export interface RolloutLockOptions {
  /** How long to keep retrying, in milliseconds; 0 = try once. */
  waitMs: number;
  /** Open an existing lock file `O_RDONLY`, create none (see the module comment). */
  readOnly?: boolean;
  /** Aborts the wait (rejects with `signal.reason`); does not interrupt `fn`. */
  signal?: AbortSignal;
}

/**
 * What `fn` receives while the lock is held. `fd` is the locked descriptor of the lock file
 * (-1 when `locked` is false: read-only caller and no lock file). `fn` must not close `fd`, and
 * must not write to it; sweep may unlink the lock file's path while holding it (docs/format.md#sweep
 * step 5), the release then happens on the unlinked inode.
 */
export interface HeldLock {
  readonly fd: number;
  readonly locked: boolean;
}

const INITIAL_BACKOFF_MS = 1;
const MAX_BACKOFF_MS = 25;

interface Scope {
  readonly key: string;
  active: boolean;
}

/** The locks held by the current async call chain (outermost first). */
const heldScopes = new AsyncLocalStorage<readonly Scope[]>();

let refuseLocks = false;

/**
 * Called first thing by tokcap's worker threads that ask the main thread for every copy taken
 * under a lock (watch's reader, export, inspect's facts), so that a worker that dies never leaves
 * one held. A lock requested in such a thread anyway is a bug: it fails (the work is then redone
 * in the main thread) instead of being taken. Workers that take their own locks (build, verify)
 * join the process's lock turns instead (lock-turns.ts).
 */
export function refuseRolloutLocksInThisThread(): void {
  refuseLocks = true;
}

export async function withRolloutLock<T>(
  lockPath: string,
  rolloutId: string,
  mode: LockMode,
  opts: RolloutLockOptions,
  fn: (held: HeldLock) => Promise<T> | T,
): Promise<T> {
  return lockInTurn(lockPath, rolloutId, mode, opts, fn, true);
}

/**
 * `withRolloutLock` for a synchronous `fn`: nesting is told by a flag held around `fn` instead
 * of AsyncLocalStorage (see the module comment). An `fn` that returns a promise is a bug: the
 * lock is released and the call fails.
 */
export async function withRolloutLockSyncFn<T>(
  lockPath: string,
  rolloutId: string,
  mode: LockMode,
  opts: RolloutLockOptions,
  fn: (held: HeldLock) => T,
): Promise<T> {
  return lockInTurn(lockPath, rolloutId, mode, opts, fn, false);
}

async function lockInTurn<T>(
  lockPath: string,
  rolloutId: string,
  mode: LockMode,
  opts: RolloutLockOptions,
  fn: (held: HeldLock) => Promise<T> | T,
  tracked: boolean,
): Promise<T> {
  if (refuseLocks) {
    throw workerThreadError(rolloutId, lockPath);
  }
  const key = resolvePath(lockPath);
  const chain = heldScopes.getStore() ?? [];
  if (chain.some((s) => s.active && s.key === key)) throw nestedError(rolloutId, lockPath);
  // Any lock requested inside fn is nesting: of this rollout (reached through another path
  // spelling) or of another one, which docs/format.md#lock-mechanism forbids.
  if (chain.some((s) => s.active)) throw nestedError(rolloutId, lockPath);
  if (syncHeld) throw nestedError(rolloutId, lockPath);
  opts.signal?.throwIfAborted();
  const readOnly = opts.readOnly === true;
  const waitMs = Number.isNaN(opts.waitMs) || opts.waitMs < 0 ? 0 : opts.waitMs;
  const deadline = performance.now() + waitMs;
  let backoff = INITIAL_BACKOFF_MS;
  for (;;) {
    // One rollout lock at a time in this process (docs/format.md#lock-mechanism), even for
    // concurrent readers: this thread's turn is held for one attempt, or from a granted one to
    // the release, never across the backoff below. A call waiting for a lock another process
    // holds then holds up no other rollout's lock (a live view's other rows, its detail).
    turnsTaken++;
    const turn = await processTurn();
    let attempt: T | typeof HELD_ELSEWHERE;
    try {
      attempt = await attemptInTurn(lockPath, rolloutId, mode, readOnly, fn, key, tracked ? chain : undefined);
    } finally {
      turnsTaken--;
      turn();
    }
    if (attempt !== HELD_ELSEWHERE) return attempt;
    const left = deadline - performance.now();
    if (left <= 0) throw timeoutError(waitMs, rolloutId, lockPath);
    await pause(Math.min(backoff, left), opts.signal);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

/** `attemptInTurn`'s answer when another open file description holds the lock (not a value `fn` can return). */
const HELD_ELSEWHERE: unique symbol = Symbol('held elsewhere');

/** `withReadLockNow`'s answer when the lock cannot be had at once: take the waiting path. */
export const NOT_NOW: unique symbol = Symbol('not now');

/** Turns of `withRolloutLock` requested and not yet handed on (held or queued). */
let turnsTaken = 0;
/** A `withReadLockNow` or `withRolloutLockSyncFn` is running its `fn` (synchronous: no other call can interleave). */
let syncHeld = false;

/**
 * The read-only shared lock (`readOnly: true`) taken and released synchronously around a
 * synchronous `fn`, when that needs no wait: no other lock call of this process holds or awaits
 * its turn, and the first attempt (`tryLockOnce`) holds the lock. Otherwise nothing is run and
 * NOT_NOW is returned, for `withRolloutLock` (which waits, retries and handles a swept lock file). A watch load copies 100,000 rollouts this way without
 * a promise per rollout. Same refusals as `withRolloutLock`: a lock file that is not regular, a
 * worker thread, and any lock requested from inside `fn` or from inside another lock's `fn`.
 */
export function withReadLockNow<T>(
  lockPath: string,
  rolloutId: string,
  fn: (held: HeldLock) => T,
  /**
   * Receives the lock file's descriptor once the lock is released (`LOCK_UN`), for the caller
   * to close later (it locks nothing any more); without it the descriptor is closed at once.
   */
  unlocked?: (fd: number) => void,
): T | typeof NOT_NOW {
  if (refuseLocks) {
    throw workerThreadError(rolloutId, lockPath);
  }
  if (syncHeld || heldScopes.getStore()?.some((s) => s.active)) throw nestedError(rolloutId, lockPath);
  if (turnsTaken > 0) return NOT_NOW;
  // The process's turn, shared with the other threads (lock-turns.ts): held from here to the
  // release, or given back on every way out that holds no lock.
  if (!tryTakeLockTurn()) return NOT_NOW;
  let attempt: Attempt;
  try {
    attempt = tryLockOnce(lockPath, rolloutId, 'shared', true);
  } catch (e) {
    giveLockTurn();
    throw e;
  }
  if (typeof attempt === 'number')
    return runHeld(fn, { fd: attempt, locked: true }, attempt, lockPath, rolloutId, unlocked);
  giveLockTurn();
  // No lock file: nobody holds the lock (see the module comment), as in `acquire`.
  if (attempt === ABSENT) return runHeld(fn, { fd: -1, locked: false }, -1, lockPath, rolloutId, unlocked);
  return NOT_NOW;
}

function runHeld<T>(
  fn: (held: HeldLock) => T,
  held: HeldLock,
  fd: number,
  lockPath: string,
  rolloutId: string,
  unlocked?: (fd: number) => void,
): T {
  let result: T;
  syncHeld = true;
  try {
    result = fn(held);
  } catch (e) {
    syncHeld = false;
    // fn's error is the one to report; the descriptor is closed either way.
    if (fd >= 0) {
      closeQuietly(fd, true);
      giveLockTurn();
    }
    throw e;
  }
  syncHeld = false;
  if (fd < 0) return result;
  if (!unlocked) {
    releaseAndGiveTurn(fd, lockPath, rolloutId);
    return result;
  }
  try {
    unlockOnly(fd, lockPath, rolloutId);
  } catch (e) {
    giveLockTurn();
    throw e;
  }
  // Unlocked: the turn goes on now; the descriptor is the caller's to close.
  giveLockTurn();
  unlocked(fd);
  return result;
}

/** A FIFO mutex: resolves with the function that hands the turn to the next waiter. */
let lastTurn: Promise<void> = Promise.resolve();
function processTurn(): Promise<() => void> {
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const before = lastTurn;
  lastTurn = before.then(() => mine);
  return before.then(() => release);
}

/**
 * One attempt at the lock, in this thread's turn: `fn`'s result once it ran under the lock (or
 * without one: read-only caller, no lock file), or HELD_ELSEWHERE when another open file description holds
 * it (nothing held; the caller backs off outside its turn).
 */
async function attemptInTurn<T>(
  lockPath: string,
  rolloutId: string,
  mode: LockMode,
  readOnly: boolean,
  fn: (held: HeldLock) => Promise<T> | T,
  key: string,
  chain: readonly Scope[] | undefined,
): Promise<T | typeof HELD_ELSEWHERE> {
  for (;;) {
    // The process's turn (shared with its other threads) for this attempt only; kept from a
    // successful one until the lock is released. From taking it to `fn`, nothing awaits
    // (lock-turns.ts `takeLockTurnNow`).
    if (!takeLockTurnNow()) {
      await lockTurnFreed();
      continue;
    }
    let attempt: Attempt;
    try {
      attempt = tryLockOnce(lockPath, rolloutId, mode, readOnly);
    } catch (e) {
      giveLockTurn();
      throw e;
    }
    if (typeof attempt === 'number') return runLocked(attempt, lockPath, rolloutId, fn, key, chain);
    giveLockTurn();
    // No lock file: nobody holds the lock (see the module comment).
    if (attempt === ABSENT) return runLocked(null, lockPath, rolloutId, fn, key, chain);
    // Swept or replaced while we opened it: start over at once on whatever the path is now
    // (the deadline is not reset).
    if (attempt === SWEPT) continue;
    return HELD_ELSEWHERE;
  }
}

/**
 * Runs `fn` under the lock held on `fd` (null: read-only caller, no lock file) and releases it.
 * A synchronous `fn` (a copy) is released before this returns, with no turn of the event loop
 * in between; an async one when its promise settles. `chain` is the caller's AsyncLocalStorage
 * chain, undefined for `withRolloutLockSyncFn` (fn runs under the `syncHeld` flag instead).
 */
function runLocked<T>(
  fd: number | null,
  lockPath: string,
  rolloutId: string,
  fn: (held: HeldLock) => Promise<T> | T,
  key: string,
  chain: readonly Scope[] | undefined,
): T | Promise<T> {
  const held: HeldLock = fd === null ? { fd: -1, locked: false } : { fd, locked: true };
  if (chain === undefined) return runLockedSync(fd, lockPath, rolloutId, fn, held);
  const scope: Scope = { key, active: true };
  const failed = (e: unknown): never => {
    scope.active = false;
    if (fd !== null) {
      try {
        releaseAndGiveTurn(fd, lockPath, rolloutId);
      } catch {
        // fn's error is the one to report; the descriptor is closed either way.
      }
    }
    throw e;
  };
  const succeeded = (result: T): T => {
    scope.active = false;
    if (fd !== null) releaseAndGiveTurn(fd, lockPath, rolloutId);
    return result;
  };
  let result: Promise<T> | T;
  try {
    result = heldScopes.run([...chain, scope], () => fn(held));
  } catch (e) {
    return failed(e);
  }
  if (result instanceof Promise) return result.then(succeeded, failed);
  return succeeded(result);
}

function runLockedSync<T>(
  fd: number | null,
  lockPath: string,
  rolloutId: string,
  fn: (held: HeldLock) => Promise<T> | T,
  held: HeldLock,
): T {
  let result: Promise<T> | T;
  syncHeld = true;
  try {
    result = fn(held);
  } catch (e) {
    syncHeld = false;
    if (fd !== null) {
      try {
        releaseAndGiveTurn(fd, lockPath, rolloutId);
      } catch {
        // fn's error is the one to report; the descriptor is closed either way.
      }
    }
    throw e;
  }
  syncHeld = false;
  if (fd !== null) releaseAndGiveTurn(fd, lockPath, rolloutId);
  if (result instanceof Promise) {
    // Its continuation would hold no lock and no nesting guard.
    result.catch(() => {});
    throw new TokcapError(
      'other',
      `internal: the function run under the lock of rollout ${rolloutId} returned a promise`,
      { rolloutId, file: lockPath },
    );
  }
  return result;
}

/** Unlocks and closes `fd`, then gives the process's turn (held since the lock was taken) on. */
function releaseAndGiveTurn(fd: number, lockPath: string, rolloutId: string): void {
  try {
    release(fd, lockPath, rolloutId);
  } finally {
    giveLockTurn();
  }
}

function formatWait(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(3)}s` : `${+ms.toFixed(3)}ms`;
}

function timeoutError(waitMs: number, rolloutId: string, lockPath: string): TokcapError {
  return new TokcapError(
    'lock_timeout',
    `timed out after ${formatWait(waitMs)} waiting for the lock of rollout ${rolloutId}`,
    { rolloutId, file: lockPath },
  );
}

function workerThreadError(rolloutId: string, lockPath: string): TokcapError {
  return new TokcapError(
    'other',
    `internal: a worker thread asked for the lock of rollout ${rolloutId} (this thread takes none)`,
    { rolloutId, file: lockPath },
  );
}

function nestedError(rolloutId: string, lockPath: string): TokcapError {
  return new TokcapError('other', `internal: nested lock of rollout ${rolloutId}`, {
    rolloutId,
    file: lockPath,
  });
}
