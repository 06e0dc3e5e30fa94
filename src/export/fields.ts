import { TokcapError } from '../errors.js';
import { isJsonObject } from '../json/value.js';

/**
 * `--fields` for the jsonl export. A comma-separated list of items:
 *
 * - `NAME`: keep this top-level key. When at least one NAME is given, a line holds only
 *   `rollout_id` (always, first), the named keys and the status fields, in the record's own key
 *   order. Keys a record does not have (e.g. `error` on a successful build) are simply absent.
 * - `-NAME`: drop this top-level key (all other keys stay). `rollout_id`, `status` and
 *   `conditions` cannot be dropped: every exported line carries them (docs/cli.md#status).
 * - `-tokens`: keep `rebuilt_response` but slim its output items for analysis: the token arrays
 *   `prompt_token_ids` and `generation_token_ids` are replaced, in place, by their lengths
 *   `prompt_token_count` and `generation_token_count`; `generation_log_probs` and
 *   `routed_experts` are removed. Nothing else in the line changes.
 *
 * Items combine: `rollout_id,metrics,mask_sample` (a small table), `-rebuilt_response` (all but
 * the trajectory), `rebuilt_response,mask_sample,-tokens` (the trajectory's shape without its
 * tokens). Unknown names are usage errors, so a typo never silently empties a column.
 */
export const EXPORT_RECORD_KEYS = [
  'rollout_id',
  'builder',
  'rebuilt_response',
  'metrics',
  'mask_sample',
  'unresolved_retries',
  'unresolved_parent_calls',
  'error',
  '_capture_snapshot',
  'preview',
  'mask_causes',
  // The rollout's status fields (docs/cli.md#status), added last where the locks are taken.
  'status',
  'conditions',
  'verdict',
  'error_kind',
] as const;

/** Keys every line keeps whatever the selection: the id and the rollout's status (docs/cli.md#status). */
export const ALWAYS_EXPORTED: ReadonlySet<string> = new Set(['rollout_id', 'status', 'conditions']);

/** The pseudo field of `-tokens`. */
export const TOKENS_PSEUDO_FIELD = 'tokens';

/** Token arrays replaced by their lengths under `-tokens`. */
export const TOKEN_ARRAY_COUNTS: Readonly<Record<string, string>> = {
  prompt_token_ids: 'prompt_token_count',
  generation_token_ids: 'generation_token_count',
};
/** Per-token arrays removed under `-tokens`. */
export const TOKEN_ARRAYS_REMOVED: readonly string[] = ['generation_log_probs', 'routed_experts'];

export interface FieldSelection {
  /** Keys to keep (besides rollout_id); null = every key. */
  keep: ReadonlySet<string> | null;
  drop: ReadonlySet<string>;
  dropTokens: boolean;
}

export const ALL_FIELDS: FieldSelection = { keep: null, drop: new Set(), dropTokens: false };

function usage(message: string): TokcapError {
  return new TokcapError('usage', message);
}

const KNOWN = new Set<string>(EXPORT_RECORD_KEYS);
const knownList = () => `${EXPORT_RECORD_KEYS.join(', ')}, and -${TOKENS_PSEUDO_FIELD}`;

/** Parses the items of `--fields` (already split on commas). Throws usage errors. */
export function parseFieldSelection(items: readonly string[]): FieldSelection {
  const keep = new Set<string>();
  const drop = new Set<string>();
  let dropTokens = false;
  for (const raw of items) {
    const item = raw.trim();
    const negative = item.startsWith('-');
    const name = negative ? item.slice(1) : item;
    if (name === TOKENS_PSEUDO_FIELD) {
      if (!negative)
        throw usage(
          `--fields: '${TOKENS_PSEUDO_FIELD}' is only valid as '-${TOKENS_PSEUDO_FIELD}' (drop the token arrays)`,
        );
      dropTokens = true;
      continue;
    }
    if (!KNOWN.has(name)) throw usage(`--fields: unknown field '${name}'; known: ${knownList()}`);
    if (negative) {
      if (ALWAYS_EXPORTED.has(name)) throw usage(`--fields: ${name} is always exported and cannot be dropped`);
      drop.add(name);
    } else if (!ALWAYS_EXPORTED.has(name)) keep.add(name);
  }
  for (const name of drop) if (keep.has(name)) throw usage(`--fields: '${name}' is both kept and dropped`);
  if (dropTokens && (drop.has('rebuilt_response') || (keep.size > 0 && !keep.has('rebuilt_response')))) {
    throw usage(`--fields: -${TOKENS_PSEUDO_FIELD} slims rebuilt_response, which this selection leaves out`);
  }
  return { keep: keep.size > 0 ? keep : null, drop, dropTokens };
}

/** True when the selection changes nothing. */
export function selectsEverything(sel: FieldSelection): boolean {
  return sel.keep === null && sel.drop.size === 0 && !sel.dropTokens;
}

/** A record with the selection applied (a new object; the input is not changed). */
export function applyFieldSelection(
  record: Readonly<Record<string, unknown>>,
  sel: FieldSelection,
): Record<string, unknown> {
  if (selectsEverything(sel)) return { ...record };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!ALWAYS_EXPORTED.has(key)) {
      if (sel.keep !== null && !sel.keep.has(key)) continue;
      if (sel.drop.has(key)) continue;
    }
    out[key] = key === 'rebuilt_response' && sel.dropTokens ? slimResponse(value) : value;
  }
  return out;
}

function slimResponse(response: unknown): unknown {
  if (!isJsonObject(response) || !Array.isArray(response.output)) return response;
  return { ...response, output: response.output.map(slimItem) };
}

/** An output item without its per-token arrays (lengths kept, at the arrays' positions). */
export function slimItem(item: unknown): unknown {
  if (!isJsonObject(item)) return item;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) {
    if (TOKEN_ARRAYS_REMOVED.includes(key)) continue;
    const countKey = TOKEN_ARRAY_COUNTS[key];
    if (countKey !== undefined && Array.isArray(value)) out[countKey] = value.length;
    else out[key] = value;
  }
  return out;
}
