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
 * string runs without building them character by character. Each document gets a parser
 * object of its own, which holds the cursor.
 */
import { TokcapError } from '../errors.js';
import { ACC_LIMIT, fastDecimal } from './decimal.js';
import { MAX_JSON_DEPTH } from './json-limits.js';
import type { IdArrayTexts } from './id-texts.js';
import { FastJsonParser, NOT_FAST } from './parse-json-fast.js';
import { JsonFloat, type JsonObject, type JsonValue } from './value.js';
import { isWellFormed } from './well-formed.js';

export { MAX_JSON_DEPTH, isWellFormed };

const MAX_SAFE = 9007199254740991;
const MIN_I64 = -(2n ** 63n);
const MAX_U64 = 2n ** 64n - 1n;
const MAX_SAFE_BIG = BigInt(MAX_SAFE);

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parses one JSON document from a string. */
export function parseJson(text: string): JsonValue {
  if (!isWellFormed(text)) {
    // orjson encodes a str argument to UTF-8 first and fails on lone surrogates at char 0.
    throw decodeError('str is not valid UTF-8: surrogates not allowed', text, 0);
  }
  return new StrictJsonParser(text).document();
}

/**
 * Parses one JSON document from UTF-8 bytes (invalid UTF-8 and a BOM are errors). For the lines
 * of a file, a `JsonBytesReader` kept for the file is faster.
 */
export function parseJsonBytes(bytes: Uint8Array): JsonValue {
  return new JsonBytesReader().read(bytes);
}

/**
 * Reads JSON documents from UTF-8 bytes one after the other, in one thread: the lines of one
 * file. The byte parser (parse-json-fast.ts) takes ordinary documents and remembers what the
 * next line is likely to repeat (a prompt's id runs, the keys); whatever it gives up on is read
 * by the strict parser. Both give the same values.
 */
export class JsonBytesReader {
  private readonly fast = new FastJsonParser();

  /**
   * Arrays of the last document `read` known to hold only non-negative integers below 10^15,
   * as plain numbers (the token ids of a record, as the byte parser made them): a caller that
   * validates the value before changing it need not check them again. Possibly not all such
   * arrays; none when the strict parser read the document.
   */
  get idArrays(): readonly JsonValue[][] {
    return this.fast.idArrays;
  }

  /**
   * While set, the text of the id arrays the byte parser reads, when it is their canonical form,
   * is kept there: views of the bytes read, valid while those are (id-texts.ts).
   */
  set idTexts(texts: IdArrayTexts | undefined) {
    this.fast.idTexts = texts;
  }

  /** `parseJsonBytes(bytes)`. */
  read(bytes: Uint8Array): JsonValue {
    const fast = this.fast.parse(bytes);
    if (fast !== NOT_FAST) return fast;
    let text: string;
    try {
      text = utf8Decoder.decode(bytes);
    } catch {
      throw decodeError('str is not valid UTF-8: surrogates not allowed', '', 0);
    }
    return new StrictJsonParser(text).document();
  }
}

/**
 * Parses the documents of `parseJson` and `parseJsonBytes`' strict lane: one object per
 * document, which holds its cursor (it never calls out to user code, so it is not re-entered).
 */
class StrictJsonParser {
  private pos = 0;
  private depth = 0;
  private readonly len: number;

  constructor(private readonly src: string) {
    this.len = src.length;
  }

  document(): JsonValue {
    const text = this.src;
    if (text.length === 0) throw decodeError('input length is 0', text, 0);
    if (text.charCodeAt(0) === 0xfeff) throw decodeError('byte order mark (BOM) is not supported', text, 0);
    const c = this.skipWs();
    if (this.pos >= this.len) throw decodeError('input data is empty', text, 0);
    const value = this.parseValue(c);
    this.skipWs();
    if (this.pos < this.len) this.fail('unexpected content after document', this.pos);
    return value;
  }

  private skipWs(): number {
    let c = this.src.charCodeAt(this.pos);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = this.src.charCodeAt(++this.pos);
    return c;
  }

  /** `c` is the character at `this.pos` (NaN at the end of the input). */
  private parseValue(c: number): JsonValue {
    if ((c >= 48 && c <= 57) || c === 45) return this.parseNumber(c);
    switch (c) {
      case 34:
        return detach(this.parseString());
      case 123:
        return this.parseObject();
      case 91:
        return this.parseArray();
      case 116:
        return this.parseLiteral('true', true);
      case 102:
        return this.parseLiteral('false', false);
      case 110:
        return this.parseLiteral('null', null);
      default:
        return this.fail('unexpected character', this.pos);
    }
  }

  private parseLiteral<T extends JsonValue>(word: string, value: T): T {
    if (this.src.startsWith(word, this.pos)) {
      this.pos += word.length;
      return value;
    }
    return this.fail('invalid literal', this.pos);
  }

  private parseArray(): JsonValue[] {
    const open = this.pos++;
    if (++this.depth > MAX_JSON_DEPTH) this.fail('recursion limit exceeded', open);
    const arr: JsonValue[] = [];
    let c = this.skipWs();
    if (c === 93) {
      this.pos++;
      this.depth--;
      return arr;
    }
    for (;;) {
      if (c >= 48 && c <= 57) {
        // Token ids: a short non-negative integer is accumulated right here; anything else (a
        // leading zero, 16+ digits, a fraction or exponent) is re-read by parseNumber.
        const start = this.pos;
        let m = c - 48;
        c = this.src.charCodeAt(++this.pos);
        if (m !== 0) {
          // At most 16 digits here: a longer literal is parseNumber's.
          while (c >= 48 && c <= 57 && this.pos - start < 16) {
            m = m * 10 + (c - 48);
            c = this.src.charCodeAt(++this.pos);
          }
        }
        if (this.pos - start > 15 || c === 46 || c === 101 || c === 69 || (c >= 48 && c <= 57)) {
          this.pos = start;
          arr.push(this.parseNumber(this.src.charCodeAt(start)));
          c = this.src.charCodeAt(this.pos);
        } else {
          arr.push(m);
        }
      } else {
        arr.push(c === 45 ? this.parseNumber(c) : this.parseValue(c));
        c = this.src.charCodeAt(this.pos);
      }
      if (c === 44) {
        c = this.src.charCodeAt(++this.pos);
        if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
        if (c === 93) this.fail('trailing comma is not allowed', this.pos + 1);
        continue;
      }
      if (c === 93) {
        this.pos++;
        this.depth--;
        return arr;
      }
      if (c === 32 || c === 10 || c === 13 || c === 9) {
        c = this.skipWs();
        if (c === 44) {
          c = this.src.charCodeAt(++this.pos);
          if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
          if (c === 93) this.fail('trailing comma is not allowed', this.pos + 1);
          continue;
        }
        if (c === 93) {
          this.pos++;
          this.depth--;
          return arr;
        }
      }
      return this.fail('unexpected character', this.pos);
    }
  }

  private parseObject(): JsonObject {
    const open = this.pos++;
    if (++this.depth > MAX_JSON_DEPTH) this.fail('recursion limit exceeded', open);
    const obj: JsonObject = {};
    let c = this.skipWs();
    if (c === 125) {
      this.pos++;
      this.depth--;
      return obj;
    }
    for (;;) {
      if (c !== 34) this.fail('unexpected character', this.pos);
      const key = this.parseString();
      c = this.src.charCodeAt(this.pos);
      if (c !== 58) {
        c = this.skipWs();
        if (c !== 58) this.fail('unexpected character', this.pos);
      }
      c = this.src.charCodeAt(++this.pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
      const value = this.parseValue(c);
      if (key === '__proto__') {
        Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
      } else {
        obj[key] = value;
      }
      c = this.src.charCodeAt(this.pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
      if (c === 44) {
        this.pos++;
        c = this.skipWs();
        if (c === 125) this.fail('trailing comma is not allowed', this.pos + 1);
        continue;
      }
      if (c === 125) {
        this.pos++;
        this.depth--;
        return obj;
      }
      return this.fail('unexpected character', this.pos);
    }
  }

  private parseString(): string {
    const start = ++this.pos;
    while (this.pos < this.len) {
      const c = this.src.charCodeAt(this.pos);
      if (c === 34) return this.src.slice(start, this.pos++);
      if (c === 92 || c < 32) break;
      this.pos++;
    }
    return this.parseStringSlow(start);
  }

  private parseStringSlow(start: number): string {
    if (this.tornString()) this.fail('unexpected end of data', this.len);
    let out = '';
    let chunk = start;
    for (;;) {
      if (this.pos >= this.len) this.fail('unexpected end of data', this.len);
      const c = this.src.charCodeAt(this.pos);
      if (c === 34) {
        out += this.src.slice(chunk, this.pos++);
        return out;
      }
      if (c < 32) this.fail('unexpected control character in string', this.pos);
      if (c !== 92) {
        this.pos++;
        continue;
      }
      out += this.src.slice(chunk, this.pos);
      const backslash = this.pos++;
      if (this.pos >= this.len) this.fail('unexpected end of data', this.len);
      switch (this.src.charCodeAt(this.pos)) {
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
          const hi = this.hex4(this.pos + 1);
          if (hi < 0) this.fail('invalid escaped unicode in string', backslash);
          this.pos += 4;
          if (hi >= 0xd800 && hi <= 0xdbff) {
            const next = this.pos + 1;
            if (next >= this.len) this.fail('unexpected end of data', this.len);
            const lo =
              this.src.charCodeAt(next) === 92 && this.src.charCodeAt(next + 1) === 117 ? this.hex4(next + 2) : -1;
            if (lo < 0) this.fail('no matched low surrogate in string', next);
            if (lo < 0xdc00 || lo > 0xdfff) this.fail('invalid low surrogate in string', next);
            out += String.fromCharCode(hi, lo);
            this.pos += 6;
          } else if (hi >= 0xdc00 && hi <= 0xdfff) {
            this.fail('invalid high surrogate in string', backslash);
          } else {
            out += String.fromCharCode(hi);
          }
          break;
        }
        default:
          this.fail('invalid escaped character in string', this.pos);
      }
      chunk = ++this.pos;
    }
  }

  /**
   * True when the string from `this.pos` runs to the end of the input with only plain characters
   * and simple escapes: a torn string, whose error is known without building its value (one
   * string piece per escape made a torn tail of escapes cost ~10x its reading).
   */
  private tornString(): boolean {
    const src = this.src;
    const len = this.len;
    for (let p = this.pos; p < len; p++) {
      const c = src.charCodeAt(p);
      if (c === 34 || c < 32) return false;
      if (c === 92) {
        const e = src.charCodeAt(++p);
        // " \ / b f n r t; \u and anything else are the building loop's to judge.
        if (!(e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116))
          return p >= len;
      }
    }
    return true;
  }

  /** Value of the four hex digits at `at`, or -1. */
  private hex4(at: number): number {
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.src.charCodeAt(at + k);
      let d: number;
      if (c >= 48 && c <= 57) d = c - 48;
      else if (c >= 97 && c <= 102) d = c - 87;
      else if (c >= 65 && c <= 70) d = c - 55;
      else return -1;
      v = (v << 4) | d;
    }
    return v;
  }

  /** `c` is the character at `this.pos`: a digit or '-'. */
  private parseNumber(c: number): number | bigint | JsonFloat {
    const start = this.pos;
    let neg = false;
    if (c === 45) {
      neg = true;
      c = this.src.charCodeAt(++this.pos);
      if (!(c >= 48 && c <= 57)) this.fail('no digit after minus sign', start);
    }
    const intStart = this.pos;
    let m = 0;
    if (c === 48) {
      c = this.src.charCodeAt(++this.pos);
      if (c >= 48 && c <= 57) this.fail('number with leading zero is not allowed', this.pos - 1);
    } else {
      // m is exact up to 15 digits and used only then; past 16 the digits are only skipped.
      do {
        m = m * 10 + (c - 48);
        c = this.src.charCodeAt(++this.pos);
      } while (c >= 48 && c <= 57 && this.pos - intStart < 16);
      if (c >= 48 && c <= 57) c = this.skipDigits();
    }
    const intDigits = this.pos - intStart;
    if (c !== 46 && c !== 101 && c !== 69) {
      if (intDigits <= 15) return neg ? (m === 0 ? 0 : -m) : m;
      return this.bigInteger(start);
    }
    return this.parseFloatTail(start, c, m, neg, intDigits);
  }

  /** Past a run of digits (a local cursor: the loop of a long literal); the character after it. */
  private skipDigits(): number {
    const src = this.src;
    let p = this.pos;
    let c = src.charCodeAt(p);
    while (c >= 48 && c <= 57) c = src.charCodeAt(++p);
    this.pos = p;
    return c;
  }

  /** An integer literal of 16 or more digits at this.src[start, this.pos). */
  private bigInteger(start: number): number | bigint | JsonFloat {
    const text = this.src.slice(start, this.pos);
    // More than 20 digits (a sign aside) is outside the 64-bit range: a float, read in linear
    // time. BigInt of a long literal costs ~0.3 s per MB, the price of a torn tail of digits.
    const b = this.pos - start - (text.charCodeAt(0) === 45 ? 1 : 0) > 20 ? undefined : BigInt(text);
    if (b === undefined) return this.outOfRangeInteger(text, start);
    if (b >= -MAX_SAFE_BIG && b <= MAX_SAFE_BIG) return Number(b);
    if (b >= MIN_I64 && b <= MAX_U64) return b;
    return this.outOfRangeInteger(text, start);
  }

  /** Outside the 64-bit range orjson parses an integer literal as a float. */
  private outOfRangeInteger(text: string, start: number): JsonFloat {
    // 310 digits or more is at least 10^309, past the largest double, without converting them.
    const x = text.length > 310 ? Infinity : Number(text);
    if (x === Infinity || x === -Infinity) this.fail('number is infinity when parsed as double', start);
    return new JsonFloat(x);
  }

  /**
   * Fraction and exponent of a float literal; `c` is the '.', 'e' or 'E' at `this.pos`, `m` the
   * value of the `intDigits` integer digits (exact when there are at most 15).
   */
  private parseFloatTail(start: number, c: number, m: number, neg: boolean, intDigits: number): number | JsonFloat {
    let exact = intDigits <= 15;
    let fracDigits = 0;
    if (c === 46) {
      c = this.src.charCodeAt(++this.pos);
      // yyjson reports this at the '.', or after it once the integer part exceeds 18 digits.
      if (!(c >= 48 && c <= 57)) this.fail('no digit after decimal point', intDigits > 18 ? this.pos : this.pos - 1);
      do {
        if (exact) {
          if (m < ACC_LIMIT) {
            m = m * 10 + (c - 48);
            fracDigits++;
          } else {
            exact = false;
          }
        }
        c = this.src.charCodeAt(++this.pos);
      } while (c >= 48 && c <= 57);
    }
    let exp = 0;
    if (c === 101 || c === 69) {
      c = this.src.charCodeAt(++this.pos);
      let expNeg = false;
      if (c === 43 || c === 45) {
        expNeg = c === 45;
        c = this.src.charCodeAt(++this.pos);
      }
      if (!(c >= 48 && c <= 57)) this.fail('no digit after exponent sign', this.pos - 1);
      do {
        if (exp < 100000) exp = exp * 10 + (c - 48);
        c = this.src.charCodeAt(++this.pos);
      } while (c >= 48 && c <= 57);
      if (expNeg) exp = -exp;
    }
    let x = exact ? fastDecimal(m, exp - fracDigits, neg) : undefined;
    if (x === undefined) {
      // ECMAScript's StringToNumber is correctly rounded, like yyjson's reader.
      x = Number(this.src.slice(start, this.pos));
      if (x === Infinity || x === -Infinity) this.fail('number is infinity when parsed as double', start);
    }
    return Number.isInteger(x) ? new JsonFloat(x) : x;
  }

  private fail(reason: string, at: number): never {
    if (at >= this.len) {
      // yyjson reports every failure at the end of the input as truncation.
      reason = 'unexpected end of data';
      at = this.len;
    }
    throw decodeError(reason, this.src, at);
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
