import { truncate } from 'node:fs/promises';
import { TokcapError, ioError } from '../errors.js';
import { sha256Hex } from '../digest/token-digest.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { classifyLine } from '../jsonl/classify-line.js';
import { scanLines } from '../jsonl/line-scanner.js';
import { openRegularForRead, withRegularFdSync } from '../layout/safe-open.js';
import { pyRepr } from '../layout/py-repr.js';
import { entryDigests, indexedSize, stateVersion, type RolloutState } from '../state/rollout-state.js';
import { writeState } from '../state/write-state.js';

export interface ReconcileTarget {
  dir: string;
  rolloutId: string;
  jsonlPath: string;
  statePath: string;
}

export interface ReconcileResult {
  changed: boolean;
  /** Lines added to the index by this call (identical duplicates included). */
  recovered: number;
  /** Byte offset J was truncated to, when a torn final line was removed. */
  truncatedTo?: number;
}

/**
 * The common case, where reconciliation has nothing to do: a non-legacy index that covers J to
 * its end. Settled with synchronous calls (open, fstat, close): a freeze of many rollouts pays
 * no thread-pool round trip for it, and its lock callback need not await.
 */
export function fullyIndexed(target: ReconcileTarget, state: RolloutState): boolean {
  if (entryDigests(state) === undefined) return false;
  const offset = indexedSize(state, true);
  const size = withRegularFdSync(target.jsonlPath, target.rolloutId, (_fd, n) => n) ?? 0;
  return offset !== undefined && offset === size;
}

/**
 * Index reconciliation (docs/format.md#reconcile). Runs under the EXCLUSIVE lock only: it may truncate a
 * torn tail. Updates `state.data` in memory; on a conflicting payload it persists the
 * incomplete flag and version bump (with the OLD index) and throws `conflict`.
 */
export async function reconcileIndex(target: ReconcileTarget, state: RolloutState): Promise<ReconcileResult> {
  const { rolloutId, jsonlPath } = target;
  if (fullyIndexed(target, state)) return { changed: false, recovered: 0 };
  const fh = await openRegularForRead(jsonlPath, rolloutId);
  try {
    let size = fh ? (await fh.stat()).size : 0;
    const digests = entryDigests(state);
    const offsetValue = indexedSize(state, true);
    const legacy = digests === undefined || offsetValue === undefined;
    const index: Record<string, string> = { ...(digests ?? {}) };
    const offset = offsetValue ?? 0;
    if (offset < 0 || offset > size) {
      throw new TokcapError('index_offset', `Invalid token-capture index offset for rollout ${rolloutId}`, {
        rolloutId,
        file: target.statePath,
        pyClass: 'ValueError',
      });
    }
    if (offset === size && !legacy) return { changed: false, recovered: 0 };

    let recovered = 0;
    let failure: TokcapError | undefined;
    let pendingBad: { error: TokcapError; start: number } | undefined;
    let conflict: string | undefined;
    if (fh) {
      const jsonReader = new JsonBytesReader();
      await scanLines(
        fh,
        (line) => {
          if (line.stripped.length === 0) return;
          if (pendingBad) {
            failure = pendingBad.error;
            return false;
          }
          const verdict = classifyLine(line.stripped, { rolloutId, file: jsonlPath }, jsonReader);
          if (verdict.kind === 'bad_json') {
            pendingBad = { error: verdict.error, start: line.start };
            return;
          }
          if (verdict.kind === 'invalid') {
            failure = verdict.error;
            return false;
          }
          const callId = verdict.entry.model_call_id;
          const d = sha256Hex(line.stripped);
          const known = index[callId];
          if (known !== undefined && known !== d) {
            conflict = callId;
            return false;
          }
          index[callId] = d;
          recovered++;
        },
        { start: offset, limit: size },
      );
    }
    if (conflict !== undefined) {
      state.data.incomplete = true;
      state.data.version = stateVersion(state, rolloutId) + 1;
      writeState(target.dir, target.statePath, state.data, 'durable', rolloutId);
      throw new TokcapError(
        'conflict',
        `Model call id ${pyRepr(conflict)} has conflicting durable payloads for rollout ${pyRepr(rolloutId)}`,
        { rolloutId, file: jsonlPath, pyClass: 'ValueError' },
      );
    }
    if (failure) throw failure;
    let truncatedTo: number | undefined;
    if (pendingBad) {
      // A torn final write that was never acknowledged: cut it off (not fsynced, docs/format.md#reconcile 6.3.1).
      truncatedTo = pendingBad.start;
      try {
        await truncate(jsonlPath, truncatedTo);
      } catch (e) {
        throw ioError(e, jsonlPath, rolloutId);
      }
      size = truncatedTo;
    }
    state.data.entry_digests = index;
    state.data.indexed_size = size;
    if (recovered > 0 && !legacy) state.data.version = stateVersion(state, rolloutId) + recovered;
    return { changed: true, recovered, truncatedTo };
  } finally {
    await fh?.close();
  }
}
