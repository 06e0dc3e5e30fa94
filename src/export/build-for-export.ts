import type { TokcapError } from '../errors.js';
import { buildRolloutDetailed, type SnapshotSource } from '../chains/build-rollout.js';
import type { ConsumerResult } from '../chains/consumer-result.js';
import type { ChainBuild } from '../chains/chain-builder.js';
import type { MaskCause } from '../chains/mask-causes.js';
import type { StoreOptions } from '../ops/store.js';
import type { JsonBytesReader } from '../json/parse-json.js';
import { verdictOf, type VerdictAnswer } from '../status/verdict.js';

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
  /** Set when the rollout could not be read (a lock timeout) or its result written. */
  error?: TokcapError;
  /** The consumer verdict (src/status/verdict.ts): `unavailable` ones are left out of the output. */
  verdict: VerdictAnswer;
  /** The chain view the result was built from (null for a failed build); see DetailedBuild. */
  chains?: ChainBuild | null;
  /** Why the result is a failed build before any assembly (see DetailedBuild.readFailure). */
  readFailure?: TokcapError;
}

export interface BuildForExportOptions {
  freeze: boolean;
  model?: string;
  /** Where the locked copies come from (see `BuildRolloutOptions.source`). */
  source?: SnapshotSource;
  /** See `BuildRolloutOptions.json`. */
  jsonReader?: JsonBytesReader;
  /** Keep the chain view in the result (the Parquet export's calls table needs it). */
  keepChains?: boolean;
}

/**
 * `buildRolloutDetailed` (src/chains/build-rollout.ts) plus the main chain's steps, from the same
 * single read. The result is the same dictionary `buildRollout` returns; a lock timeout becomes a
 * failed build with `error` set, so the export goes on.
 */
export async function buildForExport(
  store: StoreOptions,
  rolloutId: string,
  options: BuildForExportOptions,
): Promise<ExportBuild> {
  const d = await buildRolloutDetailed(store, rolloutId, options);
  const steps: MainChainStep[] =
    d.result.rebuilt_response !== null && d.chains?.mainChain
      ? d.chains.mainChain.links.map((link) => ({
          callId: link.model_call_id,
          promptTokens: link.prompt_token_ids.length,
          generatedTokens: link.generation_token_ids.length,
        }))
      : [];
  return {
    result: d.result,
    causes: d.causes,
    steps,
    verdict: verdictOf(d),
    ...(d.error ? { error: d.error } : {}),
    ...(options.keepChains ? { chains: d.chains } : {}),
    ...(d.readFailure ? { readFailure: d.readFailure } : {}),
  };
}
