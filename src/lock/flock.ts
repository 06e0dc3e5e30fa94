/**
 * Thin FFI binding to libc `flock(2)` (docs/format.md#lock-mechanism, docs/format.md#lock-implementation).
 *
 * Real BSD `flock` is required: POSIX `fcntl` record locks are a different lock family on Linux
 * and do not exclude the Python store's `fcntl.flock` holders. Node has no built-in `flock`, so we
 * call libc through koffi. Only the non-blocking form is exposed: a blocking `flock` would block
 * the JS thread (callers poll with backoff instead, see rollout-lock.ts).
 *
 * libc is loaded lazily on the first call (src/native/libc.ts).
 */
import { constants } from 'node:os';
import { TokcapError } from '../errors.js';
import { errnoError, libcStatus, loadLibc } from '../native/libc.js';

export type LockMode = 'shared' | 'exclusive';

/** <sys/file.h>: the same values on Linux, macOS and FreeBSD. */
export const LOCK_SH = 1;
export const LOCK_EX = 2;
export const LOCK_NB = 4;
export const LOCK_UN = 8;

/** This system's values (EWOULDBLOCK is 11 on Linux, 35 on macOS and FreeBSD; EAGAIN alike). */
const { EINTR, EWOULDBLOCK, EAGAIN } = constants.errno;

/**
 * Calls flock, retrying on EINTR. Returns 0 on success, otherwise the errno (-1 if unknown).
 *
 * For synchronous calls koffi does NOT capture errno: `koffi.errno()` reads the thread's live
 * errno (only `.async` calls get a saved copy). So it is read immediately after the call with no
 * JS work in between, and cleared before the call so that an errno nobody set reads as 0 (then
 * reported as an error rather than mistaken for EWOULDBLOCK or success).
 */
function flockErrno(fd: number, operation: number): number {
  const { flock, errno: liveErrno } = loadLibc();
  for (;;) {
    liveErrno(0);
    const rc = flock(fd, operation);
    if (rc === 0) return 0;
    const errno = liveErrno();
    if (errno === EINTR) continue;
    return errno === 0 ? -1 : errno;
  }
}

function flockError(errno: number, fd: number): NodeJS.ErrnoException {
  return errnoError(errno, 'flock', `fd ${fd}`);
}

/**
 * Non-blocking lock attempt (`LOCK_SH|LOCK_NB` or `LOCK_EX|LOCK_NB`). Returns true if acquired
 * (or converted, when this open file description already held a lock), false if another open file
 * description holds a conflicting lock (EWOULDBLOCK). Retries EINTR; throws on any other errno
 * (EBADF, ENOLCK, ...).
 */
export function tryFlock(fd: number, mode: LockMode): boolean {
  const op = (mode === 'shared' ? LOCK_SH : LOCK_EX) | LOCK_NB;
  const errno = flockErrno(fd, op);
  if (errno === 0) return true;
  if (errno === EWOULDBLOCK || errno === EAGAIN) return false;
  throw flockError(errno, fd);
}

/** `LOCK_UN`. Throws on failure (e.g. EBADF). Does not close the descriptor. */
export function unlockFd(fd: number): void {
  const errno = flockErrno(fd, LOCK_UN);
  if (errno !== 0) throw flockError(errno, fd);
}

/** The lock's backend: flock(2) in this C library, or why locking cannot work here. */
export function lockBackend(): { backend: 'flock'; libc: string } | { backend: null; reason: string } {
  const status = libcStatus();
  return 'file' in status ? { backend: 'flock', libc: status.file } : { backend: null, reason: status.error };
}

/**
 * Throws the one error that says locking cannot work on this system (no flock(2), no native
 * module for koffi, no C library): commands call it before they touch any rollout, so that the
 * reason is said once rather than once per rollout.
 */
export function assertLocking(): void {
  const backend = lockBackend();
  if (backend.backend === null)
    throw new TokcapError('other', `cannot lock capture files on this system: ${backend.reason}`);
}
