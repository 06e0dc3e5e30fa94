/**
 * A rollout's change signature for the watch: the (inode, size, mtime) of each of its capture
 * files, folded into one number. The model keeps one per rollout and compares it with a fresh
 * one (a rescan's lstat, or the fstat of a copy) to decide whether to read the rollout again.
 * A number, not the stamps spelled out: 100,000 rollouts keep 8 bytes each instead of a string
 * of ~100, and a rescan allocates no string per rollout. Two different sets of stamps give the
 * same number with a probability of about 2^-53 (a change then shows at the next one).
 */
import { lstatSync } from 'node:fs';
import { SUFFIX, type FileKind } from '../layout/file-names.js';
import { filesOfMask } from '../layout/scan-directory.js';
import type { CopiedKind, FileStamp } from '../ops/rollout-copy.js';

export interface FileStat {
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * A capture file's stamp for a signature: lstat, synchronous (a local file's lstat takes
 * microseconds, far less than the thread pool's round trip); null when the file does not exist,
 * or a path component is a file (ENOTDIR); other failures are thrown.
 */
export function lstatStamp(path: string): FileStat | null {
  try {
    const s = lstatSync(path, { throwIfNoEntry: false });
    return s ? { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs } : null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw e;
  }
}

export interface Signature {
  key: number;
  present: Set<FileKind>;
  /** Newest mtime of the files present (0: none). */
  mtimeMs: number;
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** Builds a signature file by file (in a fixed order of kinds). */
export class SignatureBuilder {
  private h1 = 0x811c9dc5;
  private h2 = 0x9e3779b9;
  readonly present = new Set<FileKind>();
  mtimeMs = 0;

  add(kind: FileKind, kindIndex: number, s: FileStat): void {
    this.present.add(kind);
    this.mix(kindIndex);
    this.mix(s.ino);
    this.mix(s.size);
    this.mix(s.mtimeMs);
    this.mtimeMs = Math.max(this.mtimeMs, s.mtimeMs);
  }

  done(): Signature {
    // Final avalanche of both halves (murmur3's fmix32), then 32 + 21 bits: an exact integer.
    const a = fmix(this.h1 ^ this.present.size) >>> 0;
    const b = fmix(this.h2 ^ Math.imul(this.present.size, 0x27d4eb2f)) >>> 11;
    return { key: a * 2 ** 21 + b, present: this.present, mtimeMs: this.mtimeMs };
  }

  private mix(x: number): void {
    f64[0] = x;
    for (let i = 0; i < 2; i++) {
      const w = u32[i];
      this.h1 = Math.imul(this.h1 ^ w, 0x01000193);
      this.h2 = Math.imul(this.h2 ^ w, 0x5bd1e995);
      this.h2 ^= this.h2 >>> 15;
    }
  }
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** The capture files that make a rollout present, in signature order (the lock file does not count). */
export const SIGNATURE_KINDS: readonly FileKind[] = ['jsonl', 'state', 'intents', 'incomplete'];

/** A copy's signature as the model keeps it: the number, and the kinds present joined by `+`. */
export interface CopySignature {
  key: number;
  kinds: string;
}

/**
 * The signature a rescan's lstats give (`SignatureBuilder` over SIGNATURE_KINDS), from the stamps
 * of a copy (the fstat of what was read): computed by the thread that builds the row, so the
 * main thread of a load only stores it.
 */
export function copySignature(stamps: Partial<Record<CopiedKind, FileStamp>>): CopySignature {
  const sig = new SignatureBuilder();
  let kinds = '';
  SIGNATURE_KINDS.forEach((kind, i) => {
    const s = stamps[kind as CopiedKind];
    if (s === undefined) return;
    sig.add(kind, i, s);
    kinds = kinds === '' ? kind : `${kinds}+${kind}`;
  });
  return { key: sig.done().key, kinds };
}

/**
 * The signatures that a rescan's lstats give (the model's own stat pass: `SignatureBuilder` over
 * the kinds listed, with the default readers' lstat), of the rollouts `from` to `to` of a listing
 * (`masks`: scan-directory.ts `filesOfMask`), into `keys` and `mtimes` (newest mtime of the files;
 * a key of NaN: a file could not be stat'ed, the model reads that rollout again). For the read
 * worker, which takes a rescan's stat pass off the thread that draws the screen.
 */
export function listedSignatures(
  dir: string,
  ids: readonly string[],
  masks: Uint8Array,
  from: number,
  to: number,
  keys: Float64Array,
  mtimes: Float64Array,
): void {
  const base = dir.endsWith('/') ? dir : dir + '/';
  for (let i = from; i < to; i++) {
    const files = filesOfMask(masks[i]);
    const sig = new SignatureBuilder();
    let failed = false;
    for (let k = 0; k < SIGNATURE_KINDS.length && !failed; k++) {
      const kind = SIGNATURE_KINDS[k];
      if (!files.has(kind)) continue;
      try {
        const s = lstatStamp(base + ids[i] + SUFFIX[kind]);
        if (s) sig.add(kind, k, s);
      } catch {
        failed = true;
      }
    }
    const done = sig.done();
    keys[i] = failed ? NaN : done.key;
    mtimes[i] = failed ? 0 : done.mtimeMs;
  }
}
