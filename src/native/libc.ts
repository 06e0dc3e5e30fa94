/**
 * libc through koffi (already a dependency, for flock): the one place that loads the FFI layer.
 * koffi (a native addon, ~10-20 ms to load) and libc are loaded lazily on the first call, so
 * importing this module costs nothing: commands that never lock or list do not pay for it.
 * koffi is an ESM+CJS package; its CJS entry is loaded through `createRequire` because a static
 * `import` would load the addon at module evaluation.
 */
import { createRequire } from 'node:module';
import { getSystemErrorMap } from 'node:util';
import type KoffiModule from 'koffi';

export interface Libc {
  flock: (fd: number, operation: number) => number;
  /** Reads (or with an argument, sets) the calling thread's live errno. */
  errno: (value?: number) => number;
  /**
   * Linux only (glibc 2.30+), undefined elsewhere: `getdents64(fd, buf, count)` and
   * `statx(dirfd, path, flags, mask, buf)`, whose record layouts are the same on every
   * architecture (directory-entries.ts reads them).
   */
  getdents64?: (fd: number, buf: Uint8Array, count: number) => number | bigint;
  statx?: (dirfd: number, path: string, flags: number, mask: number, buf: Uint8Array) => number;
}

let libc: Libc | undefined;

/** libc's functions; throws when koffi or libc cannot be loaded (flock has no other way). */
export function loadLibc(): Libc {
  if (libc === undefined) {
    const koffi = createRequire(import.meta.url)('koffi') as typeof KoffiModule;
    const lib = koffi.load('libc.so.6');
    const optional = <T>(declaration: string): T | undefined => {
      try {
        return lib.func(declaration) as T;
      } catch {
        return undefined; // an older libc without the symbol
      }
    };
    libc = {
      flock: lib.func('int flock(int fd, int operation)') as Libc['flock'],
      errno: (value) => (value === undefined ? koffi.errno() : koffi.errno(value)),
      getdents64: optional('long getdents64(int fd, _Out_ uint8_t *buf, size_t count)'),
      statx: optional('int statx(int dirfd, const char *path, int flags, unsigned int mask, _Out_ uint8_t *buf)'),
    };
  }
  return libc;
}

/** An Error shaped like Node's fs errors (`code`, `errno`, `syscall`) so `ioError` formats it. */
export function errnoError(errno: number, syscall: string, what: string): NodeJS.ErrnoException {
  const entry = errno > 0 ? getSystemErrorMap().get(-errno) : undefined;
  const code = entry?.[0] ?? `errno ${errno}`;
  const desc = entry?.[1] ?? 'unknown error';
  const err = new Error(`${code}: ${desc}, ${syscall} (${what})`) as NodeJS.ErrnoException;
  err.code = entry?.[0];
  err.errno = -errno;
  err.syscall = syscall;
  return err;
}
