/**
 * The backoff waits between attempts at a held lock (./rollout-lock.ts), and the one way to end
 * them all: `endLockWaits`, for a program that is quitting.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Backoff sleeps in progress: `endLockWaits` ends them. */
const sleepers = new Set<(reason: Error) => void>();
/** Set by `endLockWaits`: every wait for a lock in this thread fails with it from then on. */
let waitsEnded: Error | undefined;

/**
 * Ends every wait for a lock in this thread, now and from now on, with `reason` (a lock free at
 * once is still taken): for a program that is quitting, so that no wait for a lock another
 * process holds keeps it alive (the live view's detail and rows, after q).
 */
export function endLockWaits(reason: Error): void {
  waitsEnded = reason;
  for (const stop of sleepers) stop(reason);
  sleepers.clear();
}

/** Waits `ms` between two attempts; rejects once `signal` fires or the waits are ended. */
export async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  if (waitsEnded) throw waitsEnded;
  let stop!: (reason: Error) => void;
  const ended = new Promise<never>((_, reject) => (stop = reject));
  sleepers.add(stop);
  try {
    // (the timer left behind by an ended wait is at most one backoff step)
    await Promise.race([sleep(ms, undefined, signal ? { signal } : undefined), ended]);
  } catch (e) {
    signal?.throwIfAborted();
    throw e;
  } finally {
    sleepers.delete(stop);
  }
}
