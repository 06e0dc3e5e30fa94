/**
 * `fstat` of an open descriptor without Node's `Stats` object: on Linux through `statx(fd, "",
 * AT_EMPTY_PATH)` (koffi, into one reused buffer), elsewhere, or when that call fails, through
 * `fstatSync` (whose answer or error then decides). A `Stats` costs ~1 KB of garbage (18 fields,
 * four `Date`s) and ~6 µs; a watch load fstats ~4 files per rollout on its main thread, where
 * those allocations were most of what it allocated and set its peak memory.
 */
import { fstatSync } from 'node:fs';
import { loadLibc, type Libc } from './libc.js';

/** What the callers read of an fstat (the same numbers as `fs.Stats`'s fields of those names). */
export interface FdStat {
  /** `st_mode`: the file type is `mode & S_IFMT` (see `fileType`). */
  mode: number;
  nlink: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export type FileType = 'file' | 'directory' | 'fifo' | 'other';

const S_IFMT = 0o170000;

export function fileType(mode: number): FileType {
  switch (mode & S_IFMT) {
    case 0o100000:
      return 'file';
    case 0o040000:
      return 'directory';
    case 0o010000:
      return 'fifo';
    default:
      return 'other';
  }
}

/** <fcntl.h>, <linux/stat.h>: the same values on every Linux architecture. */
const AT_EMPTY_PATH = 0x1000;
const STATX_TYPE = 0x1;
const STATX_MODE = 0x2;
const STATX_NLINK = 0x4;
const STATX_MTIME = 0x40;
const STATX_INO = 0x100;
const STATX_SIZE = 0x200;
const WANTED = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_MTIME | STATX_INO | STATX_SIZE;
/** struct statx (256 bytes): stx_mask u32 at 0, stx_nlink u32 at 16, stx_mode u16 at 28, stx_ino u64 at 32, stx_size u64 at 40, stx_mtime { s64, u32 } at 112. */
const STATX_SIZE_BYTES = 256;

type Statx = NonNullable<Libc['statx']>;
let statx: Statx | null | undefined;
let buf: Buffer | undefined;

function nativeStatx(): Statx | null {
  if (statx === undefined) {
    statx = null;
    if (process.platform === 'linux') {
      try {
        statx = loadLibc().statx ?? null;
      } catch {
        // no koffi or no libc: Node's fstat
      }
    }
  }
  return statx;
}

/** A u64 as Node gives it (a double; exact below 2^53), with no BigInt per call. */
function u64(b: Buffer, at: number): number {
  return b.readUInt32LE(at + 4) * 2 ** 32 + b.readUInt32LE(at);
}

/** The fstat of `fd`; throws Node's error when the descriptor cannot be stat'ed. */
export function fdStat(fd: number): FdStat {
  const call = nativeStatx();
  if (call !== null) {
    const b = (buf ??= Buffer.alloc(STATX_SIZE_BYTES));
    if (call(fd, '', AT_EMPTY_PATH, WANTED, b) === 0 && (b.readUInt32LE(0) & WANTED) === WANTED) {
      const sec = b.readInt32LE(112 + 4) * 2 ** 32 + b.readUInt32LE(112);
      return {
        mode: b.readUInt16LE(28),
        nlink: b.readUInt32LE(16),
        ino: u64(b, 32),
        size: u64(b, 40),
        // As Node computes `mtimeMs` from the same seconds and nanoseconds.
        mtimeMs: sec * 1000 + b.readUInt32LE(120) / 1e6,
      };
    }
  }
  const st = fstatSync(fd);
  return { mode: st.mode, nlink: st.nlink, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}
