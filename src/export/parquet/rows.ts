/**
 * The Parquet export's rows for one rollout, from its build (the chain view the result was built
 * from) and the library's verdict; its status and conditions are added where the rollout's
 * facts are read (export-parquet.ts). Plain data: computed in a worker thread or in this one.
 */
import type { ExportBuild } from '../build-for-export.js';
import { exportedCauses } from '../exported-causes.js';
import type { VerdictAnswer } from '../../status/verdict.js';
import type { CallRow, ParquetRolloutRow, TokenIdType } from './schema.js';

/** The rollouts row without what the facts give (status, conditions; snapshot of a preview). */
export type BuiltRolloutRow = Omit<ParquetRolloutRow, 'status' | 'conditions'>;

export interface ParquetRows {
  rollout: BuiltRolloutRow;
  calls: CallRow[];
  /**
   * The narrowest token id type that holds every id of the calls, or null when an id does not
   * even fit a signed 64-bit integer (the rollout is then exported without its calls).
   */
  tokenType: TokenIdType | null;
  verdict: VerdictAnswer['verdict'];
}

const U32 = 0x1_0000_0000;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function tokenTypeOf(lists: readonly (readonly (number | bigint)[] | null)[]): TokenIdType | null {
  let type: TokenIdType = 'uint32';
  for (const list of lists) {
    if (list === null) continue;
    for (const id of list) {
      if (typeof id === 'number' && id >= 0 && id < U32) continue;
      const big = BigInt(id);
      if (big < I64_MIN || big > I64_MAX) return null;
      type = 'int64';
    }
  }
  return type;
}

function metric(metrics: Record<string, unknown>, key: string): number | null {
  const v = metrics[key];
  return typeof v === 'number' ? v : null;
}

export function parquetRows(build: ExportBuild): ParquetRows {
  const { result } = build;
  const verdict = build.verdict;
  const metrics = result.metrics as Record<string, unknown>;
  const chains = build.chains ?? null;
  const main = chains?.mainChain ?? null;
  const last = main?.links[main.links.length - 1];
  const snapshot =
    '_capture_snapshot' in result
      ? (result._capture_snapshot as { snapshot_id: string; version: number } | undefined)
      : undefined;
  const errorText = 'error' in result && typeof result.error === 'string' ? result.error : null;
  const rollout: BuiltRolloutRow = {
    rollout_id: result.rollout_id,
    verdict: verdict.verdict,
    mask_sample: result.mask_sample,
    could_not_be_built: verdict.unbuilt,
    mask_causes: exportedCauses(build.causes).map((c) => ({ code: String(c.code), message: String(c.message) })),
    n_calls: metric(metrics, 'n_calls') ?? 0,
    chains: metric(metrics, 'chains'),
    roots: metric(metrics, 'roots'),
    quarantined_calls: metric(metrics, 'quarantined_calls'),
    tokens_delivered: last
      ? last.prompt_token_ids.length + last.generation_token_ids.length
      : result.rebuilt_response === null
        ? null
        : 0,
    generated_tokens_captured: metric(metrics, 'generated_tokens_captured'),
    generated_tokens_delivered: metric(metrics, 'generated_tokens_delivered'),
    delivered_fraction: metric(metrics, 'delivered_fraction'),
    preview: 'preview' in result,
    snapshot_id: snapshot?.snapshot_id ?? null,
    version: snapshot?.version ?? null,
    error: errorText ?? build.error?.message ?? null,
    error_kind: build.error?.kind ?? build.readFailure?.kind ?? verdict.error?.kind ?? null,
  };
  const calls: CallRow[] = [];
  if (chains) {
    const onChains = new Map<string, string[]>();
    for (const chain of chains.chains) {
      for (const id of chain.callIds) {
        let names = onChains.get(id);
        if (!names) onChains.set(id, (names = []));
        names.push(chain.name);
      }
    }
    const retries = new Set(chains.notes.unresolved_retries);
    const delivered = new Set(main?.callIds ?? []);
    for (const c of chains.calls) {
      const e = c.entry;
      const full = c.promptLength !== null;
      calls.push({
        rollout_id: result.rollout_id,
        model_call_id: c.id,
        line: c.fileIndex + 1,
        stored: c.storedAsDelta ? 'delta' : 'full',
        parent_call_id: c.claimedParentId,
        parent_resolution: c.parentResolution,
        linked_parent_call_id: c.parentId,
        link: c.outcome,
        parent_link_failure: c.reason,
        call_status: c.status,
        quarantined: c.quarantined,
        unresolved_retry: retries.has(c.id),
        chains: onChains.get(c.id) ?? [],
        in_delivered_chain: delivered.has(c.id),
        duplicate_copies: c.duplicateCopies,
        prompt_token_ids: full ? e.prompt_token_ids : null,
        generation_token_ids: e.generation_token_ids,
        generation_log_probs: e.generation_log_probs,
        prompt_len: c.promptLength,
        stored_prompt_len: c.storedPromptLength,
        generation_len: c.generationLength,
        model: e.model,
        created_at: e.created_at,
        schema_version: e.schema_version,
      });
    }
  }
  const tokenType = tokenTypeOf(calls.flatMap((c) => [c.prompt_token_ids, c.generation_token_ids]));
  return { rollout, calls: tokenType === null ? [] : calls, tokenType, verdict: verdict.verdict };
}
