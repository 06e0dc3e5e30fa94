/**
 * The loop of `export --format store` (see store-copy.ts for what a copy is): for each rollout,
 * in rollout-id order, one locked copy of its files; the preview build of that same copy (for
 * the summary's verdicts and `--trainable-only`); then the files written. One rollout in memory
 * at a time, in this thread (the copies take locks, which only this thread does).
 */
import type { SnapshotSource } from '../chains/build-rollout.js';
import { TokcapError } from '../errors.js';
import {
  CopyArena,
  copyError,
  copyRollout,
  snapshotCopyOf,
  spanBytes,
  COPIED_KINDS,
  type RolloutCopyRecord,
} from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import { parseStateBytes } from '../state/read-state.js';
import { isRetired } from '../state/rollout-state.js';
import { rolloutPaths } from '../layout/file-names.js';
import { buildForExport } from './build-for-export.js';
import { exportedRollout } from './export-item.js';
import { StoreCopyWriter } from './store-copy.js';
import type { ExportTotals } from './tinker.js';
import type { ExportHooks } from './export-run.js';

export interface StoreExportOptions {
  store: StoreOptions;
  ids: readonly string[];
  out: string;
  model?: string;
  trainableOnly: boolean;
  signal?: AbortSignal;
}

/** Why a copy is not usable: the lock, or a file that could not be read (nothing is copied then). */
function unusable(record: RolloutCopyRecord): TokcapError | undefined {
  const failure = copyError(record, record.failure);
  if (failure) return failure;
  for (const kind of COPIED_KINDS) {
    const err = copyError(record, record.errors?.[kind]);
    if (err) return err;
  }
  return undefined;
}

/** The copy's state says retired (an unreadable state is left for the build to report). */
function copyIsRetired(arena: Uint8Array, record: RolloutCopyRecord, dir: string): boolean {
  const bytes = spanBytes(arena, record.spans.state);
  if (bytes === undefined) return false;
  try {
    return isRetired(parseStateBytes(bytes, rolloutPaths(dir, record.rolloutId).state, record.rolloutId));
  } catch {
    return false;
  }
}

/** Builds from the copy in memory: the verdict is that of the bytes written. */
function copySource(arena: Uint8Array, record: RolloutCopyRecord, retired: boolean): SnapshotSource {
  return {
    readOnly: async () => snapshotCopyOf(arena, record, retired),
    frozen: () => Promise.reject(new Error('internal: a store copy never freezes')),
  };
}

export async function exportAsStore(
  options: StoreExportOptions,
  totals: ExportTotals,
  hooks: ExportHooks,
  abortError: () => TokcapError,
): Promise<void> {
  const writer = await StoreCopyWriter.open(options.out);
  hooks.onTemporary?.(writer.dir, () => writer.discardSync());
  try {
    await copyRollouts(options, writer, totals, hooks, abortError);
    await writer.finish();
  } catch (e) {
    await writer.discard();
    throw e;
  }
}

async function copyRollouts(
  options: StoreExportOptions,
  writer: StoreCopyWriter,
  totals: ExportTotals,
  hooks: ExportHooks,
  abortError: () => TokcapError,
): Promise<void> {
  const arena = new CopyArena();
  const total = options.ids.length;
  let done = 0;
  for (const id of options.ids) {
    if (options.signal?.aborted) throw abortError();
    arena.used = 0;
    const record = await copyRollout(options.store, id, arena);
    const failure = unusable(record);
    done += 1;
    if (failure) {
      // Could not be read: left out, reported, never counted as trainable or masked.
      hooks.onRolloutError?.(failure, id);
      totals.addUnavailable();
      continue;
    }
    const retired = copyIsRetired(arena.bytes, record, options.store.dir);
    const build = await buildForExport(options.store, id, {
      freeze: false,
      model: options.model,
      source: copySource(arena.bytes, record, retired),
    });
    const keep = !(options.trainableOnly && build.result.mask_sample);
    if (keep) await writer.writeRollout(arena.bytes, record);
    const rollout = exportedRollout(build);
    totals.add(rollout, keep);
    hooks.onRollout?.(done, total, id, rollout);
  }
  if (options.signal?.aborted) throw abortError();
}
