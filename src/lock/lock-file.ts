/**
 * One attempt at a rollout's lock file (./rollout-lock.ts takes turns and waits around it): open
 * it safely, `flock(LOCK_NB)`, refuse what is not a regular file, check that the locked inode is
 * still the lock file (docs/format.md#differs-lock-inode), and release it. No state of its own.
 */
import * as fs from 'node:fs';
import { basename } from 'node:path';
import { ioError, TokcapError } from '../errors.js';
import { tryFlock, unlockFd, type LockMode } from './flock.js';
import { noteLockedFd } from './lock-turns.js';
import { fdStat, fileType, type FdStat } from '../native/fd-stat.js';

/** A read-only caller found no lock file: nobody holds the lock (see the module comment). */
export const ABSENT = 'absent';
/** Another open file description holds a conflicting lock. */
export const BUSY = 'busy';
/** The lock file was swept or replaced since it was opened: what was locked is not the lock. */
export const SWEPT = 'swept';
/** `tryLockOnce`'s answer: the locked descriptor, or why there is none. */
export type Attempt = number | typeof ABSENT | typeof BUSY | typeof SWEPT;

/**
 * One non-blocking attempt at the lock, by the holder of the process's lock turn: open the lock
 * file, `flock(LOCK_NB)`, refuse a lock file that is not regular, and check that the locked inode
 * still has a link (`sweptSince`). Returns the locked descriptor (noted in lock-turns.ts for a thread that
 * dies holding it); on any other answer or error the descriptor is closed and nothing is held.
 * The caller gives the turn back unless a descriptor is returned.
 */
export function tryLockOnce(lockPath: string, rolloutId: string, mode: LockMode, readOnly: boolean): Attempt {
  const fd = openLockFile(lockPath, rolloutId, readOnly);
  if (fd === null) return ABSENT;
  let locked = false;
  try {
    noteLockedFd(fd);
    try {
      locked = tryFlock(fd, mode);
    } catch (e) {
      throw ioError(e, lockPath, rolloutId);
    }
    // Locking a FIFO or a directory is harmless (nothing waits on it); it is refused right after,
    // with the same fstat as the swept check.
    const mine = fstat(fd, lockPath, rolloutId);
    const type = fileType(mine.mode);
    if (type !== 'file') {
      throw notRegularLock(
        lockPath,
        rolloutId,
        type === 'directory' ? 'a directory' : type === 'fifo' ? 'a FIFO' : 'a file that is not regular',
      );
    }
    if (!locked) {
      noteLockedFd(-1);
      closeQuietly(fd, false);
      return BUSY;
    }
    if (sweptSince(mine)) {
      closeQuietly(fd, true);
      return SWEPT;
    }
    return fd;
  } catch (e) {
    if (!locked) noteLockedFd(-1);
    closeQuietly(fd, locked);
    throw e;
  }
}

/**
 * Whether the lock file we hold (`mine`: its fstat, taken after locking) was swept or replaced
 * since we opened it (docs/format.md#differs-lock-inode). A sweep unlinks it while holding it
 * exclusively, so once we hold it, a sweep that got there first is complete and the inode has no
 * link left; a replaced one (unlink and create, or a rename over it) has none either. Lock files
 * are only ever unlinked, never linked or renamed (docs/format.md#lock-file-lifetime), so this
 * catches what comparing the inode with a `stat` of the path would. That stat catches more only
 * outside the protocol (a lock file renamed away or linked elsewhere) and costs a path lookup per
 * lock: measured +24 % on the lock step of a watch load, which locks every rollout.
 */
function sweptSince(mine: FdStat): boolean {
  return mine.nlink === 0;
}

/**
 * Mutating: like Python `open(path, 'a+b')`. Read-only: existing file, `O_RDONLY`, or null.
 *
 * Unlike the reference, a symlink is never followed (`O_NOFOLLOW`: with `O_CREAT`, a dangling
 * link named like a lock file would create its target outside DIR) and the open never blocks
 * (`O_NONBLOCK`: an `O_RDONLY` open of a FIFO named like a lock file would wait forever for a
 * writer). The descriptor is then checked to be a regular file (see `acquire`).
 */
function openLockFile(lockPath: string, rolloutId: string, readOnly: boolean): number | null {
  const { O_RDONLY, O_RDWR, O_CREAT, O_APPEND, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  const safe = O_NOFOLLOW | O_NONBLOCK;
  if (readOnly) {
    try {
      return fs.openSync(lockPath, O_RDONLY | safe);
    } catch (e) {
      if (errCode(e) === 'ENOENT') return null;
      throw lockOpenError(e, lockPath, rolloutId);
    }
  }
  try {
    return fs.openSync(lockPath, O_RDWR | O_CREAT | O_APPEND | safe, 0o666);
  } catch (e) {
    const code = errCode(e);
    if (code !== 'EACCES' && code !== 'EROFS') throw lockOpenError(e, lockPath, rolloutId);
    // The lock file exists but is not writable for us (e.g. created 0644 by another user in a
    // shared directory, or a read-only mount). flock works on read-only descriptors and the lock
    // file is never written, so lock an O_RDONLY descriptor of it. If it does not exist we
    // cannot create it: report the original error.
    try {
      return fs.openSync(lockPath, O_RDONLY | safe);
    } catch {
      throw ioError(e, lockPath, rolloutId);
    }
  }
}

/** ELOOP from `O_NOFOLLOW` means the lock file is a symlink: say so. */
function lockOpenError(e: unknown, lockPath: string, rolloutId: string): TokcapError {
  if (errCode(e) === 'ELOOP') return notRegularLock(lockPath, rolloutId, 'a symbolic link');
  return ioError(e, lockPath, rolloutId);
}

function notRegularLock(lockPath: string, rolloutId: string, what: string): TokcapError {
  // The subject of the error line is the rollout: the message names the file itself.
  return new TokcapError(
    'io',
    `${basename(lockPath)} is ${what}: refusing to lock through it (lock files must be regular files)`,
    {
      rolloutId,
      file: lockPath,
      pyClass: 'OSError',
    },
  );
}

/** Unlocks and closes `fd`; an error of either is an I/O error of the rollout. */
export function release(fd: number, lockPath: string, rolloutId: string): void {
  let error: unknown;
  try {
    unlockFd(fd);
  } catch (e) {
    error = e;
  }
  // Unlocked: a thread that dies from here on leaves no lock behind (lock-turns.ts).
  noteLockedFd(-1);
  try {
    fs.closeSync(fd);
  } catch (e) {
    error ??= e;
  }
  if (error !== undefined) throw ioError(error, lockPath, rolloutId);
}

/** Unlocks `fd` and leaves it open for the caller to close; on an error it is closed here. */
export function unlockOnly(fd: number, lockPath: string, rolloutId: string): void {
  try {
    unlockFd(fd);
  } catch (e) {
    noteLockedFd(-1);
    closeQuietly(fd, false);
    throw ioError(e, lockPath, rolloutId);
  }
  noteLockedFd(-1);
}

/** Closes `fd` (unlocking it first when `locked`), whatever fails. */
export function closeQuietly(fd: number, locked: boolean): void {
  if (locked) {
    try {
      unlockFd(fd);
    } catch {
      // closing releases it anyway
    }
    noteLockedFd(-1);
  }
  try {
    fs.closeSync(fd);
  } catch {
    // nothing more to do
  }
}

/** Without a `Stats` object (native/fd-stat.ts): a watch load locks every rollout. */
function fstat(fd: number, lockPath: string, rolloutId: string): FdStat {
  try {
    return fdStat(fd);
  } catch (e) {
    throw ioError(e, lockPath, rolloutId);
  }
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}
