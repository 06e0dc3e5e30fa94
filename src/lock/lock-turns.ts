/**
 * The process's turn at holding a rollout lock, shared by its threads (docs/format.md#lock-mechanism:
 * the process never holds two rollout locks together). A word in a SharedArrayBuffer says which
 * thread holds the turn (0: nobody; the main thread is 1, worker slot k is k + 2). A thread holds
 * it only for one non-blocking `flock` attempt, or from a successful one to the release of that
 * lock (a short copy); never across a backoff sleep, so a rollout a writer holds does not stall
 * the other threads.
 *
 * Fairness: a worker that finds the turn taken raises its bit in a second word; whoever gives the
 * turn back hands it to the next waiting worker after itself, round-robin, so no worker starves.
 * A worker blocks in `Atomics.wait`, for at most one other thread's copy. The main thread never
 * blocks: it raises its bit too, waits with `Atomics.waitAsync` and takes the turn when it finds
 * it free; it is never handed the turn, because it may be busy for a while before its wait resolves, and a worker
 * would be blocked all that time (measured: 170 ms of a 1.3 s build). It does not starve: a
 * worker computes between its copies (docs/decisions/0007-one-lock-turn-per-process.md).
 *
 * A third word holds the descriptor the turn's holder has locked (-1: none), so that the main
 * thread can close it and free the turn should a worker die holding it.
 */

const HOLDER = 0;
const WAITING = 1;
const FD = 2;
/** Bits of the WAITING word: main thread and 30 workers (tokcap starts at most 7). */
const MAX_THREADS = 31;
/** Waits are woken by `notify`; the timeout is only a safety net against a missed wake-up. */
const WAIT_MS = 50;

let words: Int32Array | undefined;
/** This thread's id in the holder word (1: main thread, or a thread that joined nothing). */
let me = 1;

/** The shared memory of this process's turns (made on first use): passed to workers. */
export function lockTurnsMemory(): SharedArrayBuffer {
  return shared().buffer as SharedArrayBuffer;
}

/** Called first thing in a worker thread that takes rollout locks itself, with its slot (0, 1, ...). */
export function joinLockTurns(memory: SharedArrayBuffer, slot: number): void {
  if (slot + 2 > MAX_THREADS) throw new Error(`internal: worker slot ${slot} is out of range for lock turns`);
  words = new Int32Array(memory);
  me = slot + 2;
}

function shared(): Int32Array {
  if (words === undefined) {
    words = new Int32Array(new SharedArrayBuffer(3 * 4));
    words[FD] = -1;
  }
  return words;
}

const bit = (id: number) => 1 << (id - 1);

/** ES2024's `Atomics.waitAsync` (in Node since 16), absent from this project's `lib`. */
interface AtomicsWaitAsync {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
    timeout: number,
  ): { async: false; value: string } | { async: true; value: Promise<string> };
}

/**
 * Takes the turn now: true once this thread holds it. A worker finding it taken blocks until it
 * holds it (for at most other threads' copies); the main thread never blocks: false, and it waits
 * with `lockTurnFreed` before trying again. Synchronous, so that the caller goes on to the lock,
 * the copy and the release in one stretch: held across an `await`, the turn would wait for
 * whatever else this thread runs meanwhile (another rollout's parse), and so would every other
 * thread's copy.
 */
export function takeLockTurnNow(): boolean {
  const w = shared();
  for (;;) {
    const holder = Atomics.compareExchange(w, HOLDER, 0, me);
    if (holder === 0 || holder === me) break;
    // The main thread is never handed the turn (see the module comment): it tries again later.
    if (me === 1) return false;
    // Announce first, then look again: a holder that gave the turn back before seeing the bit
    // left it free, and the next compareExchange takes it.
    Atomics.or(w, WAITING, bit(me));
    const now = Atomics.load(w, HOLDER);
    if (now === 0 || now === me) continue;
    Atomics.wait(w, HOLDER, now, WAIT_MS);
  }
  Atomics.and(w, WAITING, ~bit(me));
  return true;
}

/** Main thread: resolves when the turn's holder has changed (worth trying `takeLockTurnNow` again). */
export async function lockTurnFreed(): Promise<void> {
  const w = shared();
  // The bit asks the holder for a wake-up when it gives the turn back; cleared once taken.
  Atomics.or(w, WAITING, bit(me));
  const now = Atomics.load(w, HOLDER);
  if (now === 0 || now === me) return;
  const r = (Atomics as unknown as AtomicsWaitAsync).waitAsync(w, HOLDER, now, WAIT_MS);
  if (r.async) await r.value;
}

/** Takes the turn if nobody holds it; false otherwise (nothing waits). */
export function tryTakeLockTurn(): boolean {
  return Atomics.compareExchange(shared(), HOLDER, 0, me) === 0;
}

/** Gives the turn back: to the next waiting worker after this one, or to nobody. */
export function giveLockTurn(): void {
  const w = shared();
  Atomics.store(w, FD, -1);
  handOn(w, me);
}

function handOn(w: Int32Array, from: number): void {
  const waiting = Atomics.load(w, WAITING) & ~bit(from);
  let next = 0;
  for (let k = 1; k <= MAX_THREADS && waiting !== 0; k++) {
    const id = ((from - 1 + k) % MAX_THREADS) + 1;
    if (id !== 1 && waiting & bit(id)) {
      next = id;
      break;
    }
  }
  if (next !== 0) Atomics.and(w, WAITING, ~bit(next));
  Atomics.store(w, HOLDER, next);
  // A wake-up is a system call: only when someone waits. Read after the store: a waiter raises
  // its bit before it reads the holder, so either it sees this store or this read sees its bit.
  if (next !== 0 || Atomics.load(w, WAITING) !== 0) Atomics.notify(w, HOLDER);
}

/** Records the descriptor the turn's holder has just locked (-1 once it is unlocked). */
export function noteLockedFd(fd: number): void {
  Atomics.store(shared(), FD, fd);
}

/**
 * Main thread, after worker slot `slot` stopped: if it died holding the turn, unlocks by closing
 * the descriptor it had locked and hands the turn on; its waiting bit is cleared either way.
 * Returns the descriptor closed, if any.
 */
export function reclaimLockTurn(
  memory: SharedArrayBuffer,
  slot: number,
  close: (fd: number) => void,
): number | undefined {
  const w = new Int32Array(memory);
  const id = slot + 2;
  Atomics.and(w, WAITING, ~bit(id));
  if (Atomics.load(w, HOLDER) !== id) return undefined;
  const fd = Atomics.exchange(w, FD, -1);
  if (fd >= 0) close(fd);
  handOn(w, id);
  return fd >= 0 ? fd : undefined;
}
