/**
 * Large lines that failed to parse, remembered by content so that a command parses a damaged line
 * once: `inspect DIR ID` reads a rollout's records three times (its facts, its preview build and
 * its digests), and a torn 50 MB tail would otherwise be decoded and scanned each time.
 *
 * A line is looked up only when its length and first and last bytes match a remembered one; the
 * SHA-256 of its bytes then decides, so a valid large line costs nothing here and a different
 * line of the same shape is never mistaken for one that failed.
 */
import { createHash } from 'node:crypto';

/** Lines shorter than this are parsed again: parsing them costs about what looking them up would. */
export const REMEMBERED_MIN_BYTES = 64 * 1024;
const EDGE = 32;
const KEEP = 4;

interface Failure {
  length: number;
  head: Buffer;
  tail: Buffer;
  digest: Buffer;
  message: string;
}

const failures: Failure[] = [];
let parsedLarge = 0;

function bytesOf(line: Uint8Array): Buffer {
  return Buffer.isBuffer(line) ? line : Buffer.from(line.buffer, line.byteOffset, line.byteLength);
}

function digestOf(line: Buffer): Buffer {
  return createHash('sha256').update(line).digest();
}

/** The parse error message of a remembered failed line with these bytes, if any. */
export function rememberedFailure(line: Uint8Array): string | undefined {
  if (line.length < REMEMBERED_MIN_BYTES) return undefined;
  const b = bytesOf(line);
  let digest: Buffer | undefined;
  for (const f of failures) {
    if (f.length !== b.length || !f.head.equals(b.subarray(0, EDGE)) || !f.tail.equals(b.subarray(b.length - EDGE)))
      continue;
    digest ??= digestOf(b);
    if (f.digest.equals(digest)) return f.message;
  }
  return undefined;
}

/** Counts a large line handed to the parser (see `largeLinesParsed`). */
export function noteLargeParse(line: Uint8Array): void {
  if (line.length >= REMEMBERED_MIN_BYTES) parsedLarge += 1;
}

/** Remembers that a large line failed to parse with `message`. */
export function rememberFailure(line: Uint8Array, message: string): void {
  if (line.length < REMEMBERED_MIN_BYTES) return;
  const b = bytesOf(line);
  failures.unshift({
    length: b.length,
    head: Buffer.from(b.subarray(0, EDGE)),
    tail: Buffer.from(b.subarray(b.length - EDGE)),
    digest: digestOf(b),
    message,
  });
  failures.length = Math.min(failures.length, KEEP);
}

/** How many lines of REMEMBERED_MIN_BYTES or more this thread has parsed (tests count work with it). */
export function largeLinesParsed(): number {
  return parsedLarge;
}
