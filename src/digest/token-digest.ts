import { createHash, type Hash } from 'node:crypto';
import { TokcapError } from '../errors.js';

/**
 * Token digests (FORMAT.md §8): SHA-256 over "nemo-gym-tokens", 0x01, u64be(count), u64be(id)...
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
  // The reference crashes with StopIteration here (Appendix B.4); tokcap reports it instead.
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
    for (let k = 0; k < n; k++) {
      const id = ids[i + k];
      if (typeof id === 'number') {
        if (!(id >= 0) || !Number.isInteger(id)) throw tokenIdError(id);
        if (id <= 0xffffffff) {
          u32[2 * k] = 0;
          u32[2 * k + 1] = id;
        } else {
          // Exact for every safe integer: two u32 halves.
          const hi = Math.floor(id / 4294967296);
          u32[2 * k] = hi;
          u32[2 * k + 1] = id - hi * 4294967296;
        }
      } else {
        if (id < 0n || id > U64_MAX) throw tokenIdError(id);
        u32[2 * k] = Number(id >> 32n);
        u32[2 * k + 1] = Number(id & 0xffffffffn);
      }
    }
    const bytes = buf.subarray(0, n * 8);
    if (LITTLE_ENDIAN) bytes.swap32();
    hash.update(bytes);
    i += n;
  }
}

function header(count: number): Buffer {
  const h = Buffer.alloc(DOMAIN.length + 1 + 8);
  DOMAIN.copy(h, 0);
  h[DOMAIN.length] = 0x01;
  h.writeBigUInt64BE(BigInt(count), DOMAIN.length + 1);
  return h;
}

/** Digest of `ids[0:length]` (default: the whole sequence). */
export function computeTokenDigest(ids: readonly TokenId[], length: number = ids.length): string {
  if (length === 0) return EMPTY_TOKEN_DIGEST;
  const hash = createHash('sha256');
  hash.update(header(length));
  updateIds(hash, ids, 0, length);
  return hash.digest('hex');
}

/** Digest of the concatenation of several sequences, without concatenating them. */
export function computeTokenDigestOfParts(parts: readonly (readonly TokenId[])[]): string {
  let total = 0;
  for (const p of parts) total += p.length;
  if (total === 0) return EMPTY_TOKEN_DIGEST;
  const hash = createHash('sha256');
  hash.update(header(total));
  for (const p of parts) updateIds(hash, p, 0, p.length);
  return hash.digest('hex');
}

/** SHA-256 hex of raw bytes: the entry digest of a stripped line (FORMAT.md §4.7). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
