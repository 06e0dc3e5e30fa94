/**
 * Serialises a `--json` document with the library's writer (src/json/canonical-json.ts): keys
 * in insertion order (build results keep the reference's key order), integral floats as `1.0`,
 * big integers exact, the Python float layout (FORMAT.md §3.2). Object keys whose value is
 * `undefined` are left out, as JSON.stringify would.
 */
import { outputJson } from '../src/json/canonical-json.js';

export function stringifyJson(value: unknown): string {
  return outputJson(value);
}
