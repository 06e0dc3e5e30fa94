/**
 * Serialises a `--json` document. Plain JSON.stringify cannot write the library's JSON model
 * (src/json/value.ts): integers beyond 2^53 are `bigint`, and integral floats are `JsonFloat`
 * boxes that must print as `1.0`, not `1`. This writer handles both, compactly, on one line.
 *
 * TODO(lead): if src/ grows a canonical serializer with the Python float layout (FORMAT.md §3.2),
 * switch `stringifyJson` to it so CLI output and conformance expectations use one writer.
 */
import { JsonFloat } from '../src/json/value.js';

function floatText(v: number): string {
  if (!Number.isFinite(v)) throw new TypeError(`cannot write ${v} as JSON`);
  if (Object.is(v, -0)) return '-0.0';
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return `${v}.0`;
  return JSON.stringify(v);
}

export function stringifyJson(value: unknown): string {
  const parts: string[] = [];
  const seen = new Set<object>();
  const write = (v: unknown): void => {
    if (v === null || v === undefined) {
      parts.push('null');
    } else if (typeof v === 'bigint') {
      parts.push(v.toString());
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new TypeError(`cannot write ${v} as JSON`);
      parts.push(JSON.stringify(v));
    } else if (typeof v === 'string' || typeof v === 'boolean') {
      parts.push(JSON.stringify(v));
    } else if (v instanceof JsonFloat) {
      parts.push(floatText(v.value));
    } else if (typeof v === 'object') {
      if (seen.has(v)) throw new TypeError('cannot write a cyclic structure as JSON');
      seen.add(v);
      if (Array.isArray(v)) {
        parts.push('[');
        v.forEach((item, i) => {
          if (i > 0) parts.push(',');
          write(item);
        });
        parts.push(']');
      } else {
        const obj = typeof (v as { toJSON?: unknown }).toJSON === 'function' ? (v as { toJSON(): unknown }).toJSON() : v;
        if (obj !== v) {
          seen.delete(v);
          write(obj);
          return;
        }
        parts.push('{');
        let first = true;
        for (const [k, item] of Object.entries(v)) {
          if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
          if (!first) parts.push(',');
          first = false;
          parts.push(JSON.stringify(k), ':');
          write(item);
        }
        parts.push('}');
      }
      seen.delete(v);
    } else {
      throw new TypeError(`cannot write a ${typeof v} as JSON`);
    }
  };
  write(value);
  return parts.join('');
}
