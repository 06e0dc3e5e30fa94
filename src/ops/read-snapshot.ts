import { TokcapError, ioError } from '../errors.js';
import { sha256Hex } from '../digest/token-digest.js';
import { classifyLine } from '../jsonl/classify-line.js';
import { scanBufferLines } from '../jsonl/line-scanner.js';
import { pyRepr } from '../layout/py-repr.js';
import { readRegularFile, readRegularFileSync } from '../layout/safe-open.js';
import { withRolloutLock } from '../lock/rollout-lock.js';
import type { TokenEntry } from '../records/token-entry.js';
import { danglingIntents, parseIntents } from '../sidefiles/intents.js';
import { readState } from '../state/read-state.js';
import { entryDigests, indexedSize, isIncompleteFlag, isRetired, refusalCallIds, snapshotId, stateVersion } from '../state/rollout-state.js';
import { retiredError } from './freeze.js';
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
 * Reads a rollout the way freeze would (FORMAT.md §12, dry build) but changes nothing: the state
 * is not written, no lock file is created, a torn final line is skipped and reported, and the
 * failures a freeze would meet (retired, bad index offset, conflicting payload in the unindexed
 * tail, corrupt or invalid lines) are thrown with the same kinds and messages.
 */
export async function readSnapshotReadOnly(store: StoreOptions, rolloutId: string): Promise<ReadOnlySnapshot> {
  const t = rolloutTarget(store, rolloutId);
  const { paths } = t;
  // Under a short shared lock: the state, a copy of J and the intents, all of one moment.
  // Parsing and validation happen after the lock is released.
  const seen = await withRolloutLock(paths.lock, rolloutId, 'shared', { waitMs: t.lockWaitMs, readOnly: true }, async () => {
    const state = await readState(paths.state, rolloutId);
    if (isRetired(state)) throw retiredError(rolloutId);
    const bytes = readRegularFileSync(paths.jsonl, rolloutId);
    const intentBytes = await readRegularFile(paths.intents, rolloutId);
    return { state, bytes, intentBytes };
  });
  const { state, bytes } = seen;
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
      const v = classifyLine(line.stripped, { rolloutId, file: paths.jsonl });
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
          failure = new TokcapError('conflict', `Model call id ${pyRepr(callId)} has conflicting durable payloads for rollout ${pyRepr(rolloutId)}`, {
            rolloutId,
            file: paths.jsonl,
            pyClass: 'ValueError',
          });
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
