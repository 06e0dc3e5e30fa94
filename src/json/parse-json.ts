/**
 * Strict JSON reader that accepts exactly what orjson accepts (docs/format.md#json-parsing) and keeps what
 * orjson keeps (see value.ts): integers exact (number when safe, bigint up to 2^64 - 1), floats
 * with an integral value boxed as JsonFloat, every object key an own data property, duplicate
 * keys resolved last-wins.
 *
 * Error messages follow orjson 3.8.3 (yyjson): "<reason>: line L column C (char P)", with L, C
 * and P computed the way Python's JSONDecodeError does, over code points of the decoded text.
 *
 * The parser is written for throughput on JSONL records that are mostly long arrays of small
 * integers and floats: it walks the string with charCodeAt, accumulates short integers directly
 * into a number, takes the exact (Clinger) fast path for short decimal floats, and slices plain
 * string runs without building them character by character. It keeps its cursor in module
 * state; it never calls out to user code, so it cannot be re-entered.
 */
import { TokcapError } from '../errors.js';
import { ACC_LIMIT, fastDecimal } from './decimal.js';
import { MAX_JSON_DEPTH } from './json-limits.js';
import { NOT_FAST, parseJsonBytesFast } from './parse-json-fast.js';
import { JsonFloat, type JsonObject, type JsonValue } from './value.js';
import { isWellFormed } from './well-formed.js';

export { MAX_JSON_DEPTH, isWellFormed };

const MAX_SAFE = 9007199254740991;
const MIN_I64 = -(2n ** 63n);
const MAX_U64 = 2n ** 64n - 1n;
const MAX_SAFE_BIG = BigInt(MAX_SAFE);

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

let src = '';
let len = 0;
let pos = 0;
let depth = 0;

/** Parses one JSON document from a string. */
export function parseJson(text: string): JsonValue {
  if (!isWellFormed(text)) {
    // orjson encodes a str argument to UTF-8 first and fails on lone surrogates at char 0.
    throw decodeError('str is not valid UTF-8: surrogates not allowed', text, 0);
  }
  return parseDocument(text);
}

/**
 * Parses one JSON document from UTF-8 bytes (invalid UTF-8 and a BOM are errors). The byte
 * parser (parse-json-fast.ts) takes ordinary documents; whatever it gives up on is read here.
 */
export function parseJsonBytes(bytes: Uint8Array): JsonValue {
  const fast = parseJsonBytesFast(bytes);
  if (fast !== NOT_FAST) return fast;
  let text: string;
  try {
    text = utf8Decoder.decode(bytes);
  } catch {
    throw decodeError('str is not valid UTF-8: surrogates not allowed', '', 0);
  }
  return parseDocument(text);
}

function parseDocument(text: string): JsonValue {
  if (text.length === 0) throw decodeError('input length is 0', text, 0);
  if (text.charCodeAt(0) === 0xfeff) throw decodeError('byte order mark (BOM) is not supported', text, 0);
  src = text;
  len = text.length;
  pos = 0;
  depth = 0;
  try {
    let c = skipWs();
    if (pos >= len) throw decodeError('input data is empty', text, 0);
    const value = parseValue(c);
    c = skipWs();
    if (pos < len) fail('unexpected content after document', pos);
    return value;
  } finally {
    src = '';
    len = 0;
  }
}

function skipWs(): number {
  let c = src.charCodeAt(pos);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = src.charCodeAt(++pos);
  return c;
}

/** `c` is the character at `pos` (NaN at the end of the input). */
function parseValue(c: number): JsonValue {
  if ((c >= 48 && c <= 57) || c === 45) return parseNumber(c);
  switch (c) {
    case 34:
      return detach(parseString());
    case 123:
      return parseObject();
    case 91:
      return parseArray();
    case 116:
      return parseLiteral('true', true);
    case 102:
      return parseLiteral('false', false);
    case 110:
      return parseLiteral('null', null);
    default:
      return fail('unexpected character', pos);
  }
}

function parseLiteral<T extends JsonValue>(word: string, value: T): T {
  if (src.startsWith(word, pos)) {
    pos += word.length;
    return value;
  }
  return fail('invalid literal', pos);
}

function parseArray(): JsonValue[] {
  const open = pos++;
  if (++depth > MAX_JSON_DEPTH) fail('recursion limit exceeded', open);
  const arr: JsonValue[] = [];
  let c = skipWs();
  if (c === 93) {
    pos++;
    depth--;
    return arr;
  }
  for (;;) {
    if (c >= 48 && c <= 57) {
      // Token ids: a short non-negative integer is accumulated right here; anything else (a
      // leading zero, 16+ digits, a fraction or exponent) is re-read by parseNumber.
      const start = pos;
      let m = c - 48;
      c = src.charCodeAt(++pos);
      if (m !== 0) {
        while (c >= 48 && c <= 57) {
          m = m * 10 + (c - 48);
          c = src.charCodeAt(++pos);
        }
      }
      if (pos - start > 15 || c === 46 || c === 101 || c === 69 || (c >= 48 && c <= 57)) {
        pos = start;
        arr.push(parseNumber(src.charCodeAt(start)));
        c = src.charCodeAt(pos);
      } else {
        arr.push(m);
      }
    } else {
      arr.push(c === 45 ? parseNumber(c) : parseValue(c));
      c = src.charCodeAt(pos);
    }
    if (c === 44) {
      c = src.charCodeAt(++pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) c = skipWs();
      if (c === 93) fail('trailing comma is not allowed', pos + 1);
      continue;
    }
    if (c === 93) {
      pos++;
      depth--;
      return arr;
    }
    if (c === 32 || c === 10 || c === 13 || c === 9) {
      c = skipWs();
      if (c === 44) {
        c = src.charCodeAt(++pos);
        if (c === 32 || c === 10 || c === 13 || c === 9) c = skipWs();
        if (c === 93) fail('trailing comma is not allowed', pos + 1);
        continue;
      }
      if (c === 93) {
        pos++;
        depth--;
        return arr;
      }
    }
    return fail('unexpected character', pos);
  }
}

function parseObject(): JsonObject {
  const open = pos++;
  if (++depth > MAX_JSON_DEPTH) fail('recursion limit exceeded', open);
  const obj: JsonObject = {};
  let c = skipWs();
  if (c === 125) {
    pos++;
    depth--;
    return obj;
  }
  for (;;) {
    if (c !== 34) fail('unexpected character', pos);
    const key = parseString();
    c = src.charCodeAt(pos);
    if (c !== 58) {
      c = skipWs();
      if (c !== 58) fail('unexpected character', pos);
    }
    c = src.charCodeAt(++pos);
    if (c === 32 || c === 10 || c === 13 || c === 9) c = skipWs();
    const value = parseValue(c);
    if (key === '__proto__') {
      Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
    } else {
      obj[key] = value;
    }
    c = src.charCodeAt(pos);
    if (c === 32 || c === 10 || c === 13 || c === 9) c = skipWs();
    if (c === 44) {
      pos++;
      c = skipWs();
      if (c === 125) fail('trailing comma is not allowed', pos + 1);
      continue;
    }
    if (c === 125) {
      pos++;
      depth--;
      return obj;
    }
    return fail('unexpected character', pos);
  }
}

/**
 * A copy of `s` that does not keep the source text alive. V8 represents a slice of 13 or more
 * characters as a view into its parent, so a string value kept from a parsed record would pin
 * the whole line; the concatenation is flattened into a fresh string by `slice`. Keys need no
 * copy: V8 internalizes property names.
 */
function detach(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

function parseString(): string {
  const start = ++pos;
  while (pos < len) {
    const c = src.charCodeAt(pos);
    if (c === 34) return src.slice(start, pos++);
    if (c === 92 || c < 32) break;
    pos++;
  }
  return parseStringSlow(start);
}

function parseStringSlow(start: number): string {
  let out = '';
  let chunk = start;
  for (;;) {
    if (pos >= len) fail('unexpected end of data', len);
    const c = src.charCodeAt(pos);
    if (c === 34) {
      out += src.slice(chunk, pos++);
      return out;
    }
    if (c < 32) fail('unexpected control character in string', pos);
    if (c !== 92) {
      pos++;
      continue;
    }
    out += src.slice(chunk, pos);
    const backslash = pos++;
    if (pos >= len) fail('unexpected end of data', len);
    switch (src.charCodeAt(pos)) {
      case 34:
        out += '"';
        break;
      case 92:
        out += '\\';
        break;
      case 47:
        out += '/';
        break;
      case 98:
        out += '\b';
        break;
      case 102:
        out += '\f';
        break;
      case 110:
        out += '\n';
        break;
      case 114:
        out += '\r';
        break;
      case 116:
        out += '\t';
        break;
      case 117: {
        const hi = hex4(pos + 1);
        if (hi < 0) fail('invalid escaped unicode in string', backslash);
        pos += 4;
        if (hi >= 0xd800 && hi <= 0xdbff) {
          const next = pos + 1;
          if (next >= len) fail('unexpected end of data', len);
          const lo = src.charCodeAt(next) === 92 && src.charCodeAt(next + 1) === 117 ? hex4(next + 2) : -1;
          if (lo < 0) fail('no matched low surrogate in string', next);
          if (lo < 0xdc00 || lo > 0xdfff) fail('invalid low surrogate in string', next);
          out += String.fromCharCode(hi, lo);
          pos += 6;
        } else if (hi >= 0xdc00 && hi <= 0xdfff) {
          fail('invalid high surrogate in string', backslash);
        } else {
          out += String.fromCharCode(hi);
        }
        break;
      }
      default:
        fail('invalid escaped character in string', pos);
    }
    chunk = ++pos;
  }
}

/** Value of the four hex digits at `at`, or -1. */
function hex4(at: number): number {
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const c = src.charCodeAt(at + k);
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (c >= 97 && c <= 102) d = c - 87;
    else if (c >= 65 && c <= 70) d = c - 55;
    else return -1;
    v = (v << 4) | d;
  }
  return v;
}

/** `c` is the character at `pos`: a digit or '-'. */
function parseNumber(c: number): number | bigint | JsonFloat {
  const start = pos;
  let neg = false;
  if (c === 45) {
    neg = true;
    c = src.charCodeAt(++pos);
    if (!(c >= 48 && c <= 57)) fail('no digit after minus sign', start);
  }
  const intStart = pos;
  let m = 0;
  if (c === 48) {
    c = src.charCodeAt(++pos);
    if (c >= 48 && c <= 57) fail('number with leading zero is not allowed', pos - 1);
  } else {
    do {
      m = m * 10 + (c - 48);
      c = src.charCodeAt(++pos);
    } while (c >= 48 && c <= 57);
  }
  const intDigits = pos - intStart;
  if (c !== 46 && c !== 101 && c !== 69) {
    if (intDigits <= 15) return neg ? (m === 0 ? 0 : -m) : m;
    return bigInteger(start);
  }
  return parseFloatTail(start, c, m, neg, intDigits);
}

/** An integer literal of 16 or more digits at src[start, pos). */
function bigInteger(start: number): number | bigint | JsonFloat {
  const text = src.slice(start, pos);
  const b = BigInt(text);
  if (b >= -MAX_SAFE_BIG && b <= MAX_SAFE_BIG) return Number(b);
  if (b >= MIN_I64 && b <= MAX_U64) return b;
  // Outside the 64-bit range orjson parses the literal as a float.
  const x = Number(text);
  if (x === Infinity || x === -Infinity) fail('number is infinity when parsed as double', start);
  return new JsonFloat(x);
}

/**
 * Fraction and exponent of a float literal; `c` is the '.', 'e' or 'E' at `pos`, `m` the
 * value of the `intDigits` integer digits (exact when there are at most 15).
 */
function parseFloatTail(start: number, c: number, m: number, neg: boolean, intDigits: number): number | JsonFloat {
  let exact = intDigits <= 15;
  let fracDigits = 0;
  if (c === 46) {
    c = src.charCodeAt(++pos);
    // yyjson reports this at the '.', or after it once the integer part exceeds 18 digits.
    if (!(c >= 48 && c <= 57)) fail('no digit after decimal point', intDigits > 18 ? pos : pos - 1);
    do {
      if (exact) {
        if (m < ACC_LIMIT) {
          m = m * 10 + (c - 48);
          fracDigits++;
        } else {
          exact = false;
        }
      }
      c = src.charCodeAt(++pos);
    } while (c >= 48 && c <= 57);
  }
  let exp = 0;
  if (c === 101 || c === 69) {
    c = src.charCodeAt(++pos);
    let expNeg = false;
    if (c === 43 || c === 45) {
      expNeg = c === 45;
      c = src.charCodeAt(++pos);
    }
    if (!(c >= 48 && c <= 57)) fail('no digit after exponent sign', pos - 1);
    do {
      if (exp < 100000) exp = exp * 10 + (c - 48);
      c = src.charCodeAt(++pos);
    } while (c >= 48 && c <= 57);
    if (expNeg) exp = -exp;
  }
  let x = exact ? fastDecimal(m, exp - fracDigits, neg) : undefined;
  if (x === undefined) {
    // ECMAScript's StringToNumber is correctly rounded, like yyjson's reader.
    x = Number(src.slice(start, pos));
    if (x === Infinity || x === -Infinity) fail('number is infinity when parsed as double', start);
  }
  return Number.isInteger(x) ? new JsonFloat(x) : x;
}

function fail(reason: string, at: number): never {
  if (at >= len) {
    // yyjson reports every failure at the end of the input as truncation.
    reason = 'unexpected end of data';
    at = len;
  }
  throw decodeError(reason, src, at);
}

/**
 * A JSONDecodeError the way Python formats it: line, column and char offset are counted in
 * code points of `doc` up to the UTF-16 index `at`.
 */
function decodeError(reason: string, doc: string, at: number): TokcapError {
  let cp = 0;
  let line = 1;
  let lastNewline = -1;
  for (let i = 0; i < at; i++) {
    const c = doc.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const p = doc.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) continue;
    }
    if (c === 10) {
      line++;
      lastNewline = cp;
    }
    cp++;
  }
  const message = `${reason}: line ${line} column ${cp - lastNewline} (char ${cp})`;
  return new TokcapError('corrupt', message, { pyClass: 'JSONDecodeError' });
}
