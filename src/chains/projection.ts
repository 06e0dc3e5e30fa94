import type { TokenId } from '../digest/token-digest.js';
import { isJsonObject, JsonFloat, truthy, type JsonObject, type JsonValue } from '../json/value.js';
import type { TokenEntry } from '../records/token-entry.js';
import { builderError, pyEquals, pyLen, pyTypeName } from './python-semantics.js';
import { appendTokens } from './token-arrays.js';

/**
 * Projection of a chain into response output items (docs/format.md#projection) and the
 * prefix-contiguity check (docs/format.md#prefix-contiguity).
 */

export type ProjectionUsage = { input_tokens: number; output_tokens: number };

/** The projected response, keys in the reference's order. */
export type ProjectedResponse = {
  id: string;
  model: string;
  object: 'response';
  output: JsonObject[];
  usage: ProjectionUsage;
};

export const NO_TRAINABLE_TOKENS = 'capture produced no trainable generated tokens';
export const NOT_PREFIX_CONTIGUOUS =
  "projection is not prefix-contiguous: an output item's prompt_token_ids does not extend the tokens seen so far";

/**
 * Projects a chain's links (root first, full prompts) into `{"id": "proj-" + R, "model",
 * "object": "response", "output", "usage"}`. Throws the ValueError of step 3 when no item
 * carries generated tokens.
 */
export function projectChain(rolloutId: string, links: readonly TokenEntry[], model: string): ProjectedResponse {
  return projectChainNoting(rolloutId, links, model).response;
}

/**
 * `projectChain`, also saying whether the projection is prefix-contiguous by construction:
 * when each link's only item with generation_token_ids is its carrier, the items checked by
 * docs/format.md#prefix-contiguity are the carriers in order, and each carrier's prompt is the running sequence, which
 * holds the previous carrier's prompt and generation and then grows. The check then cannot
 * fail and need not compare every token again.
 */
export function projectChainNoting(
  rolloutId: string,
  links: readonly TokenEntry[],
  model: string,
): { response: ProjectedResponse; contiguousByConstruction: boolean } {
  let contiguous = true;
  const output: JsonObject[] = [];
  // The running sequence as of this link's prompt; never mutated once an item holds it.
  let running: readonly TokenId[] = [];
  for (let k = 0; k < links.length; k++) {
    const entry = links[k];
    running = k === 0 ? entry.prompt_token_ids : nextRunning(running, links[k - 1], entry.prompt_token_ids);
    if (!projectLink(entry, running, output)) contiguous = false;
  }

  if (!output.some((item) => truthy(item.generation_token_ids))) {
    throw builderError('ValueError', NO_TRAINABLE_TOKENS);
  }
  const tokenItems = output.filter(
    (item) => item.generation_token_ids !== undefined && item.generation_token_ids !== null,
  );
  let outputTokens = 0;
  for (const item of tokenItems) outputTokens += pyLen(item.generation_token_ids);
  const first = tokenItems[0];
  const inputTokens = first === undefined || first.prompt_token_ids == null ? 0 : pyLen(first.prompt_token_ids);
  return {
    response: {
      id: `proj-${rolloutId}`,
      model,
      object: 'response',
      output,
      usage: { input_tokens: inputTokens, output_tokens: outputTokens },
    },
    contiguousByConstruction: contiguous,
  };
}

/**
 * Appends one link's items to `output`: copies of its output items, the carriers holding its
 * token arrays, or one message item when it has none. False when its items do not carry
 * generation_token_ids exactly once (the contiguity check then has to run).
 */
function projectLink(entry: TokenEntry, running: readonly TokenId[], output: JsonObject[]): boolean {
  if (entry.output_items.length === 0) {
    output.push(withTokenFields({ type: 'message' }, entry, running));
    return true;
  }
  const items: JsonObject[] = entry.output_items.map((item) => ({ ...item }));
  for (const carrier of carrierItems(items, entry.token_item_index)) withTokenFields(carrier, entry, running);
  let carrying = 0;
  for (const item of items) {
    if (item.generation_token_ids !== undefined && item.generation_token_ids !== null) carrying++;
    output.push(item);
  }
  return carrying === 1;
}

/**
 * Sets the token fields on `item`: assignment keeps an existing key's position and appends a new
 * key, like a dict. The arrays are the record's own (read-only, like the result's), but for log
 * probs with an integral value (written as Python floats).
 */
function withTokenFields(item: JsonObject, entry: TokenEntry, running: readonly TokenId[]): JsonObject {
  item.prompt_token_ids = running as TokenId[];
  item.generation_token_ids = entry.generation_token_ids;
  item.generation_log_probs = asFloats(entry.generation_log_probs);
  if (entry.routed_experts !== null) item.routed_experts = entry.routed_experts;
  return item;
}

/**
 * The running sequence after `previous` (whose prompt's running sequence is `running`): that,
 * `previous`'s generation and `prompt`'s interstitial (`prompt` without its first
 * len(previous prompt + previous generation) tokens). When that equals `prompt` element for
 * element (a linked call's full prompt, the usual case), it is `prompt` itself: the record's
 * array, read-only like the result's, rather than a copy of up to thousands of ids per call
 * (most of a preview's garbage). Otherwise a new array.
 */
function nextRunning(
  running: readonly TokenId[],
  previous: TokenEntry,
  prompt: readonly TokenId[],
): readonly TokenId[] {
  const generation = previous.generation_token_ids;
  const skip = previous.prompt_token_ids.length + generation.length;
  if (
    running.length + generation.length === skip &&
    prompt.length >= skip &&
    sameAt(prompt, 0, running) &&
    sameAt(prompt, running.length, generation)
  ) {
    return prompt;
  }
  const next = running.slice();
  appendTokens(next, generation);
  appendTokens(next, prompt, skip);
  return next;
}

/** `whole[offset : offset + part.length]` holds exactly `part`'s elements (in range). */
function sameAt(whole: readonly TokenId[], offset: number, part: readonly TokenId[]): boolean {
  for (let i = 0; i < part.length; i++) if (whole[offset + i] !== part[i]) return false;
  return true;
}

/**
 * The items that receive the token arrays: the one at `token_item_index` when in range;
 * otherwise every item with a non-null inline `generation_token_ids`; otherwise the last item.
 */
function carrierItems(items: JsonObject[], tokenItemIndex: number | null): JsonObject[] {
  if (tokenItemIndex !== null && tokenItemIndex >= 0 && tokenItemIndex < items.length) return [items[tokenItemIndex]];
  const inline = items.filter((item) => item.generation_token_ids !== undefined && item.generation_token_ids !== null);
  if (inline.length > 0) return inline;
  return [items[items.length - 1]];
}

/**
 * Log probs are Python floats: an integral value must still print as `0.0`, `-0.0`, `1.0`. The
 * record's array itself when it has none (the usual case). Built by push, not `map`: `map`
 * creates a "holey" array, which JSON serialisation of the result walks several times slower.
 */
function asFloats(xs: readonly number[]): JsonValue[] {
  let i = 0;
  while (i < xs.length && !Number.isInteger(xs[i])) i++;
  if (i === xs.length) return xs as number[];
  const out: JsonValue[] = [];
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    out.push(Number.isInteger(x) ? new JsonFloat(x) : x);
  }
  return out;
}

/**
 * docs/format.md#prefix-contiguity: every item with non-null `generation_token_ids` must have a `prompt_token_ids` that
 * starts with all tokens seen so far (previous item's prompt + generation). Throws the
 * AssertionError of the reference otherwise. Linear: `seen` is kept as its two parts.
 */
export function checkPrefixContiguity(output: readonly JsonValue[]): void {
  let seenHead: readonly JsonValue[] = [];
  let seenTail: readonly JsonValue[] = [];
  for (const item of output) {
    if (!isJsonObject(item)) continue;
    const generation = item.generation_token_ids;
    if (generation === undefined || generation === null) continue;
    const raw = item.prompt_token_ids;
    const prompt: JsonValue = raw !== undefined && truthy(raw) ? raw : [];
    if (typeof prompt === 'string') throw builderError('AssertionError', NOT_PREFIX_CONTIGUOUS);
    if (!Array.isArray(prompt)) {
      throw builderError(
        'TypeError',
        isJsonObject(prompt) ? "unhashable type: 'slice'" : `'${pyTypeName(prompt)}' object is not subscriptable`,
      );
    }
    const seenLength = seenHead.length + seenTail.length;
    if (prompt.length < seenLength) throw builderError('AssertionError', NOT_PREFIX_CONTIGUOUS);
    if (!startsWith(prompt, 0, seenHead) || !startsWith(prompt, seenHead.length, seenTail)) {
      throw builderError('AssertionError', NOT_PREFIX_CONTIGUOUS);
    }
    if (!Array.isArray(generation)) {
      throw builderError('TypeError', `can only concatenate list (not "${pyTypeName(generation)}") to list`);
    }
    seenHead = prompt;
    seenTail = generation;
  }
}

/** Python `==` of `whole[offset : offset + part.length]` and `part` (in range). */
function startsWith(whole: readonly JsonValue[], offset: number, part: readonly JsonValue[]): boolean {
  for (let i = 0; i < part.length; i++) {
    const a = whole[offset + i];
    const b = part[i];
    // Identity first: ids are almost always equal numbers.
    if (a !== b && !pyEquals(a, b)) return false;
  }
  return true;
}
