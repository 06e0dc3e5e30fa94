import { existsSync, unlinkSync } from 'node:fs';
import { ioError } from '../errors.js';
import type { RolloutPaths } from '../layout/file-names.js';

/** Unlinks a file, ignoring a missing one. Returns whether a file was removed. */
export function unlinkIfPresent(path: string, rolloutId?: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw ioError(e, path, rolloutId);
  }
}

/** Whether any record file (J, M, I) exists: what `removed` vs `absent` is decided by (docs/format.md#retire). */
export function hasRecordFiles(paths: RolloutPaths): boolean {
  return existsSync(paths.jsonl) || existsSync(paths.incomplete) || existsSync(paths.intents);
}

/** Unlinks J, M, I in that order (drop, retire phase 2, delete). */
export function removeRecordFiles(paths: RolloutPaths, rolloutId: string): void {
  unlinkIfPresent(paths.jsonl, rolloutId);
  unlinkIfPresent(paths.incomplete, rolloutId);
  unlinkIfPresent(paths.intents, rolloutId);
}
