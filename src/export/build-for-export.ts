import { toTokcapError, type TokcapError } from '../errors.js';
import { rolloutPaths } from '../layout/file-names.js';
import { isValidRolloutId, invalidRolloutIdError } from '../layout/rollout-id.js';
import { freezeRollout } from '../ops/freeze.js';
import { readSnapshotReadOnly } from '../ops/read-snapshot.js';
import type { StoreOptions } from '../ops/store.js';
import { readIncompleteMarkers } from '../sidefiles/incomplete-markers.js';
import { readState } from '../state/read-state.js';
import { isIncompleteFlag } from '../state/rollout-state.js';
import type { ChainBuild } from '../build/chain-builder.js';
import { assembleWithChains, failedBuild, finishConsumerResult, noRecordsResult, type ConsumerResult } from '../build/consumer-result.js';
import { maskCauses, type MaskCause, type MaskContext } from '../build/mask-causes.js';

/** One call of the main chain, as a training step: prompt and generated token counts. */
export interface MainChainStep {
  callId: string;
  /** Full prompt length (the observation). */
  promptTokens: number;
  /** Generated tokens (the action). */
  generatedTokens: number;
}

export interface ExportBuild {
  /** Exactly what `buildRollout(store, id, { freeze, model })` returns. */
  result: ConsumerResult;
  /** Why the result is masked (empty when it is trainable). */
  causes: MaskCause[];
  /** The main chain's calls, root first; empty when the build failed. */
  steps: MainChainStep[];
  /** Set when the rollout could not be read for a reason of tokcap's own (a lock timeout). */
  error?: TokcapError;
}

export interface BuildForExportOptions {
  freeze: boolean;
  model?: string;
}

/**
 * `buildRollout` (src/build/build-rollout.ts) plus what export needs beside the result, from the
 * same single read: the mask causes with their context (dangling intents, incomplete markers,
 * the chain view) and the main chain's steps. The result is the same dictionary `buildRollout`
 * returns, key for key (the export tests check that); a lock timeout, which `buildRollout`
 * throws, becomes a failed build here with `error` set, so the export goes on.
 */
export async function buildForExport(store: StoreOptions, rolloutId: string, options: BuildForExportOptions): Promise<ExportBuild> {
  const model = options.model ?? '';
  const label = <R extends ConsumerResult>(r: R): R => (options.freeze ? r : { ...r, preview: true });
  if (!isValidRolloutId(rolloutId)) {
    const result = failedBuild(rolloutId, invalidRolloutIdError(rolloutId).pythonString(), 0);
    return { result, causes: maskCauses(result), steps: [] };
  }
  let snapshot: { entries: Parameters<typeof assembleWithChains>[1]; incomplete: boolean; danglingIntents: string[]; snapshotId: string; version: number };
  try {
    snapshot = options.freeze ? await freezeRollout(store, rolloutId) : await readSnapshotReadOnly(store, rolloutId);
  } catch (e) {
    const err = toTokcapError(e, { rolloutId });
    const result = label(failedBuild(rolloutId, err.pythonString(), 0));
    return { result, causes: maskCauses(result), steps: [], ...(err.kind === 'lock_timeout' ? { error: err } : {}) };
  }
  let built: ConsumerResult;
  let chains: ChainBuild | null = null;
  if (snapshot.entries.length === 0) built = noRecordsResult(rolloutId);
  else ({ result: built, chains } = assembleWithChains(rolloutId, snapshot.entries, model));
  const finished = options.freeze
    ? finishConsumerResult(built, { incomplete: snapshot.incomplete, snapshot_id: snapshot.snapshotId, version: snapshot.version })
    : label(finishConsumerResult(built, { incomplete: snapshot.incomplete }));

  const context: MaskContext = { danglingIntents: snapshot.danglingIntents, chains };
  if (snapshot.incomplete) Object.assign(context, await incompleteContext(store.dir, rolloutId));
  const steps: MainChainStep[] =
    finished.rebuilt_response !== null && chains?.mainChain
      ? chains.mainChain.links.map((link) => ({
          callId: link.model_call_id,
          promptTokens: link.prompt_token_ids.length,
          generatedTokens: link.generation_token_ids.length,
        }))
      : [];
  return { result: finished, causes: maskCauses(finished, context), steps };
}

/**
 * The state's incomplete flag and the marker file, for the wording of the causes only (read
 * after the snapshot, without the lock: a change in between only changes the explanation).
 */
async function incompleteContext(dir: string, rolloutId: string): Promise<Pick<MaskContext, 'incompleteFlag' | 'incompleteMarkers'>> {
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
