import { toTokcapError, type TokcapError } from '../errors.js';
import { rolloutPaths } from '../layout/file-names.js';
import { isValidRolloutId, invalidRolloutIdError } from '../layout/rollout-id.js';
import { freezeAndCopy, parseFrozenCopy, type FrozenCopy } from '../ops/freeze.js';
import { copyReadOnlySnapshot, parseReadOnlyCopy, type ReadOnlyCopy } from '../ops/read-snapshot.js';
import type { StoreOptions } from '../ops/store.js';
import type { TokenEntry } from '../records/token-entry.js';
import { readIncompleteMarkers } from '../sidefiles/incomplete-markers.js';
import { readState } from '../state/read-state.js';
import { isIncompleteFlag } from '../state/rollout-state.js';
import type { ChainBuild } from './chain-builder.js';
import {
  assembleWithChains,
  failedBuild,
  finishConsumerResult,
  noRecordsResult,
  type ConsumerResult,
} from './consumer-result.js';
import { maskCauses, type MaskCause, type MaskContext } from './mask-causes.js';
import type { JsonBytesReader } from '../json/parse-json.js';

export interface BuildRolloutOptions {
  /** Model name put in the rebuilt response (the reference's default is ""). */
  model?: string;
  /**
   * true: exactly the reference consumer (`trajectories_for_rollout`): freeze, then build.
   * false: a read-only preview of what that would return, labelled `preview: true`, without
   * `_capture_snapshot`; nothing on disk changes.
   */
  freeze: boolean;
  /**
   * Where the locked copies come from (default: this thread, `freezeAndCopy` and
   * `copyReadOnlySnapshot`). A worker thread asks the main thread instead, which takes the
   * locks in turn with its own (src/rollout-read/build-worker.ts).
   * @internal
   */
  source?: SnapshotSource;
  /**
   * The incomplete flag and markers for the wording of the mask causes, when the caller has read
   * them already (the facts); otherwise they are read after the snapshot.
   */
  incompleteContext?: Pick<MaskContext, 'incompleteFlag' | 'incompleteMarkers'>;
  /**
   * Reads the records' JSON: the calling thread's reader for its job (default: one per rollout).
   * @internal
   */
  jsonReader?: JsonBytesReader;
}

/** The locked part of a build: a freeze's copy, or a read-only copy. */
export interface SnapshotSource {
  frozen(rolloutId: string): Promise<FrozenCopy>;
  readOnly(rolloutId: string): Promise<ReadOnlyCopy>;
}

export function localSnapshotSource(store: StoreOptions): SnapshotSource {
  return { frozen: (id) => freezeAndCopy(store, id), readOnly: (id) => copyReadOnlySnapshot(store, id) };
}

/** What a build saw besides its result, for explanations (build, watch, export). */
export interface DetailedBuild {
  /** Exactly what `buildRollout` returns. */
  result: ConsumerResult;
  /** Why the result is masked, in the reference's vocabulary (empty when trainable). */
  causes: MaskCause[];
  /** The chain view of the entries (null without entries or when the read failed). */
  chains: ChainBuild | null;
  /**
   * The entries built from, file order (empty when the read failed). The result's output items
   * may hold their prompt arrays themselves (a linked call's full prompt): neither is to be mutated.
   */
  entries: TokenEntry[];
  danglingIntents: string[];
  /** Byte offset of a torn final line (preview only; a freeze truncates it). */
  tornTailAt?: number;
  /** Set when the rollout could not be read for a reason of tokcap's own (a lock timeout). */
  error?: TokcapError;
  /**
   * Why the result is a failed build before any assembly: the freeze or read failed (retired,
   * corrupt, lock timeout, I/O...) or the id is invalid. Absent when the snapshot was read.
   */
  readFailure?: TokcapError;
}

/**
 * Builds one rollout's trajectory (docs/format.md#consumer-result) and keeps what the build saw. Never throws
 * for store problems: like the reference consumer, a failure becomes the failed-build dictionary
 * with `error` as "<PythonClass>: <message>"; an invalid id is such a failure too (docs/cli.md#invocation). A lock
 * timeout becomes a failed build as well, with `error` set on the detail.
 */
export async function buildRolloutDetailed(
  store: StoreOptions,
  rolloutId: string,
  options: BuildRolloutOptions,
): Promise<DetailedBuild> {
  const model = options.model ?? '';
  const label = <R extends ConsumerResult>(r: R): R => (options.freeze ? r : { ...r, preview: true });
  const empty = { chains: null, entries: [], danglingIntents: [] };
  if (!isValidRolloutId(rolloutId)) {
    const err = invalidRolloutIdError(rolloutId);
    const result = failedBuild(rolloutId, err.pythonString(), 0);
    return { result, causes: maskCauses(result), ...empty, readFailure: err };
  }
  let snapshot: {
    entries: TokenEntry[];
    incomplete: boolean;
    danglingIntents: string[];
    snapshotId: string;
    version: number;
    tornTailAt?: number;
  };
  try {
    const source = options.source ?? localSnapshotSource(store);
    // The copy is taken under the lock; parsing happens here, with the lock released. The
    // entries hold no view of the copy's bytes: their memory serves the next copy.
    if (options.freeze) {
      const copy = await source.frozen(rolloutId);
      snapshot = parseFrozenCopy(store, copy, options.jsonReader);
      copy.release?.();
    } else {
      const copy = await source.readOnly(rolloutId);
      snapshot = parseReadOnlyCopy(store, copy, options.jsonReader);
      copy.release?.();
    }
  } catch (e) {
    const err = toTokcapError(e, { rolloutId });
    const result = label(failedBuild(rolloutId, err.pythonString(), 0));
    return {
      result,
      causes: maskCauses(result),
      ...empty,
      readFailure: err,
      ...(err.kind === 'lock_timeout' ? { error: err } : {}),
    };
  }
  let built: ConsumerResult;
  let chains: ChainBuild | null = null;
  if (snapshot.entries.length === 0) built = noRecordsResult(rolloutId);
  else ({ result: built, chains } = assembleWithChains(rolloutId, snapshot.entries, model));
  const result = options.freeze
    ? finishConsumerResult(built, {
        incomplete: snapshot.incomplete,
        snapshot_id: snapshot.snapshotId,
        version: snapshot.version,
      })
    : label(finishConsumerResult(built, { incomplete: snapshot.incomplete }));
  const context: MaskContext = { danglingIntents: snapshot.danglingIntents, chains };
  if (snapshot.incomplete)
    Object.assign(context, options.incompleteContext ?? (await incompleteContext(store.dir, rolloutId)));
  return {
    result,
    causes: maskCauses(result, context),
    chains,
    entries: snapshot.entries,
    danglingIntents: snapshot.danglingIntents,
    tornTailAt: snapshot.tornTailAt,
  };
}

/**
 * The reference consumer's result for one rollout (or its read-only preview). Throws only a
 * lock timeout: that is tokcap's own failure to get at the store, for the caller to report.
 */
export async function buildRollout(
  store: StoreOptions,
  rolloutId: string,
  options: BuildRolloutOptions,
): Promise<ConsumerResult> {
  const detailed = await buildRolloutDetailed(store, rolloutId, options);
  if (detailed.error) throw detailed.error;
  return detailed.result;
}

/**
 * The state's incomplete flag and the marker file, for the wording of the causes only (read
 * after the snapshot, without the lock: a change in between only changes the explanation).
 */
async function incompleteContext(
  dir: string,
  rolloutId: string,
): Promise<Pick<MaskContext, 'incompleteFlag' | 'incompleteMarkers'>> {
  const paths = rolloutPaths(dir, rolloutId);
  const out: Pick<MaskContext, 'incompleteFlag' | 'incompleteMarkers'> = {};
  try {
    out.incompleteFlag = isIncompleteFlag(await readState(paths.state, rolloutId));
  } catch {
    // unknown: maskCauses then names the flag as well
  }
  try {
    out.incompleteMarkers = await readIncompleteMarkers(paths.incomplete, rolloutId);
  } catch {
    // no markers to name
  }
  return out;
}
