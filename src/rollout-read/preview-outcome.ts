/**
 * A preview's outcome with its rollout's status, from ONE read of the rollout: its files copied
 * under one shared lock (src/ops/rollout-copy.ts), from which come both the facts behind the
 * status (src/facts/rollout-facts.ts, option `copy`) and the read-only snapshot that is built
 * (`snapshotCopyOf`), as the watch's rows do (src/rollout-read/row-read.ts). Before, a preview copied
 * the rollout under its lock for the build, then read the state, the intents and J's size again
 * and lstat'ed four files for the status: ~5 % of a preview's CPU on full-200x12.
 *
 * The answers are those of `buildOutcome` followed by `statusAfterBuild`: a lock not granted
 * makes the build a failed one with that error, and the status is the summary's read of the
 * files that need no lock, J's unindexed lines failing with that same error (no second wait).
 */
import { lstatSync } from 'node:fs';
import { toTokcapError } from '../errors.js';
import { rolloutFacts } from '../facts/rollout-facts.js';
import { rolloutPaths, type FileKind } from '../layout/file-names.js';
import { isValidRolloutId } from '../layout/rollout-id.js';
import { COPIED_KINDS, CopyArena, copyRollout, snapshotCopyOf, type RolloutCopyRecord } from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import { rolloutStatus, unavailableStatus, type RolloutStatusAnswer } from '../status/rollout-status.js';
import { statusAfterBuild } from './result-status.js';
import { buildOutcome, type BuildOutcome } from './build-outcome.js';
import type { SnapshotSource } from '../chains/build-rollout.js';

type OutcomeOptions = Omit<Parameters<typeof buildOutcome>[2], 'freeze' | 'source' | 'incompleteContext'>;

/**
 * A rollout's outcome as build-many.ts and its worker make it: with `status`, a preview reads its
 * status from its own copy (`previewOutcomeWithStatus`); a freeze, or no status, builds alone
 * (build-many.ts reads a freeze's status after it).
 */
export function outcomeOf(
  store: StoreOptions,
  rolloutId: string,
  options: OutcomeOptions & { freeze: boolean; status: boolean },
): Promise<BuildOutcome> {
  const { freeze, status, ...rest } = options;
  return status && !freeze
    ? previewOutcomeWithStatus(store, rolloutId, rest)
    : buildOutcome(store, rolloutId, { ...rest, freeze });
}

/** The preview, then its status from a read of its own (no copy to share). */
async function previewThenStatus(
  store: StoreOptions,
  rolloutId: string,
  options: OutcomeOptions,
): Promise<BuildOutcome> {
  const out = await buildOutcome(store, rolloutId, { ...options, freeze: false });
  out.status = await statusAfterBuild(store, rolloutId, out.verdict);
  return out;
}

/**
 * Copy memory for the rollouts in flight in this thread (a few at a time: parallel-rollouts.ts),
 * each reused once its rollout is built (nothing built keeps a view of it).
 */
const idleArenas: CopyArena[] = [];

/** `buildOutcome(store, id, { freeze: false })` with `status` set. */
export async function previewOutcomeWithStatus(
  store: StoreOptions,
  rolloutId: string,
  options: OutcomeOptions,
): Promise<BuildOutcome> {
  // No files to copy: the failed build and its status as before.
  if (!isValidRolloutId(rolloutId)) return previewThenStatus(store, rolloutId, options);
  const arena = idleArenas.pop() ?? new CopyArena();
  try {
    return await previewFromCopy(store, rolloutId, arena, options);
  } finally {
    arena.used = 0;
    idleArenas.push(arena);
  }
}

async function previewFromCopy(
  store: StoreOptions,
  rolloutId: string,
  arena: CopyArena,
  options: OutcomeOptions,
): Promise<BuildOutcome> {
  arena.used = 0;
  const record = await copyRollout(store, rolloutId, arena);
  const copy = { arena: arena.bytes, record };
  const files = copiedFiles(store.dir, rolloutId, record);
  if (files === undefined && record.failure === undefined) {
    // The copy missed a file the summary's read would see (a symbolic link to nowhere, a file
    // created since): the preview and its status as before, each from its own read.
    return previewThenStatus(store, rolloutId, options);
  }
  let status: RolloutStatusAnswer | undefined;
  let retired = false;
  let incompleteContext: { incompleteFlag: boolean; incompleteMarkers: string[] } | undefined;
  if (files !== undefined) {
    try {
      const facts = await rolloutFacts(store, rolloutId, { copy, files, jsonReader: options.jsonReader });
      status = rolloutStatus(facts);
      retired = facts.retired;
      incompleteContext = { incompleteFlag: facts.incomplete_flag, incompleteMarkers: facts.incomplete_marker_calls };
    } catch (e) {
      status = unavailableStatus(toTokcapError(e, { rolloutId }).facts());
    }
  }
  const source: SnapshotSource = {
    frozen: () => Promise.reject(new Error('internal: a preview does not freeze')),
    // The refusals of `copyReadOnlySnapshot`, in its order (the lock, the state, retired, J, intents).
    readOnly: async () => snapshotCopyOf(copy.arena, record, retired),
  };
  const out = await buildOutcome(store, rolloutId, { ...options, freeze: false, source, incompleteContext });
  // The lock was not granted (the build failed with that error): the status is the summary's
  // read of what needs no lock, without a second wait (`statusAfterBuild`).
  out.status = status ?? (await statusAfterBuild(store, rolloutId, out.verdict));
  return out;
}

/**
 * The files the summary's read would find (src/facts/rollout-facts.ts lstats each kind), when the
 * copy holds all of them (copied, or failed to read as the summary's read would fail); undefined
 * when the lock was not granted (nothing was copied) or `lstat` finds one the copy did not (a
 * symbolic link to nowhere, a file created since). Usually one `lstat`: the absent marker file.
 */
function copiedFiles(dir: string, rolloutId: string, record: RolloutCopyRecord): Set<FileKind> | undefined {
  if (record.failure !== undefined) return undefined;
  const present = new Set<FileKind>();
  let paths: ReturnType<typeof rolloutPaths> | undefined;
  for (const kind of COPIED_KINDS) {
    if (record.spans[kind] !== undefined || record.errors?.[kind] !== undefined) {
      present.add(kind);
      continue;
    }
    paths ??= rolloutPaths(dir, rolloutId);
    try {
      lstatSync(paths[kind]);
    } catch {
      continue;
    }
    return undefined;
  }
  return present;
}
