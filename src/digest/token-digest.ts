import { createHash, hash as oneShotHash, type Hash } from 'node:crypto';
import { TokcapError } from '../errors.js';

/**
 * Token digests (docs/format.md#token-digests): SHA-256 over "nemo-gym-tokens", 0x01, u64be(count), u64be(id)...
 * The empty sequence hashes the domain alone.
 */
const DOMAIN = Buffer.from('nemo-gym-tokens', 'ascii');
const U64_MAX = 2n ** 64n - 1n;
const CHUNK_IDS = 8192;

export const EMPTY_TOKEN_DIGEST = '2e222d36d0c6ae1db1ec18b3f96d9a46df5db61b40137bbfbac4cdf0acde9763';

export type TokenId = number | bigint;

export function tokenIdError(id: TokenId): TokcapError {
  if (id < 0) {
    return new TokcapError('other', `token ids must be non-negative, got ${id}`, { pyClass: 'ValueError' });
  }
  // The reference crashes with StopIteration here (docs/format.md#hazard-4); tokcap reports it instead.
  return new TokcapError('other', `token id ${id} does not fit in 64 bits`, { pyClass: 'ValueError' });
}

/**
 * Writes ids as u64be into the hash, in bounded chunks (no buffer the size of the sequence).
 * Each id is stored as two native-endian u32 halves (hi, lo) through a Uint32Array view and the
 * chunk is then byte-swapped in place (`swap32`, native): on a little-endian host that yields
 * exactly u64be(id). This is several times faster than `writeUInt32BE` per half.
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
let scratch: Buffer | undefined;
let scratch32: Uint32Array | undefined;

/** A non-negative safe integer as (hi, lo) native u32 halves at slot `k` (u64be after `swap32`). */
function setU64(u32: Uint32Array, k: number, id: number): void {
  if (id <= 0xffffffff) {
    u32[2 * k] = 0;
    u32[2 * k + 1] = id;
  } else {
    // Exact for every safe integer.
    const hi = Math.floor(id / 4294967296);
    u32[2 * k] = hi;
    u32[2 * k + 1] = id - hi * 4294967296;
  }
}

/** Any id as (hi, lo) halves at slot `k` (u64be after `swap32`); throws `tokenIdError` if it has none. */
function setId(u32: Uint32Array, k: number, id: TokenId): void {
  if (typeof id === 'number') {
    if (!(id >= 0) || !Number.isInteger(id)) throw tokenIdError(id);
    setU64(u32, k, id);
  } else {
    if (id < 0n || id > U64_MAX) throw tokenIdError(id);
    u32[2 * k] = Number(id >> 32n);
    u32[2 * k + 1] = Number(id & 0xffffffffn);
  }
}

function updateIds(hash: Hash, ids: readonly TokenId[], start: number, end: number): void {
  if (scratch === undefined || scratch32 === undefined) {
    // Own (not pooled) memory, 8-byte aligned for the Uint32Array view.
    const ab = new ArrayBuffer(CHUNK_IDS * 8);
    scratch = Buffer.from(ab);
    scratch32 = new Uint32Array(ab);
  }
  const buf = scratch;
  const u32 = scratch32;
  let i = start;
  while (i < end) {
    const n = Math.min(end - i, CHUNK_IDS);
    for (let k = 0; k < n; k++) setId(u32, k, ids[i + k]);
    const bytes = buf.subarray(0, n * 8);
    if (LITTLE_ENDIAN) bytes.swap32();
    hash.update(bytes);
    i += n;
  }
}

/** The bytes before the ids: the domain, 0x01 and u64be(count). */
const HEADER_BYTES = DOMAIN.length + 1 + 8;

function header(count: number): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  writeHeader(h, count);
  return h;
}

/** Writes the header of a sequence of `count` ids at the start of `into`. */
function writeHeader(into: Buffer, count: number): void {
  DOMAIN.copy(into, 0);
  into[DOMAIN.length] = 0x01;
  into.writeUInt32BE(Math.floor(count / 4294967296), DOMAIN.length + 1);
  into.writeUInt32BE(count >>> 0, DOMAIN.length + 5);
}

/**
 * SHA-256 hex of bytes held in one buffer, in one call: no Hash object (its set-up costs several
 * times the hashing of a short line; verify makes two per record).
 */
function sha256HexOf(bytes: Uint8Array): string {
  return oneShotHash('sha256', bytes, 'hex');
}

/**
 * The u64be bytes of the last sequence hashed (from CACHE_MIN to CACHE_MAX ids), with its ids:
 * the next sequence that starts with the same ids (compared by value) hashes those bytes as
 * they are and converts only its own tail. A rollout's cumulative sequences each extend the
 * previous one, so most ids are converted once. (The hash itself cannot be carried over: the
 * count comes first.)
 */
const CACHE_MIN = 256;
const CACHE_MAX = 1 << 20;
/** The header's room (the last sequence's count is written there), then the ids' u64be bytes. */
let cacheBytes = Buffer.alloc(HEADER_BYTES);
/** The ids' bytes as native u32 halves (from byte HEADER_BYTES on). */
let cacheU32 = new Uint32Array(0);
let cacheIds = new Float64Array(0);
let cacheLength = 0;

function reserveCache(n: number): void {
  if (cacheIds.length >= n) return;
  const size = Math.min(CACHE_MAX, n + (n >> 1));
  const ab = new ArrayBuffer(HEADER_BYTES + size * 8);
  const bytes = Buffer.from(ab);
  cacheBytes.copy(bytes, HEADER_BYTES, HEADER_BYTES, HEADER_BYTES + cacheLength * 8);
  const ids = new Float64Array(size);
  ids.set(cacheIds.subarray(0, cacheLength));
  cacheBytes = bytes;
  cacheU32 = new Uint32Array(ab, HEADER_BYTES, size * 2);
  cacheIds = ids;
}

/**
 * The digest of the ids of `parts[0][0:ends[0]]`, `parts[1][0:ends[1]]`... (`total` ids in
 * all, from CACHE_MIN to CACHE_MAX) through the cache. Undefined, with nothing hashed, when an
 * id is not a plain number in range: the caller then hashes them with `updateIds`, which
 * reports the bad id.
 */
function digestCached(
  parts: readonly (readonly TokenId[])[],
  ends: readonly number[],
  total: number,
): string | undefined {
  reserveCache(total);
  const ids = cacheIds;
  const u32 = cacheU32;
  // The ids shared with the cache, then the rest, converted into it.
  let firstNew = -1;
  let pos = 0;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k];
    const end = ends[k];
    let i = 0;
    if (firstNew === -1) {
      const known = Math.min(end, cacheLength - pos);
      while (i < known && part[i] === ids[pos + i]) i++;
      pos += i;
      if (i < end) firstNew = pos;
    }
    for (; i < end; i++, pos++) {
      const id = part[i];
      if (typeof id !== 'number' || !(id >= 0) || !Number.isInteger(id)) {
        cacheLength = firstNew;
        return undefined;
      }
      setU64(u32, pos, id);
      ids[pos] = id;
    }
  }
  if (firstNew !== -1) {
    if (LITTLE_ENDIAN) cacheBytes.subarray(HEADER_BYTES + firstNew * 8, HEADER_BYTES + total * 8).swap32();
    cacheLength = total;
  }
  lastShared = firstNew === -1 ? total : firstNew;
  // (All shared: the cache keeps the longer sequence it holds.)
  writeHeader(cacheBytes, total);
  return sha256HexOf(cacheBytes.subarray(0, HEADER_BYTES + total * 8));
}

/** See `sharedWithCachedDigest`. */
let lastShared = -1;

/**
 * How many leading ids the last sequence digested (`computeTokenDigest*`) had in common, by value
 * as `===` compares, with what the cache held before it; -1 when it did not go through the cache
 * (empty, too short or too long, or an id that is not a plain number, after which the cache may
 * have been cut). A caller that digests P and then Q, nothing in between, and reads a value
 * other than -1 after each, learns whether Q starts with P (shared >= P's length: the cache then
 * held P's ids as its first ones) without comparing the ids again.
 */
export function sharedWithCachedDigest(): number {
  return lastShared;
}

function digestOf(parts: readonly (readonly TokenId[])[], ends: readonly number[], total: number): string {
  lastShared = -1;
  if (total === 0) return EMPTY_TOKEN_DIGEST;
  if (total >= CACHE_MIN && total <= CACHE_MAX) {
    const digest = digestCached(parts, ends, total);
    if (digest !== undefined) return digest;
  }
  const hash = createHash('sha256');
  hash.update(header(total));
  for (let k = 0; k < parts.length; k++) updateIds(hash, parts[k], 0, ends[k]);
  return hash.digest('hex');
}

/** Digest of `ids[0:length]` (default: the whole sequence). */
export function computeTokenDigest(ids: readonly TokenId[], length: number = ids.length): string {
  return digestOf([ids], [length], length);
}

/** Digest of the concatenation of several sequences, without concatenating them. */
export function computeTokenDigestOfParts(parts: readonly (readonly TokenId[])[]): string {
  let total = 0;
  // Made as `computeTokenDigest`'s `[length]` is (small integers, no holes):
  // `digestCached` sees one kind of array and is not compiled again for a second.
  const ends: number[] = [];
  for (const p of parts) {
    total += p.length;
    ends.push(p.length);
  }
  return digestOf(parts, ends, total);
}

/** SHA-256 hex of raw bytes: the entry digest of a stripped line (docs/format.md#entry-digest). */
export function sha256Hex(bytes: Uint8Array): string {
  return sha256HexOf(bytes);
}

/**
 * The u64be bytes of one growing sequence of ids, with the digest of any prefix of it. A delta
 * chain's cumulative sequences each extend their parent's (docs/format.md#cumulative-sequence): built here part by
 * part, every id is converted once and no array of the whole sequence is made. `truncate` goes
 * back to a shorter prefix (a sibling of a call extends its parent, not the call).
 */
export class TokenSequence {
  /** The header's room (written by `digest`), then the ids' u64be bytes. */
  private bytes = Buffer.alloc(HEADER_BYTES);
  /** The ids' bytes as native u32 halves. */
  private u32 = new Uint32Array(0);
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Appends ids; on a negative, fractional or too large id throws `tokenIdError` and appends nothing. */
  append(ids: readonly TokenId[]): void {
    const n = ids.length;
    const from = this.count;
    this.reserve(from + n);
    const u32 = this.u32;
    for (let i = 0; i < n; i++) setId(u32, from + i, ids[i]);
    if (LITTLE_ENDIAN) this.bytes.subarray(HEADER_BYTES + from * 8, HEADER_BYTES + (from + n) * 8).swap32();
    this.count = from + n;
  }

  truncate(length: number): void {
    if (length < this.count) this.count = Math.max(0, length);
  }

  /** Empties the sequence and lets its memory go if it holds more than `maxBytes`. */
  reset(maxBytes: number): void {
    this.count = 0;
    if (this.bytes.length > maxBytes) {
      this.bytes = Buffer.alloc(HEADER_BYTES);
      this.u32 = new Uint32Array(0);
    }
  }

  /** Digest of the first `length` ids (default: all). */
  digest(length: number = this.count): string {
    if (length > this.count) throw new RangeError(`digest of ${length} ids asked of a sequence of ${this.count}`);
    if (length === 0) return EMPTY_TOKEN_DIGEST;
    writeHeader(this.bytes, length);
    return sha256HexOf(this.bytes.subarray(0, HEADER_BYTES + length * 8));
  }

  private reserve(n: number): void {
    if (this.u32.length >= 2 * n) return;
    const size = Math.max(n + (n >> 1), 1024);
    const grown = Buffer.from(new ArrayBuffer(HEADER_BYTES + size * 8));
    this.bytes.copy(grown, HEADER_BYTES, HEADER_BYTES, HEADER_BYTES + this.count * 8);
    this.bytes = grown;
    this.u32 = new Uint32Array(grown.buffer, HEADER_BYTES, size * 2);
  }
}
