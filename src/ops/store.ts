import { rolloutPaths, type RolloutPaths } from '../layout/file-names.js';
import { assertValidRolloutId } from '../layout/rollout-id.js';

/** Where a store lives and how long operations wait for a rollout's lock. */
export interface StoreOptions {
  dir: string;
  /** Maximum wait for a rollout's lock, in milliseconds (default DEFAULT_LOCK_WAIT_MS). */
  lockWaitMs?: number;
}

/** The one default lock wait: the CLI's `--lock-wait` default (option table, help, man pages) is derived from it. */
export const DEFAULT_LOCK_WAIT_MS = 10_000;

/** How long an operation on `store` waits for a rollout's lock, in milliseconds. */
export function lockWaitOf(store: StoreOptions): number {
  return store.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
}

export interface RolloutTarget {
  dir: string;
  rolloutId: string;
  paths: RolloutPaths;
  lockWaitMs: number;
}

/** Validates the id before anything touches the filesystem (docs/format.md#rollout-ids). */
export function rolloutTarget(store: StoreOptions, rolloutId: string): RolloutTarget {
  assertValidRolloutId(rolloutId);
  return {
    dir: store.dir,
    rolloutId,
    paths: rolloutPaths(store.dir, rolloutId),
    lockWaitMs: lockWaitOf(store),
  };
}
