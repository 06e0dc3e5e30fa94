import { randomUUID } from 'node:crypto';
import { TokcapError, toTokcapError } from '../errors.js';
import { orderedJson } from '../json/canonical-json.js';
import { entriesFromBytes } from '../jsonl/read-entries.js';
import { rolloutPaths, type RolloutPaths } from '../layout/file-names.js';
import { withRolloutLock } from '../lock/rollout-lock.js';
import type { TokenEntry } from '../records/token-entry.js';
import { danglingIntents, parseIntents } from '../sidefiles/intents.js';
import { parseStateBytes, readState, readStateSync } from '../state/read-state.js';
import {
  isFrozen,
  isIncompleteFlag,
  isRetired,
  refusalCallIds,
  snapshotId,
  stateVersion,
  type RolloutState,
} from '../state/rollout-state.js';
import { writeState } from '../state/write-state.js';
import { fullyIndexed, reconcileIndex } from './reconcile.js';
import { copyRecordFiles } from './record-files.js';
import { rolloutTarget, type StoreOptions } from './store.js';
import type { JsonBytesReader } from '../json/parse-json.js';

export interface Snapshot {
  rolloutId: string;
  entries: TokenEntry[];
  incomplete: boolean;
  snapshotId: string;
  version: number;
  danglingIntents: string[];
}

export function retiredError(rolloutId: string): TokcapError {
  return new TokcapError('retired', `Token capture for rollout ${rolloutId} is retired`, {
    rolloutId,
    pyClass: 'RuntimeError',
  });
}

export function frozenError(rolloutId: string): TokcapError {
  return new TokcapError('frozen', `Token capture for rollout ${rolloutId} is already frozen`, {
    rolloutId,
    pyClass: 'RuntimeError',
  });
}

/** A fresh snapshot id: a random version-4 UUID as 32 lowercase hex characters (docs/format.md#state-fields). */
export function newSnapshotId(): string {
  return randomUUID().replace(/-/g, '');
}

/**
 * freeze (docs/format.md#freeze), under the exclusive lock: reconcile, freeze once (new snapshot id,
 * version + 1), read every entry, compute dangling intents with the newer rule (refusals).
 * The entries are parsed after the lock is released, from a copy taken under it.
 */
export async function freezeRollout(store: StoreOptions, rolloutId: string): Promise<Snapshot> {
  const copy = await freezeAndCopy(store, rolloutId);
  const snapshot = parseFrozenCopy(store, copy);
  // The entries hold no view of the copy's bytes: their memory serves the next copy.
  copy.release?.();
  return snapshot;
}

/**
 * What a freeze saw under its lock, as plain data another thread can parse: the state as
 * written (orderedJson of the state data: parsing it gives back the same values and kinds), J
 * and the intents as copied right after.
 */
export interface FrozenCopy {
  rolloutId: string;
  stateText: string;
  bytes?: Uint8Array;
  intentBytes?: Uint8Array;
  /**
   * This freeze wrote the state (a new snapshot, or a reconciled index): a failure met after it
   * (the intents' bytes do not decode) is reported with what was written.
   */
  wrote?: boolean;
  /**
   * Hands the memory of `bytes` back for the next copy (src/jsonl/copy-buffers.ts), once parsed
   * (`parseFrozenCopy` keeps no view of it). Never calling it is safe. Not sent across threads.
   */
  release?: () => void;
}

/**
 * The locked part of a freeze: reconcile, freeze once, copy J and the intents. When J is fully
 * indexed (the common case) all of it is synchronous: the lock, and the process's lock turn
 * (src/lock/lock-turns.ts), are held through no await. J is copied into memory from
 * copy-buffers.ts, which `release` hands back once parsed.
 */
export async function freezeAndCopy(store: StoreOptions, rolloutId: string): Promise<FrozenCopy> {
  const t = rolloutTarget(store, rolloutId);
  const { paths } = t;
  const target = { dir: t.dir, rolloutId, jsonlPath: paths.jsonl, statePath: paths.state };
  return withRolloutLock(paths.lock, rolloutId, 'exclusive', { waitMs: t.lockWaitMs }, () => {
    const state = readStateSync(paths.state, rolloutId);
    if (isRetired(state)) throw retiredError(rolloutId);
    if (fullyIndexed(target, state)) return freezeOnceAndCopy(t.dir, paths, rolloutId, state, false);
    return reconcileIndex(target, state).then(({ changed }) =>
      freezeOnceAndCopy(t.dir, paths, rolloutId, state, changed),
    );
  });
}

function freezeOnceAndCopy(
  dir: string,
  paths: RolloutPaths,
  rolloutId: string,
  state: RolloutState,
  changed: boolean,
): FrozenCopy {
  // Copied before the state is written (the exclusive lock keeps them as they are): a capture
  // file that is not a regular file or cannot be opened is refused with nothing written.
  const { j, intentBytes } = copyRecordFiles(paths, rolloutId);
  const wrote = !isFrozen(state) || changed;
  if (!isFrozen(state)) {
    state.data.frozen = true;
    state.data.snapshot_id = newSnapshotId();
    state.data.version = stateVersion(state, rolloutId) + 1;
  }
  if (wrote) writeState(dir, paths.state, state.data, 'durable', rolloutId);
  return { rolloutId, stateText: orderedJson(state.data), bytes: j?.bytes, intentBytes, wrote, release: j?.release };
}

/**
 * A failure met after the freeze wrote its state: the same error, its message led by what was
 * written ("frozen at snapshot S, version V; then: ..."), since the store did change.
 */
function afterWrite(e: unknown, copy: FrozenCopy, state: RolloutState | undefined, rolloutId: string): unknown {
  if (!copy.wrote || state === undefined) return e;
  const err = toTokcapError(e, { rolloutId });
  const sid = snapshotId(state) ?? '';
  return new TokcapError(
    err.kind,
    `frozen at snapshot ${sid}, version ${stateVersion(state, rolloutId)}; then: ${err.message}`,
    {
      rolloutId,
      file: err.file,
      pyClass: err.pyClass,
      cause: err,
    },
  );
}

/** The snapshot of a freeze's copy (the reference's read of docs/format.md#read-entries: any bad line fails). */
export function parseFrozenCopy(store: StoreOptions, copy: FrozenCopy, jsonReader?: JsonBytesReader): Snapshot {
  const { rolloutId } = copy;
  const { paths } = rolloutTarget(store, rolloutId);
  const state = parseStateBytes(Buffer.from(copy.stateText, 'utf8'), paths.state, rolloutId);
  let entries: TokenEntry[];
  let intents: string[];
  try {
    entries = copy.bytes
      ? entriesFromBytes(copy.bytes, { rolloutId, file: paths.jsonl, tornTail: 'fail', jsonReader }).entries
      : [];
    intents = copy.intentBytes ? parseIntents(copy.intentBytes, rolloutId, paths.intents) : [];
  } catch (e) {
    throw afterWrite(e, copy, state, rolloutId);
  }
  const dangling = danglingIntents(
    intents,
    entries.map((e) => e.model_call_id),
    refusalCallIds(state),
  );
  const sid = snapshotId(state);
  if (sid === undefined) {
    throw new TokcapError('corrupt', "'snapshot_id'", { rolloutId, file: paths.state, pyClass: 'KeyError' });
  }
  return {
    rolloutId,
    entries,
    incomplete: isIncompleteFlag(state) || dangling.length > 0,
    snapshotId: sid,
    version: stateVersion(state, rolloutId),
    danglingIntents: dangling,
  };
}

/** The freeze result as docs/cli.md#json-commands and the conformance corpus print it (entries as a count). */
export function snapshotSummary(s: Snapshot): {
  rollout_id: string;
  entries: number;
  entry_call_ids: string[];
  incomplete: boolean;
  snapshot_id: string;
  version: number;
  dangling_intents: string[];
} {
  return {
    rollout_id: s.rolloutId,
    entries: s.entries.length,
    entry_call_ids: s.entries.map((e) => e.model_call_id),
    incomplete: s.incomplete,
    snapshot_id: s.snapshotId,
    version: s.version,
    dangling_intents: s.danglingIntents,
  };
}

/**
 * `freeze --all`: the rollouts that can still be frozen, and the retired tombstones left out
 * (a tombstone refuses every write; a state that cannot be read is tried, and fails there).
 */
export async function freezableRollouts(
  dir: string,
  ids: readonly string[],
): Promise<{ freezable: string[]; tombstones: string[] }> {
  const freezable: string[] = [];
  const tombstones: string[] = [];
  for (const id of ids) {
    const retired = await readState(rolloutPaths(dir, id).state, id).then(isRetired, () => false);
    (retired ? tombstones : freezable).push(id);
  }
  return { freezable, tombstones };
}
