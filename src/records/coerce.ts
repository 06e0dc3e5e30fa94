import { JsonFloat } from '../json/value.js';

/**
 * The lenient coercions of the reference reader (pydantic lax mode, docs/format.md#coercions). Canonical
 * files never need them; lines written by other tools are read the way the reference reads them.
 * Each function returns FAIL when the value is not acceptable.
 */
export const FAIL: unique symbol = Symbol('coerce-fail');
export type Fail = typeof FAIL;

const INT_STRING = /^[+-]?\d+(?:_\d+)*$/;
// "5.0", "5.00": the reference strips a dot followed by ONE OR MORE zeros; "5." is rejected.
// With `_` separators as well the reference's behaviour is not established: rejected.
const INT_STRING_DOT_ZEROS = /^[+-]?\d+\.0+$/;
/** Python's own limit on the digits int() converts (and the reference's for int strings). */
const MAX_INT_STRING_LENGTH = 4300;

/**
 * Whitespace the reference strips around a numeric string: Unicode White_Space, which is what
 * pydantic's `str::trim` and Python's own int()/float() strip alike. Not JavaScript's `\s`: U+FEFF
 * is `\s` but not whitespace here, U+0085 is whitespace here but not `\s`. Nor str.isspace():
 * U+001C..U+001F are isspace() but int() and float() do not strip them.
 * test/src/records/coerce.test.ts checks this set against python3's int() and float().
 */
const REF_WHITESPACE = '\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000';
const SURROUNDING_WHITESPACE = new RegExp(`^[${REF_WHITESPACE}]+|[${REF_WHITESPACE}]+$`, 'g');

export function stripReferenceWhitespace(s: string): string {
  return s.replace(SURROUNDING_WHITESPACE, '');
}

// pydantic converts a float to an int only strictly inside the signed 64-bit range
// (i64::MIN as f64 < x < i64::MAX as f64, both bounds being ±2^63): 1e20 and 1.5e300 are rejected.
const I64_BOUND = 2 ** 63;

/** int: ints, integral floats inside i64, decimal strings (whitespace, `_` separators, "5.0"), booleans. */
export function toInt(v: unknown): number | bigint | Fail {
  if (typeof v === 'number') return Number.isInteger(v) ? (Object.is(v, -0) ? 0 : v) : FAIL;
  if (typeof v === 'bigint') return v;
  if (v instanceof JsonFloat) {
    const x = v.value;
    return Number.isInteger(x) && x > -I64_BOUND && x < I64_BOUND ? normaliseInt(x) : FAIL;
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const s = stripReferenceWhitespace(v);
    if (s.length > MAX_INT_STRING_LENGTH) return FAIL;
    if (INT_STRING.test(s)) return bigOrNumber(BigInt(s.replace(/_/g, '')));
    if (INT_STRING_DOT_ZEROS.test(s)) return bigOrNumber(BigInt(s.slice(0, s.indexOf('.'))));
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

// Python's float() grammar, which the reference follows for strings (it reads "1_7e8"): digit
// groups joined by single `_`, at most one dot with a digit on some side, an optional exponent,
// or inf / infinity / nan in any case; a sign in front.
const DIGITS = '\\d(?:_?\\d)*';
const FLOAT_STRING = new RegExp(
  `^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`,
  'i',
);

/** float: floats, ints, numeric strings including "inf"/"nan", booleans. */
export function toFloat(v: unknown): number | Fail {
  if (typeof v === 'number') return v;
  if (v instanceof JsonFloat) return v.value;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const s = stripReferenceWhitespace(v);
    if (!FLOAT_STRING.test(s)) return FAIL;
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
  const n =
    typeof v === 'number' ? v : v instanceof JsonFloat ? v.value : typeof v === 'bigint' ? Number(v) : undefined;
  if (n !== undefined) return n === 1 ? true : n === 0 ? false : FAIL;
  if (typeof v === 'string') {
    // No whitespace stripped, ASCII case only (a non-ASCII letter never lowercases into a word).
    const s = v.replace(/[A-Z]/g, (c) => c.toLowerCase());
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
