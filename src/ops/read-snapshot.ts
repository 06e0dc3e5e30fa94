import { TokcapError } from '../errors.js';
import { sha256Hex } from '../digest/token-digest.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { classifyLine } from '../jsonl/classify-line.js';
import { scanBufferLines } from '../jsonl/line-scanner.js';
import { pyRepr } from '../layout/py-repr.js';
import { readRegularFileSync } from '../layout/safe-open.js';
import { withRolloutLockSyncFn } from '../lock/rollout-lock.js';
import type { TokenEntry } from '../records/token-entry.js';
import { danglingIntents, parseIntents } from '../sidefiles/intents.js';
import { parseStateBytes } from '../state/read-state.js';
import {
  defaultStateData,
  entryDigests,
  indexedSize,
  isIncompleteFlag,
  isRetired,
  refusalCallIds,
  snapshotId,
  stateVersion,
  type RolloutState,
} from '../state/rollout-state.js';
import { retiredError } from './freeze.js';
import { copyRecordFiles } from './record-files.js';
import { rolloutTarget, type StoreOptions } from './store.js';

/** What a read-only look at a rollout sees: what a freeze would return, without freezing. */
export interface ReadOnlySnapshot {
  rolloutId: string;
  entries: TokenEntry[];
  incomplete: boolean;
  /** The state's own `incomplete` flag (the snapshot is also incomplete with dangling intents). */
  incompleteFlag: boolean;
  danglingIntents: string[];
  /** Current identity (a freeze would mint one if `snapshotId` is ""). */
  snapshotId: string;
  version: number;
  /** Byte offset of a torn final line that a freeze would truncate. */
  tornTailAt?: number;
}

/**
 * Reads a rollout the way freeze would (docs/format.md#commands, dry build) but changes nothing: the state
 * is not written, no lock file is created, a torn final line is skipped and reported, and the
 * failures a freeze would meet (retired, bad index offset, conflicting payload in the unindexed
 * tail, corrupt or invalid lines) are thrown with the same kinds and messages.
 */
export async function readSnapshotReadOnly(
  store: StoreOptions,
  rolloutId: string,
  copySource: ReadOnlyCopySource = copyReadOnlySnapshot,
): Promise<ReadOnlySnapshot> {
  const copy = await copySource(store, rolloutId);
  const snapshot = parseReadOnlyCopy(store, copy);
  copy.release?.();
  return snapshot;
}

/**
 * The raw bytes a read-only snapshot is made of, copied under one short shared lock: the state
 * file, J and the intents, all of one moment. Plain bytes, so another thread can parse them.
 */
export interface ReadOnlyCopy {
  rolloutId: string;
  stateBytes?: Uint8Array;
  bytes?: Uint8Array;
  intentBytes?: Uint8Array;
  /**
   * Hands the memory of `bytes` back for the next copy (src/jsonl/copy-buffers.ts), once parsed
   * (`parseReadOnlyCopy` keeps no view of it). Never calling it is safe. Not sent across threads.
   */
  release?: () => void;
}

/**
 * Takes a rollout's read-only copy under its lock: `copyReadOnlySnapshot` in this thread; a
 * worker thread asks the main thread for it instead (src/watch/read-worker.ts).
 */
export type ReadOnlyCopySource = (store: StoreOptions, rolloutId: string) => Promise<ReadOnlyCopy>;

export async function copyReadOnlySnapshot(store: StoreOptions, rolloutId: string): Promise<ReadOnlyCopy> {
  const t = rolloutTarget(store, rolloutId);
  const { paths } = t;
  return withRolloutLockSyncFn(paths.lock, rolloutId, 'shared', { waitMs: t.lockWaitMs, readOnly: true }, () => {
    const stateBytes = readRegularFileSync(paths.state, rolloutId);
    // A retired rollout fails here already (its J is not copied): parse the state now.
    if (stateBytes !== undefined && isRetired(parseStateBytes(stateBytes, paths.state, rolloutId)))
      throw retiredError(rolloutId);
    const { j, intentBytes } = copyRecordFiles(paths, rolloutId);
    return { rolloutId, stateBytes, bytes: j?.bytes, intentBytes, release: j?.release };
  });
}

/** The read-only snapshot of a copy: parsing and validation, with no lock held. */
export function parseReadOnlyCopy(
  store: StoreOptions,
  copy: ReadOnlyCopy,
  jsonReader = new JsonBytesReader(),
): ReadOnlySnapshot {
  const { rolloutId } = copy;
  const { paths } = rolloutTarget(store, rolloutId);
  const state: RolloutState =
    copy.stateBytes === undefined
      ? { exists: false, data: defaultStateData() }
      : parseStateBytes(copy.stateBytes, paths.state, rolloutId, jsonReader);
  // Bytes that crossed a thread boundary arrive as a plain Uint8Array.
  const bytes =
    copy.bytes &&
    (Buffer.isBuffer(copy.bytes)
      ? copy.bytes
      : Buffer.from(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
  const seen = { intentBytes: copy.intentBytes };
  const version = stateVersion(state, rolloutId);
  const digests = entryDigests(state);
  const offset = indexedSize(state, true) ?? 0;
  const index: Record<string, string> = { ...(digests ?? {}) };
  const entries: TokenEntry[] = [];
  let tornTailAt: number | undefined;
  const size = bytes?.length ?? 0;
  if (offset < 0 || offset > size) {
    throw new TokcapError('index_offset', `Invalid token-capture index offset for rollout ${rolloutId}`, {
      rolloutId,
      file: paths.state,
      pyClass: 'ValueError',
    });
  }
  if (bytes) {
    let pending: { error: TokcapError; start: number } | undefined;
    let failure: TokcapError | undefined;
    scanBufferLines(bytes, (line) => {
      if (line.stripped.length === 0) return;
      if (pending) {
        failure = pending.error;
        return false;
      }
      const v = classifyLine(line.stripped, { rolloutId, file: paths.jsonl }, jsonReader);
      if (v.kind === 'bad_json') {
        // Only a line a freeze would reconcile can be a torn tail; inside the indexed
        // prefix it is corruption (freeze would freeze, then fail reading it).
        if (line.start < offset) {
          failure = v.error;
          return false;
        }
        pending = { error: v.error, start: line.start };
        return;
      }
      if (v.kind === 'invalid') {
        failure = v.error;
        return false;
      }
      // Lines a freeze would reconcile: a different payload for an indexed id is a conflict.
      if (line.start >= offset) {
        const callId = v.entry.model_call_id;
        const d = sha256Hex(line.stripped);
        const known = index[callId];
        if (known !== undefined && known !== d) {
          failure = new TokcapError(
            'conflict',
            `Model call id ${pyRepr(callId)} has conflicting durable payloads for rollout ${pyRepr(rolloutId)}`,
            {
              rolloutId,
              file: paths.jsonl,
              pyClass: 'ValueError',
            },
          );
          return false;
        }
        index[callId] = d;
      }
      entries.push(v.entry);
    });
    if (failure) throw failure;
    tornTailAt = pending?.start;
  }
  const intents = seen.intentBytes ? parseIntents(seen.intentBytes, rolloutId, paths.intents) : [];
  const dangling = danglingIntents(
    intents,
    entries.map((e) => e.model_call_id),
    refusalCallIds(state),
  );
  return {
    rolloutId,
    entries,
    incomplete: isIncompleteFlag(state) || dangling.length > 0,
    incompleteFlag: isIncompleteFlag(state),
    danglingIntents: dangling,
    snapshotId: snapshotId(state) ?? '',
    version,
    tornTailAt,
  };
}
