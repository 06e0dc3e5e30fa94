/**
 * A directory's entries and its files' mtimes through the system calls themselves (Linux,
 * getdents64 and statx through koffi): Node's listing makes a string and an object per entry
 * (~0.6 s for 400,000 names on the reference machine, against ~0.1 s for the getdents64 calls),
 * and its lstat a Stats object per file (~2x the system's cost). Undefined where they are not
 * available (another system, an older libc, koffi missing): callers keep Node's way then, and
 * fall back to it on any error (Node's error then says what went wrong).
 */
import { closeSync, constants, openSync } from 'node:fs';
import { loadLibc, type Libc } from './libc.js';

/** linux_dirent64: d_ino u64, d_off s64, d_reclen u16 at 16, d_type u8 at 18, d_name at 19. */
const RECLEN_AT = 16;
const NAME_AT = 19;
/** <fcntl.h>, <linux/stat.h>: the same values on every Linux architecture. */
const AT_SYMLINK_NOFOLLOW = 0x100;
const STATX_MTIME = 0x40;
/** struct statx: stx_mask u32 at 0, stx_mtime { tv_sec s64, tv_nsec u32 } at 112; 256 bytes. */
const STATX_SIZE = 256;
const MTIME_SEC_AT = 112;
const MTIME_NSEC_AT = 120;

/** Bytes read per getdents64 call (~18 calls for 400,000 short names; larger buffers are slower). */
const ENTRIES_BUFFER = 1 << 20;

export interface RawDirectory {
  /**
   * Calls `visit(buf, start, end)` with each entry's name as bytes (`.` and `..` skipped), in the
   * order the system lists them (Node's `opendir` order). `buf` is reused after `visit` returns.
   * Throws on any error. `bufferSize`: bytes read per call (tests use small ones).
   */
  forEachEntry(dir: string, visit: (buf: Buffer, start: number, end: number) => void, bufferSize?: number): void;
  /** An open descriptor of `dir` for `mtimeAt` (throws when it cannot be opened). */
  open(dir: string): number;
  close(dirFd: number): void;
  /**
   * `lstat(name).mtimeMs` of a name in the directory `dirFd` (computed as Node computes it, from
   * the same seconds and nanoseconds); undefined when statx fails or gives no mtime (the caller
   * asks Node's lstat, whose answer or error then decides).
   */
  mtimeAt(dirFd: number, name: string): number | undefined;
}

let raw: RawDirectory | null | undefined;

/** The system calls' way, or undefined where it is not available. */
export function rawDirectory(): RawDirectory | undefined {
  if (raw === undefined) raw = process.platform === 'linux' ? make() : null;
  return raw ?? undefined;
}

function make(): RawDirectory | null {
  let libc: Libc;
  try {
    libc = loadLibc();
  } catch {
    return null;
  }
  const { getdents64, statx } = libc;
  if (!getdents64 || !statx) return null;
  let entries: Buffer | undefined;
  const statBuf = Buffer.alloc(STATX_SIZE);
  const open = (dir: string) => openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  return {
    open,
    close: (fd) => closeSync(fd),
    forEachEntry(dir, visit, bufferSize = ENTRIES_BUFFER) {
      const fd = open(dir);
      // One buffer per thread, taken while in use: a visit that lists again gets its own.
      const buf =
        bufferSize === ENTRIES_BUFFER ? (entries ?? Buffer.allocUnsafe(bufferSize)) : Buffer.allocUnsafe(bufferSize);
      if (buf === entries) entries = undefined;
      try {
        for (;;) {
          const n = Number(getdents64(fd, buf, buf.length));
          if (n === 0) return;
          if (!(n > 0)) throw new Error(`getdents64 failed (errno ${libc.errno()})`);
          for (let at = 0; at < n;) {
            const next = at + (buf[at + RECLEN_AT] | (buf[at + RECLEN_AT + 1] << 8));
            // The name is NUL-terminated, then padded (not with NULs) to a multiple of 8 bytes:
            // its NUL is within the record's last 8 bytes.
            const start = at + NAME_AT;
            let end = Math.max(start, next - 8);
            while (buf[end] !== 0) end++;
            const dots = buf[start] === 0x2e && (end === start + 1 || (end === start + 2 && buf[start + 1] === 0x2e));
            if (!dots) visit(buf, start, end);
            at = next;
          }
        }
      } finally {
        if (bufferSize === ENTRIES_BUFFER) entries = buf;
        closeSync(fd);
      }
    },
    mtimeAt(dirFd, name) {
      if (statx(dirFd, name, AT_SYMLINK_NOFOLLOW, STATX_MTIME, statBuf) !== 0) return undefined;
      if ((statBuf.readUInt32LE(0) & STATX_MTIME) === 0) return undefined;
      // Seconds from two halves (exact below 2^53, as Node's double), no BigInt per call.
      const sec = statBuf.readInt32LE(MTIME_SEC_AT + 4) * 2 ** 32 + statBuf.readUInt32LE(MTIME_SEC_AT);
      return sec * 1000 + statBuf.readUInt32LE(MTIME_NSEC_AT) / 1e6;
    },
  };
}
