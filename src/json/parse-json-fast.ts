/**
 * The fast lane of `parseJsonBytes` (parse-json.ts): parses UTF-8 bytes directly, without
 * decoding the line to a string first, and gives up (returns NOT_FAST) on anything unusual:
 * every syntax error, escapes it cannot prove harmless, integers of 16+ digits, infinities,
 * deep nesting, invalid UTF-8. The strict parser then reads the line again and produces the
 * value or the exact orjson error. So this lane only has to be right when it succeeds, and
 * when it succeeds its value is the strict parser's (same kinds: number, bigint never,
 * JsonFloat for integral floats, own data keys, last duplicate wins).
 *
 * Why it is faster: JSONL records are mostly long arrays of token ids. Reading bytes instead of
 * a decoded string, and collecting an integer array in a reused Float64Array before creating
 * the JS array at its final length (instead of growing it by push), takes about a third of the
 * time of JSON.parse on such arrays.
 *
 * Its state (the cursor, the remembered id runs, the key cache) belongs to one `FastJsonParser`,
 * which its owner keeps for the lines of one file: a prompt repeats the previous line's prompt
 * and generation, which the remembered runs take without parsing them again. One parser is
 * used by one thread, for one document at a time.
 */
import { isUtf8 } from 'node:buffer';
import { ACC_LIMIT, fastDecimal } from './decimal.js';
import { MAX_JSON_DEPTH } from './json-limits.js';
import type { IdArrayTexts } from './id-texts.js';
import { isWellFormed } from './well-formed.js';
import { JsonFloat, type JsonObject, type JsonValue } from './value.js';

/** Returned when the strict parser has to decide. */
export const NOT_FAST: unique symbol = Symbol('not-fast');

class Bail {}
const BAIL = new Bail();

/**
 * Runs of token ids from this many elements on are remembered (below): prompts, and long
 * generations; short runs would only push a prompt out.
 */
const MEMO_MIN = 256;
/** Longer runs are not remembered: their text copy would stay allocated after them. */
const MEMO_MAX = 1 << 20;

const EMPTY = Buffer.alloc(0);

/**
 * A run of integer elements as parsed: `values[i]` and the offset, from the run's first byte, of
 * the comma after element i (`ends[i]`), with a copy of the run's text up to its last comma
 * when remembered (`count` elements).
 */
class RunSlot {
  // Allocated on the first run (a parser is made for each file, many of them small).
  values = new Float64Array(0);
  ends = new Uint32Array(0);
  text: Buffer = EMPTY;
  count = 0;

  grow(): void {
    const size = Math.max(1024, this.values.length * 2);
    const values = new Float64Array(size);
    values.set(this.values);
    const ends = new Uint32Array(size);
    ends.set(this.ends);
    this.values = values;
    this.ends = ends;
  }

  remember(b: Buffer, start: number, count: number): void {
    const size = count > 0 ? this.ends[count - 1] + 1 : 0;
    if (this.text.length < size) {
      const text = Buffer.allocUnsafeSlow(size + (size >> 1));
      this.text = text;
    }
    b.copy(this.text, 0, start, start + size);
    this.count = count;
  }

  forget(): void {
    this.count = 0;
    this.text = EMPTY;
  }
}

/**
 * How many of `slot`'s remembered elements, with the comma after each, `b` repeats from `at`.
 * Equal bytes parse to equal ids, so those need not be parsed again.
 */
function sharedElements(slot: RunSlot, b: Buffer, at: number): number {
  const count = slot.count;
  if (count === 0) return 0;
  const text = slot.text;
  const size = slot.ends[count - 1] + 1;
  const avail = Math.min(size, b.length - at);
  // The common prefix: whole blocks with the native compare, then bytes.
  let same = 0;
  const BLOCK = 1024;
  while (same + BLOCK <= avail && b.compare(text, same, same + BLOCK, at + same, at + same + BLOCK) === 0)
    same += BLOCK;
  const stop = Math.min(avail, same + BLOCK);
  while (same < stop && b[at + same] === text[same]) same++;
  // Elements whose comma is inside the common prefix.
  const ends = slot.ends;
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ends[mid] < same) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Recent object keys by a hash of their bytes: records repeat the same two dozen keys, and a
 * key met before is returned as the same string (no new string, and one V8 has already
 * internalized as a property name).
 */
const KEY_SLOTS = 256;

export class FastJsonParser {
  private buf: Buffer = EMPTY;
  private len = 0;
  private pos = 0;
  private depth = 0;
  /** undefined: not checked yet for this document. */
  private validUtf8: boolean | undefined;
  /** Two remembered runs, most recently used first (a prompt and a generation), and a work slot. */
  private readonly memo: RunSlot[] = [new RunSlot(), new RunSlot()];
  private work = new RunSlot();
  private readonly keyCache: (string | undefined)[] = new Array<string | undefined>(KEY_SLOTS).fill(undefined);
  /**
   * The arrays of the last document parsed whose every element was taken by an id run: each
   * holds only integers from 0 to 10^15 - 1 (plain numbers), as made here. Empty after NOT_FAST.
   */
  readonly idArrays: JsonValue[][] = [];
  /** While set, the canonical text of such arrays is added there (id-texts.ts). */
  idTexts: IdArrayTexts | undefined;

  /** The document's value, or NOT_FAST when the strict parser has to decide. */
  parse(bytes: Uint8Array): JsonValue | typeof NOT_FAST {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.len = this.buf.length;
    this.pos = 0;
    this.depth = 0;
    this.validUtf8 = undefined;
    this.idArrays.length = 0;
    try {
      let c = this.skipWs();
      if (this.pos >= this.len) return this.notFast();
      const value = this.parseValue(c);
      c = this.skipWs();
      if (this.pos < this.len) return this.notFast();
      return value;
    } catch (e) {
      if (e === BAIL) return this.notFast();
      throw e;
    } finally {
      this.buf = EMPTY;
    }
  }

  private notFast(): typeof NOT_FAST {
    this.idArrays.length = 0;
    return NOT_FAST;
  }

  private skipWs(): number {
    let c = this.buf[this.pos];
    while (c === 32 || c === 10 || c === 13 || c === 9) c = this.buf[++this.pos];
    return c;
  }

  private parseValue(c: number): JsonValue {
    if ((c >= 48 && c <= 57) || c === 45) return this.parseNumber(c);
    switch (c) {
      case 34:
        return this.parseString();
      case 123:
        return this.parseObject();
      case 91:
        return this.parseArray();
      case 116:
        return this.literal(0x74, 0x72, 0x75, 0x65) ? true : bail();
      case 102:
        if (
          this.buf[this.pos + 1] === 0x61 &&
          this.buf[this.pos + 2] === 0x6c &&
          this.buf[this.pos + 3] === 0x73 &&
          this.buf[this.pos + 4] === 0x65
        ) {
          this.pos += 5;
          return false;
        }
        return bail();
      case 110:
        return this.literal(0x6e, 0x75, 0x6c, 0x6c) ? null : bail();
      default:
        return bail();
    }
  }

  private literal(a: number, b: number, c: number, d: number): boolean {
    if (
      this.buf[this.pos] === a &&
      this.buf[this.pos + 1] === b &&
      this.buf[this.pos + 2] === c &&
      this.buf[this.pos + 3] === d
    ) {
      this.pos += 4;
      return true;
    }
    return false;
  }

  private parseArray(): JsonValue[] {
    const open = this.pos;
    this.pos++;
    if (++this.depth > MAX_JSON_DEPTH) bail();
    let c = this.skipWs();
    if (c === 93) {
      this.pos++;
      this.depth--;
      return [];
    }
    // Token ids: short non-negative integers separated by bare commas, collected in a run slot.
    let n = 0;
    // Where the run stopped: at the start of an element (after a comma, or one the run could
    // not take), or after a complete element.
    let atElement = true;
    let afterComma = false;
    // Locals, not the parser's fields: this loop is where the time goes.
    const b = this.buf;
    let p = this.pos;
    const runStart = p;
    let slot = this.work;
    if (c >= 48 && c <= 57) {
      // Ids this run shares, byte for byte and up to a comma, with a remembered run are taken
      // from it: a prompt repeats the previous call's prompt and generation.
      for (let s = 0; s < this.memo.length; s++) {
        const k = sharedElements(this.memo[s], b, p);
        if (k > 0) {
          slot = this.memo[s];
          n = k;
          p += slot.ends[k - 1] + 1;
          c = b[p];
          afterComma = true;
          break;
        }
      }
    }
    let out = slot.values;
    let ends = slot.ends;
    while (c >= 48 && c <= 57) {
      const start = p;
      let m = c - 48;
      c = b[++p];
      if (m !== 0) {
        // At most 16 digits: a longer literal is the strict parser's.
        while (c >= 48 && c <= 57 && p - start < 16) {
          m = m * 10 + (c - 48);
          c = b[++p];
        }
      }
      if (p - start > 15 || c === 46 || c === 101 || c === 69 || (c >= 48 && c <= 57)) {
        p = start;
        c = b[p];
        break;
      }
      if (n === out.length) {
        slot.grow();
        out = slot.values;
        ends = slot.ends;
      }
      out[n++] = m;
      if (c === 44) {
        ends[n - 1] = p - runStart;
        c = b[++p];
        afterComma = true;
        continue;
      }
      afterComma = false;
      atElement = false;
      break;
    }
    // Elements followed by a comma are remembered with their text (all but a last complete one).
    this.keepRun(slot, b, runStart, atElement ? n : n - 1);
    this.pos = p;
    if (n === 0) return this.parseOtherArray(c);
    const arr = new Array<JsonValue>(n);
    for (let i = 0; i < n; i++) arr[i] = out[i];
    if (!atElement) {
      if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
      if (c === 93) {
        // No space after `[` or before `]`: the text is the ids' canonical form (id-texts.ts).
        if (this.idTexts !== undefined && runStart === open + 1 && this.pos === p)
          this.idTexts.add(arr, b.subarray(open, p + 1));
        this.pos++;
        this.depth--;
        this.idArrays.push(arr);
        return arr;
      }
      if (c !== 44) bail();
      c = this.buf[++this.pos];
      afterComma = true;
    }
    if (afterComma) {
      if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
      if (c === 93) bail();
    }
    for (;;) {
      arr.push(this.parseValue(c));
      c = this.afterMember(93);
      if (c < 0) return arr;
    }
  }

  /**
   * An array of anything but ids (log probs, items, strings), `c` its first byte: an array literal
   * of its own. Allocation feedback is per site: had these shared the id arrays' site, an array of
   * objects pushed onto it would make V8 create every later id array with generic elements, and
   * the run would stay up to 1.7x slower, depending on when the optimizing compiler looked.
   */
  private parseOtherArray(c: number): JsonValue[] {
    const any: JsonValue[] = [];
    for (;;) {
      any.push(this.parseValue(c));
      c = this.afterMember(93);
      if (c < 0) return any;
    }
  }

  /**
   * Remembers the run of ids just read in `slot` (its first `commas` elements, with their text
   * from `runStart`), the most recently matched first: the work slot's run becomes the newest
   * memo when long enough, and the memo matched least recently becomes the work slot.
   */
  private keepRun(slot: RunSlot, b: Buffer, runStart: number, commas: number): void {
    if (slot === this.work) {
      if (commas >= MEMO_MIN && commas <= MEMO_MAX) {
        slot.remember(b, runStart, commas);
        this.work = this.memo[this.memo.length - 1];
        this.memo.pop();
        this.memo.unshift(slot);
      }
    } else {
      if (commas <= MEMO_MAX) slot.remember(b, runStart, commas);
      else slot.forget();
      if (this.memo[0] !== slot) {
        this.memo.splice(this.memo.indexOf(slot), 1);
        this.memo.unshift(slot);
      }
    }
  }

  /**
   * After an array element or object member: the first byte of the next one (past a comma), or -1
   * once the closing bracket `close` is consumed. Anything else, or a comma right before `close`,
   * is for the strict parser.
   */
  private afterMember(close: number): number {
    let c = this.buf[this.pos];
    if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
    if (c === 44) {
      c = this.buf[++this.pos];
      if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
      if (c === close) bail();
      return c;
    }
    if (c === close) {
      this.pos++;
      this.depth--;
      return -1;
    }
    return bail();
  }

  private parseObject(): JsonObject {
    this.pos++;
    if (++this.depth > MAX_JSON_DEPTH) bail();
    const obj: JsonObject = {};
    let c = this.skipWs();
    if (c === 125) {
      this.pos++;
      this.depth--;
      return obj;
    }
    for (;;) {
      if (c !== 34) bail();
      const key = this.parseKey();
      c = this.buf[this.pos];
      if (c !== 58) {
        c = this.skipWs();
        if (c !== 58) bail();
      }
      c = this.buf[++this.pos];
      if (c === 32 || c === 10 || c === 13 || c === 9) c = this.skipWs();
      const value = this.parseValue(c);
      if (key === '__proto__') {
        Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
      } else {
        obj[key] = value;
      }
      c = this.afterMember(125);
      if (c < 0) return obj;
    }
  }

  /** An object key: plain ASCII keys through the cache, anything else as `parseString`. */
  private parseKey(): string {
    const b = this.buf;
    const start = this.pos + 1;
    let p = start;
    let h = 0;
    for (;;) {
      const c = b[p];
      if (c === 34) break;
      // Escapes, control bytes, non-ASCII and the end of the input: the general path decides.
      if (!(c >= 32 && c < 128) || c === 92) return this.parseString();
      h = (h * 31 + c) | 0;
      p++;
    }
    const n = p - start;
    const slot = (h ^ n) & (KEY_SLOTS - 1);
    const cached = this.keyCache[slot];
    this.pos = p + 1;
    if (cached !== undefined && cached.length === n) {
      let i = 0;
      while (i < n && cached.charCodeAt(i) === b[start + i]) i++;
      if (i === n) return cached;
    }
    const key = b.toString('latin1', start, p);
    this.keyCache[slot] = key;
    return key;
  }

  private parseString(): string {
    const start = ++this.pos;
    let ascii = true;
    for (;;) {
      if (this.pos >= this.len) bail();
      const c = this.buf[this.pos];
      if (c === 34) break;
      if (c < 32) bail();
      if (c === 92) return this.parseEscapedString(start);
      if (c >= 0x80) ascii = false;
      this.pos++;
    }
    const end = this.pos++;
    if (ascii) return this.buf.toString('latin1', start, end);
    if (this.validUtf8 === undefined) this.validUtf8 = isUtf8(this.buf);
    if (!this.validUtf8) bail();
    return this.buf.toString('utf8', start, end);
  }

  /**
   * A string with a backslash: its literal is handed to JSON.parse, whose string grammar is the
   * same as orjson's except that it accepts escaped lone surrogates, which orjson refuses.
   */
  private parseEscapedString(start: number): string {
    for (;;) {
      if (this.pos >= this.len) bail();
      const c = this.buf[this.pos];
      if (c === 34) break;
      if (c < 32) bail();
      this.pos += c === 92 ? 2 : 1;
    }
    const end = this.pos++;
    if (this.validUtf8 === undefined) this.validUtf8 = isUtf8(this.buf);
    if (!this.validUtf8) bail();
    let s: string;
    try {
      s = JSON.parse(this.buf.toString('utf8', start - 1, end + 1)) as string;
    } catch {
      return bail();
    }
    if (!isWellFormed(s)) bail();
    return s;
  }

  /** Mirrors the strict parser's number rules; hands anything beyond 15 integer digits back. */
  private parseNumber(c: number): number | JsonFloat {
    const start = this.pos;
    let neg = false;
    if (c === 45) {
      neg = true;
      c = this.buf[++this.pos];
      if (!(c >= 48 && c <= 57)) bail();
    }
    const intStart = this.pos;
    let m = 0;
    if (c === 48) {
      c = this.buf[++this.pos];
      if (c >= 48 && c <= 57) bail();
    } else {
      do {
        m = m * 10 + (c - 48);
        c = this.buf[++this.pos];
      } while (c >= 48 && c <= 57 && this.pos - intStart < 16);
    }
    const intDigits = this.pos - intStart;
    // 16 digits or more: the strict parser's, without reading the rest here.
    if (intDigits > 15) bail();
    if (c !== 46 && c !== 101 && c !== 69) return neg ? (m === 0 ? 0 : -m) : m;
    let exact = true;
    let fracDigits = 0;
    if (c === 46) {
      c = this.buf[++this.pos];
      if (!(c >= 48 && c <= 57)) bail();
      do {
        if (exact) {
          if (m < ACC_LIMIT) {
            m = m * 10 + (c - 48);
            fracDigits++;
          } else {
            exact = false;
          }
        }
        c = this.buf[++this.pos];
      } while (c >= 48 && c <= 57);
    }
    let exp = 0;
    if (c === 101 || c === 69) {
      c = this.buf[++this.pos];
      let expNeg = false;
      if (c === 43 || c === 45) {
        expNeg = c === 45;
        c = this.buf[++this.pos];
      }
      if (!(c >= 48 && c <= 57)) bail();
      do {
        if (exp < 100000) exp = exp * 10 + (c - 48);
        c = this.buf[++this.pos];
      } while (c >= 48 && c <= 57);
      if (expNeg) exp = -exp;
    }
    let x = exact ? fastDecimal(m, exp - fracDigits, neg) : undefined;
    if (x === undefined) {
      x = Number(this.buf.toString('latin1', start, this.pos));
      if (x === Infinity || x === -Infinity) bail();
    }
    return Number.isInteger(x) ? new JsonFloat(x) : x;
  }
}

function bail(): never {
  throw BAIL;
}
