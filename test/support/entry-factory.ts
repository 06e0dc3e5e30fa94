import { computeTokenDigest } from '../../src/digest/token-digest.js';
import { JsonFloat, type JsonObject, type JsonValue } from '../../src/json/value.js';
import { validateTokenEntry, type TokenEntry } from '../../src/records/token-entry.js';

export interface EntrySpec {
  id: string;
  /** Full prompt (or the suffix when `delta`). */
  prompt: number[];
  gen: number[];
  res?: 'root' | 'resolved' | 'unresolved' | null;
  parent?: string | null;
  delta?: boolean;
  /** Stamped cumulative sequence; defaults to prompt + gen for full records. */
  cumulative?: number[];
  digest?: string | null;
  cum_len?: number | null;
  created_at?: number;
  output_items?: JsonObject[];
  token_item_index?: number | null;
  routed_experts?: JsonValue;
  log_probs?: number[];
  extra?: JsonObject;
}

/** A validated TokenEntry built from a compact spec (one log prob per generated token). */
export function makeEntry(spec: EntrySpec): TokenEntry {
  const res = spec.res === undefined ? (spec.parent ? 'resolved' : 'root') : spec.res;
  const cumulative = spec.cumulative ?? (spec.delta ? undefined : [...spec.prompt, ...spec.gen]);
  const raw: JsonObject = {
    schema_version: 5,
    rollout_id: 'r',
    model_call_id: spec.id,
    model: '',
    prompt_token_ids: spec.prompt,
    generation_token_ids: spec.gen,
    generation_log_probs: spec.log_probs ?? spec.gen.map(() => -0.5),
    routed_experts: spec.routed_experts ?? null,
    output_items: spec.output_items ?? [],
    token_item_index: spec.token_item_index ?? null,
    created_at: new JsonFloat(spec.created_at ?? 1000),
    parent_call_id: spec.parent ?? null,
    cum_len: spec.cum_len !== undefined ? spec.cum_len : cumulative ? cumulative.length : null,
    digest: spec.digest !== undefined ? spec.digest : cumulative ? computeTokenDigest(cumulative) : null,
    parent_resolution: res,
    prompt_is_delta: spec.delta ?? false,
    ...(spec.extra ?? {}),
  };
  return validateTokenEntry(raw);
}

/** Recursively turns JsonFloat into numbers, bigints into numbers and -0 into 0 (value comparison). */
export function plain(v: unknown): unknown {
  if (v instanceof JsonFloat) return plain(v.value);
  if (typeof v === 'number') return Object.is(v, -0) ? 0 : v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = plain(x);
    return out;
  }
  return v;
}
