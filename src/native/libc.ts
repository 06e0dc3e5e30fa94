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
   * Linux only (glibc 2.30+, musl 1.2.5+), undefined elsewhere: `getdents64(fd, buf, count)` and
   * `statx(dirfd, path, flags, mask, buf)`, whose record layouts are the same on every
   * architecture (directory-entries.ts reads them).
   */
  getdents64?: (fd: number, buf: Uint8Array, count: number) => number | bigint;
  statx?: (dirfd: number, path: string, flags: number, mask: number, buf: Uint8Array) => number;
}

/** musl's name for each architecture Node runs on (its loader is /lib/ld-musl-NAME.so.1). */
const MUSL_ARCH: Partial<Record<NodeJS.Architecture, string>> = {
  x64: 'x86_64',
  arm64: 'aarch64',
  arm: 'armhf',
  ia32: 'i386',
  ppc64: 'powerpc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loongarch64',
};

/**
 * The C library's file names to try on a platform, in order: glibc's on Linux, then musl's
 * (Alpine: `libc.musl-ARCH.so.1`, or the loader, which is musl's libc too); macOS's libSystem;
 * FreeBSD's libc. Empty where flock(2) does not exist (Windows) or no build of koffi runs.
 */
export function libcCandidates(
  platform: NodeJS.Platform = process.platform,
  arch: NodeJS.Architecture = process.arch,
): string[] {
  switch (platform) {
    case 'linux': {
      const musl = MUSL_ARCH[arch];
      return ['libc.so.6', ...(musl === undefined ? [] : [`libc.musl-${musl}.so.1`, `ld-musl-${musl}.so.1`])];
    }
    case 'darwin':
      return ['/usr/lib/libSystem.B.dylib'];
    case 'freebsd':
      return ['libc.so.7'];
    default:
      return [];
  }
}

let libc: Libc | undefined;
/** The file libc was loaded from (one of libcCandidates()). */
let loadedFrom: string | undefined;

/** libc's functions; throws when koffi or libc cannot be loaded (flock has no other way). */
export function loadLibc(): Libc {
  if (libc === undefined) {
    const candidates = libcCandidates();
    if (candidates.length === 0) throw new Error(`flock(2) is not available on ${process.platform}`);
    let koffi: typeof KoffiModule;
    try {
      koffi = createRequire(import.meta.url)('koffi') as typeof KoffiModule;
    } catch (e) {
      throw new Error(
        `koffi (the FFI through which tokcap calls flock) has no native module for ${process.platform}-${process.arch} here: ${firstLine(e)}`,
        { cause: e },
      );
    }
    let lib: ReturnType<typeof koffi.load> | undefined;
    for (const name of candidates) {
      try {
        lib = koffi.load(name);
        loadedFrom = name;
        break;
      } catch {
        // not this one: the next candidate
      }
    }
    if (lib === undefined) throw new Error(`no C library found (tried ${candidates.join(', ')})`);
    const found = lib;
    const optional = <T>(...declarations: string[]): T | undefined => {
      for (const declaration of declarations) {
        try {
          return found.func(declaration) as T;
        } catch {
          // an older libc without the symbol
        }
      }
      return undefined;
    };
    const linux = process.platform === 'linux';
    libc = {
      flock: found.func('int flock(int fd, int operation)') as Libc['flock'],
      errno: (value) => (value === undefined ? koffi.errno() : koffi.errno(value)),
      // musl without the *64 names has getdents, whose records are the same (64-bit offsets).
      getdents64: linux
        ? optional(
            'long getdents64(int fd, _Out_ uint8_t *buf, size_t count)',
            'long getdents(int fd, _Out_ uint8_t *buf, size_t count)',
          )
        : undefined,
      statx: linux
        ? optional('int statx(int dirfd, const char *path, int flags, unsigned int mask, _Out_ uint8_t *buf)')
        : undefined,
    };
  }
  return libc;
}

/** The C library tokcap calls, or why there is none: for `tokcap --version --json` and the lock's check. */
export function libcStatus(): { file: string } | { error: string } {
  try {
    loadLibc();
    return { file: loadedFrom ?? 'unknown' };
  } catch (e) {
    return { error: firstLine(e) };
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
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
