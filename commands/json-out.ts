/**
 * Serialises a `--json` document with the library's writer (src/json/canonical-json.ts): keys
 * in insertion order (build results keep the reference's key order), integral floats as `1.0`,
 * big integers exact, the Python float layout (FORMAT.md §3.2). Object keys whose value is
 * `undefined` are left out, as JSON.stringify would.
 */
import { orderedJson } from '../src/json/canonical-json.js';
import { JsonFloat } from '../src/json/value.js';

function dropUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : dropUndefined(x)));
  if (v && typeof v === 'object' && !(v instanceof JsonFloat)) {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return v;
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) {
        changed = true;
        continue;
      }
      const y = dropUndefined(x);
      if (y !== x) changed = true;
      out[k] = y;
    }
    return changed ? out : v;
  }
  return v;
}

export function stringifyJson(value: unknown): string {
  return orderedJson(dropUndefined(value));
}
