import { canonicalJson } from '../json/canonical-json.js';
import { JsonFloat, type JsonObject, type JsonValue } from '../json/value.js';
import type { TokenEntry } from './token-entry.js';

/** Float-typed known fields: written as floats even when integral (`1700000001.0`, `-3.0`). */
function asFloat(x: number): JsonValue {
  return Number.isInteger(x) ? new JsonFloat(x) : x;
}

/**
 * The entry as the writer serialises it (docs/format.md#canonical-entry): all 23 known fields with defaults,
 * enum values as strings, floats as floats, plus every unknown field as parsed.
 */
export function entryToJson(entry: TokenEntry): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(entry)) out[k] = v as JsonValue;
  out.created_at = asFloat(entry.created_at);
  out.generation_log_probs = entry.generation_log_probs.map(asFloat);
  return out;
}

/** Canonical bytes of an entry (no trailing newline). */
export function canonicalEntryJson(entry: TokenEntry, options: { plusExponent?: boolean } = {}): string {
  return canonicalJson(entryToJson(entry), options);
}
