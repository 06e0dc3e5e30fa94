#!/usr/bin/env node
// A second, stricter floor (not the one the targets are measured against): bench/floor-scan.mjs
// (read, split lines, JSON.parse, SHA-256 per line) plus the token digest of every record's
// cumulative sequence (docs/format.md#token-digests: "nemo-gym-tokens", 0x01, u64be count, u64be ids), with
// delta records rebuilt from their parent's sequence. That hashing is work verify-digests cannot
// skip: a digest puts the count first, so no hash of a parent's sequence can be carried over.
// No validation, no locks, no state files, no findings. Prints "<files> <lines> <bytes> <ids hashed>
// <digests that matched>".
// Usage: node bench/floor-digests.mjs <jsonl files...>
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const DOMAIN = Buffer.from('nemo-gym-tokens', 'ascii');
let lines = 0;
let bytes = 0;
let hashed = 0;
let matching = 0;
let sink = 0;
let scratch = Buffer.alloc(1 << 19);

/** Ids as u64be: two u32 halves per id, byte-swapped in place (a little-endian host). */
function tokenDigest(ids) {
  const h = createHash('sha256').update(DOMAIN);
  if (ids.length === 0) return h.digest('hex');
  const n = ids.length + 1;
  if (scratch.length < 8 * n) scratch = Buffer.alloc(16 * n);
  const u32 = new Uint32Array(scratch.buffer, scratch.byteOffset, 2 * n);
  u32[0] = Math.floor(ids.length / 2 ** 32);
  u32[1] = ids.length % 2 ** 32;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    u32[2 * i + 2] = Math.floor(id / 2 ** 32);
    u32[2 * i + 3] = id % 2 ** 32;
  }
  const body = scratch.subarray(0, 8 * n).swap32();
  hashed += ids.length;
  return h
    .update(Buffer.from([1]))
    .update(body)
    .digest('hex');
}

for (const file of process.argv.slice(2)) {
  const data = readFileSync(file);
  bytes += data.length;
  const cumulative = new Map();
  let from = 0;
  for (;;) {
    const nl = data.indexOf(10, from);
    const end = nl === -1 ? data.length : nl;
    if (end > from) {
      const line = data.subarray(from, end);
      lines++;
      sink += createHash('sha256').update(line).digest('hex').length;
      try {
        const r = JSON.parse(line.toString('utf8'));
        const base = r.prompt_is_delta ? cumulative.get(r.parent_call_id) : [];
        if (base !== undefined) {
          const seq = base.concat(r.prompt_token_ids, r.generation_token_ids);
          cumulative.set(r.model_call_id, seq);
          if (tokenDigest(seq) === r.digest) matching++;
        }
      } catch {
        sink += 1;
      }
    }
    if (nl === -1) break;
    from = nl + 1;
  }
}
process.stdout.write(`${process.argv.length - 2} ${lines} ${bytes} ${hashed} ${matching}${sink < 0 ? '!' : ''}\n`);
