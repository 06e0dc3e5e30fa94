/**
 * The rollout ids of a listing keyed by their bytes as the system lists them: a string is made
 * once per rollout, not once per name (a rollout has up to five names; 400,000 fresh strings
 * looked up in a Map cost ~0.3 s of a 100k listing, more than the system calls themselves).
 * Open addressing over flat arrays; the ids' bytes are copied into one arena because the
 * listing's buffer is reused.
 */
export class ByteIdIndex {
  /** 0: empty, else entry + 1. A power of two, at most half full. */
  private slots = new Int32Array(4096);
  private hashes = new Int32Array(1024);
  private starts = new Int32Array(1024);
  private lengths = new Int32Array(1024);
  private arena = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  /** Entries so far (ids in the order first seen). */
  size = 0;

  /**
   * The entry of the id in `buf[start, end)` whose FNV-1a hash is `hash`, added when new
   * (`size` then grows by one).
   */
  entry(buf: Uint8Array, start: number, end: number, hash: number): number {
    const mask = this.slots.length - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot];
      if (held === 0) break;
      const e = held - 1;
      if (this.hashes[e] === hash && this.lengths[e] === length && this.sameBytes(e, buf, start, length)) return e;
    }
    return this.add(buf, start, end, hash);
  }

  /** An entry's id as a string (ASCII: ids are validated before they get here). */
  id(entry: number): string {
    return this.arena.toString('latin1', this.starts[entry], this.starts[entry] + this.lengths[entry]);
  }

  private sameBytes(e: number, buf: Uint8Array, start: number, length: number): boolean {
    const arena = this.arena;
    const at = this.starts[e];
    for (let i = 0; i < length; i++) if (arena[at + i] !== buf[start + i]) return false;
    return true;
  }

  private add(buf: Uint8Array, start: number, end: number, hash: number): number {
    const e = this.size++;
    if (e === this.hashes.length) {
      this.hashes = grown(this.hashes);
      this.starts = grown(this.starts);
      this.lengths = grown(this.lengths);
    }
    const length = end - start;
    if (this.used + length > this.arena.length) {
      const arena = Buffer.allocUnsafe(2 * Math.max(this.arena.length, this.used + length));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
    const arena = this.arena;
    for (let i = 0, at = this.used; i < length; i++) arena[at + i] = buf[start + i];
    this.hashes[e] = hash;
    this.starts[e] = this.used;
    this.lengths[e] = length;
    this.used += length;
    if (2 * this.size > this.slots.length) this.rehash();
    else this.place(e);
    return e;
  }

  private place(e: number): void {
    const mask = this.slots.length - 1;
    let slot = this.hashes[e] & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = e + 1;
  }

  private rehash(): void {
    this.slots = new Int32Array(2 * this.slots.length);
    for (let e = 0; e < this.size; e++) this.place(e);
  }
}

function grown(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(2 * a.length);
  b.set(a);
  return b;
}

/** FNV-1a's start and step, for callers that hash while they scan the bytes. */
export const FNV_OFFSET = 0x811c9dc5 | 0;
export const fnvStep = (hash: number, byte: number): number => Math.imul(hash ^ byte, 0x01000193);
