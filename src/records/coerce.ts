import { JsonFloat } from '../json/value.js';

/**
 * The lenient coercions of the reference reader (pydantic lax mode, docs/format.md#coercions). Canonical
 * files never need them; lines written by other tools are read the way the reference reads them.
 * Each function returns FAIL when the value is not acceptable.
 */
export const FAIL: unique symbol = Symbol('coerce-fail');
export type Fail = typeof FAIL;

const INT_STRING = /^[+-]?\d+(?:_\d+)*$/;
const INT_STRING_DOT_ZERO = /^[+-]?\d+(?:_\d+)*\.0*$/;

function stripPyWhitespace(s: string): string {
  return s.replace(/^[\s]+|[\s]+$/gu, '');
}

/** int: ints, integral floats, decimal strings (whitespace, `_` separators, "5.0"), booleans. */
export function toInt(v: unknown): number | bigint | Fail {
  if (typeof v === 'number') return Number.isInteger(v) ? (Object.is(v, -0) ? 0 : v) : FAIL;
  if (typeof v === 'bigint') return v;
  if (v instanceof JsonFloat) return Number.isFinite(v.value) ? normaliseInt(v.value) : FAIL;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const s = stripPyWhitespace(v);
    if (INT_STRING.test(s)) return bigOrNumber(BigInt(s.replace(/_/g, '')));
    if (INT_STRING_DOT_ZERO.test(s)) return bigOrNumber(BigInt(s.replace(/_/g, '').replace(/\.0*$/, '')));
    return FAIL;
  }
  return FAIL;
}

function normaliseInt(x: number): number | bigint {
  if (Object.is(x, -0)) return 0;
  return Number.isSafeInteger(x) ? x : BigInt(x);
}

function bigOrNumber(b: bigint): number | bigint {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** An int that must fit a JS number (schema_version, cum_len, ...); huge values fail. */
export function toSmallInt(v: unknown): number | Fail {
  const r = toInt(v);
  if (r === FAIL || typeof r === 'bigint') return FAIL;
  return r;
}

const FLOAT_STRING = /^[+-]?(?:(?:\d+(?:_\d+)*)?\.?\d*(?:_\d+)*(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;

/** float: floats, ints, numeric strings including "inf"/"nan", booleans. */
export function toFloat(v: unknown): number | Fail {
  if (typeof v === 'number') return v;
  if (v instanceof JsonFloat) return v.value;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const s = stripPyWhitespace(v);
    if (s === '' || !FLOAT_STRING.test(s) || !/[\dinfa]/i.test(s)) return FAIL;
    const lower = s.toLowerCase().replace(/_/g, '');
    const sign = lower.startsWith('-') ? -1 : 1;
    const body = lower.replace(/^[+-]/, '');
    if (body === 'inf' || body === 'infinity') return sign * Infinity;
    if (body === 'nan') return NaN;
    const x = Number(body);
    return Number.isNaN(x) ? FAIL : sign * x;
  }
  return FAIL;
}

const TRUE_STRINGS = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_STRINGS = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/** bool: booleans, 0/1, 0.0/1.0, and the strings of pydantic's lax bool. */
export function toBool(v: unknown): boolean | Fail {
  if (typeof v === 'boolean') return v;
  const n = typeof v === 'number' ? v : v instanceof JsonFloat ? v.value : typeof v === 'bigint' ? Number(v) : undefined;
  if (n !== undefined) return n === 1 ? true : n === 0 ? false : FAIL;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (TRUE_STRINGS.has(s)) return true;
    if (FALSE_STRINGS.has(s)) return false;
  }
  return FAIL;
}

/**
 * An array of token ids. Returns the input array itself when every element is already a safe
 * non-fractional number (the common case: no copy), else a coerced copy.
 */
export function toTokenIds(v: unknown): (number | bigint)[] | Fail {
  if (!Array.isArray(v)) return FAIL;
  const n = v.length;
  let i = 0;
  for (; i < n; i++) {
    const x = v[i];
    if (typeof x !== 'number' || !Number.isInteger(x) || Object.is(x, -0)) break;
  }
  if (i === n) return v as number[];
  const out: (number | bigint)[] = v.slice(0, i) as number[];
  for (; i < n; i++) {
    const r = toInt(v[i]);
    if (r === FAIL) return FAIL;
    out.push(r);
  }
  return out;
}

/** An array of floats (log probs): numbers kept, others coerced. */
export function toFloats(v: unknown): number[] | Fail {
  if (!Array.isArray(v)) return FAIL;
  const n = v.length;
  let i = 0;
  for (; i < n; i++) if (typeof v[i] !== 'number') break;
  if (i === n) return v as number[];
  const out: number[] = v.slice(0, i) as number[];
  for (; i < n; i++) {
    const r = toFloat(v[i]);
    if (r === FAIL) return FAIL;
    out.push(r);
  }
  return out;
}
