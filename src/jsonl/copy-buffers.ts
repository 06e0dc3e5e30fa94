/**
 * Reused memory for the copies of J that verify and inspect --deep parse (read-jsonl-bytes.ts)
 * and that build and export parse into a read-only snapshot (src/ops/read-snapshot.ts).
 *
 * Why: a copy lives through several young-generation collections while its rollout is parsed,
 * so V8 promotes it and frees it only at a full collection, which external memory triggers
 * after it has grown by about 64 MB. Each thread then held up to ~64 MB of copies it had
 * finished with (most of what a worker added to peak RSS). Buffers given back here are reused
 * instead: a worker moves each one back to the main thread when its rollout is done.
 *
 * A buffer may be given back only when no view of it is kept: a later copy overwrites it.
 */

/** Buffers kept for reuse, and their total size. Larger ones are not kept. */
const MAX_KEPT = 24;
const MAX_KEPT_BYTES = 96 * 2 ** 20;
const MAX_KEPT_SIZE = 16 * 2 ** 20;
/** New buffers have at least this capacity, and a quarter more than asked (J grows). */
const MIN_CAPACITY = 64 * 2 ** 10;

const kept: ArrayBuffer[] = [];
let keptBytes = 0;

/** `size` bytes (contents undefined) over an ArrayBuffer of its own, starting at offset 0. */
export function takeCopyBuffer(size: number): Buffer {
  let best = -1;
  for (let i = 0; i < kept.length; i++) {
    const n = kept[i].byteLength;
    if (n >= size && (best === -1 || n < kept[best].byteLength)) best = i;
  }
  if (best !== -1) {
    const ab = kept[best];
    kept.splice(best, 1);
    keptBytes -= ab.byteLength;
    return Buffer.from(ab, 0, size);
  }
  const capacity = size > MAX_KEPT_SIZE ? size : Math.min(MAX_KEPT_SIZE, Math.max(MIN_CAPACITY, size + (size >> 2)));
  // allocUnsafeSlow: not from Node's shared pool, so the ArrayBuffer is this copy's alone.
  return Buffer.from(Buffer.allocUnsafeSlow(capacity).buffer, 0, size);
}

/** Takes back a buffer from `takeCopyBuffer` whose views are no longer used. */
export function giveBackCopyBuffer(ab: ArrayBuffer): void {
  const n = ab.byteLength;
  // 0: detached (moved to another thread).
  if (n === 0 || n > MAX_KEPT_SIZE || kept.includes(ab)) return;
  kept.push(ab);
  keptBytes += n;
  // Over the limits: the smallest go first (a large rollout's buffer serves small ones too).
  while (kept.length > MAX_KEPT || keptBytes > MAX_KEPT_BYTES) {
    let smallest = 0;
    for (let i = 1; i < kept.length; i++) if (kept[i].byteLength < kept[smallest].byteLength) smallest = i;
    keptBytes -= kept[smallest].byteLength;
    kept.splice(smallest, 1);
  }
}

/**
 * A `release` for a copy in `memory`: gives it back (by default to this thread's buffers; a
 * worker passes the function that moves it to the main thread) the first time it is called.
 */
export function releaseOnce(
  memory: ArrayBuffer,
  giveBack: (memory: ArrayBuffer) => void = giveBackCopyBuffer,
): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    giveBack(memory);
  };
}

/** For tests: how many buffers are kept, and their bytes. */
export function copyBuffersKept(): { count: number; bytes: number } {
  return { count: kept.length, bytes: keptBytes };
}
