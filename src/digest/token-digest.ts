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

/** Writes ids as u64be into the hash, in bounded chunks (no buffer the size of the sequence). */
function updateIds(hash: Hash, ids: readonly TokenId[], start: number, end: number): void {
  const buf = Buffer.allocUnsafe(Math.min(end - start, CHUNK_IDS) * 8);
  let i = start;
  while (i < end) {
    const n = Math.min(end - i, CHUNK_IDS);
    for (let k = 0; k < n; k++) {
      const id = ids[i + k];
      const off = k * 8;
      if (typeof id === 'number') {
        if (!(id >= 0) || !Number.isInteger(id)) throw tokenIdError(id);
        // Split into two u32 halves: exact for every safe integer, much faster than BigInt.
        const hi = Math.floor(id / 4294967296);
        buf.writeUInt32BE(hi, off);
        buf.writeUInt32BE(id - hi * 4294967296, off + 4);
      } else {
        if (id < 0n || id > U64_MAX) throw tokenIdError(id);
        buf.writeBigUInt64BE(id, off);
      }
    }
    hash.update(n * 8 === buf.length ? buf : buf.subarray(0, n * 8));
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
