/**
 * The in-memory model of parsed JSON that keeps what orjson keeps (docs/format.md#json-parsing):
 * - integers are `number` when |n| <= 2^53 - 1, else `bigint` (exact up to 2^64 - 1);
 * - floats are `number`, except floats whose value is integral (1.0, -0.0, 1e16): those are
 *   `JsonFloat` so that re-serialising writes `1.0`, not `1`. A non-integral `number` can only
 *   have come from a float, so it needs no box.
 * Objects are plain `{}` objects; the parser defines every key as an own data property, so a
 * key such as "__proto__" stays data. Duplicate keys: the last occurrence wins.
 */
export class JsonFloat {
  constructor(readonly value: number) {}
}

export type JsonValue =
  null | boolean | number | bigint | string | JsonFloat | JsonValue[] | { [key: string]: JsonValue };

export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonFloat);
}

/** True for a JSON integer (a boolean is not one here; callers that follow Python decide). */
export function isJsonInt(v: JsonValue): v is number | bigint {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
}

/** Python truthiness of a JSON value (docs/format.md#terms). */
export function truthy(v: JsonValue | undefined): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (v instanceof JsonFloat) return v.value !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return Object.keys(v).length > 0;
}
