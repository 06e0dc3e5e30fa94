/**
 * orjson-compatible serialisation (docs/format.md#json-writing): compact, strings as JSON.stringify writes
 * well-formed strings, integers in plain decimal, floats in orjson's layout (float-layout.ts).
 *
 * - `canonicalJson` sorts object keys by Unicode code point at every level (OPT_SORT_KEYS): the
 *   form of entry lines and state files.
 * - `orderedJson` keeps insertion order (orjson without OPT_SORT_KEYS), for printing results.
 *
 * Number kinds (value.ts): a `number` that is integral is an int, a non-integral `number` is a
 * float, a `JsonFloat` is always a float (`1.0`), a `bigint` is an int. Ints must fit in
 * -2^63 … 2^64 - 1 like orjson's; strings must be well-formed UTF-16 (no lone surrogates), as
 * orjson refuses to encode them.
 */
import { TokcapError } from '../errors.js';
import { compareCodePoints } from './code-point-order.js';
import { layoutFloat } from './float-layout.js';
import type { IdArrayTexts } from './id-texts.js';
import { isWellFormed } from './parse-json.js';
import { JsonFloat, type JsonValue } from './value.js';

export interface CanonicalJsonOptions {
  /** Positive float exponents with `+` (orjson >= 3.11.7, default) or without. See docs/format.md#float-layout. */
  plusExponent?: boolean;
  floatKeys?: never;
}

const MIN_I64 = -(2n ** 63n);
const MAX_U64 = 2n ** 64n - 1n;
const MIN_I64_NUM = -9223372036854775808;
const TWO_64_NUM = 18446744073709551616;

const SURROGATE = /[\ud800-\udfff]/;

// Here since canonical JSON orders keys by it; it lives in its own module so that a listing can
// sort names without loading the JSON modules.
export { compareCodePoints } from './code-point-order.js';

/** Keys of `o` in code-point order. */
function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  for (let i = 0; i < keys.length; i++) {
    if (SURROGATE.test(keys[i])) return keys.sort(compareCodePoints);
  }
  // BMP-only keys: UTF-16 order (the default sort) is code-point order.
  return keys.sort();
}

/**
 * A writer for one document, whose buffer is handed over as it is (no copy). Callers that write
 * many documents in a row keep a `JsonWriter` instead: its buffer and id text carry over.
 */
function once(): JsonWriter {
  return new JsonWriter(256, false);
}

/** orjson.dumps(v, option=OPT_SORT_KEYS). */
export function canonicalJson(v: JsonValue, opts?: CanonicalJsonOptions): string {
  return once().canonical(v, opts);
}

/** The UTF-8 bytes of `canonicalJson(v, opts)`, in memory of their own. */
export function canonicalJsonBytes(v: JsonValue, opts?: CanonicalJsonOptions): Buffer {
  return once().canonicalBytes(v, opts);
}

/**
 * orjson.dumps(v) without sorting: keys in insertion order (as `Object.keys` lists them, so
 * integer-like keys come first, in numeric order). Accepts plain objects and arrays built from
 * JSON values; `undefined`, functions, symbols and other objects are refused.
 */
export function orderedJson(v: JsonValue | unknown, opts?: CanonicalJsonOptions): string {
  return once().ordered(v, opts);
}

/**
 * The UTF-8 bytes of `orderedJson(v, opts)` followed by an LF, in memory of their own (a
 * JSONL line, ready to write or to transfer to another thread).
 */
export function orderedJsonLine(v: JsonValue | unknown, opts?: CanonicalJsonOptions): Buffer {
  return once().orderedLine(v, opts);
}

/**
 * `orderedJson` for documents built in code (the CLI's `--json` output): like JSON.stringify,
 * an object key whose value is `undefined` is left out and an `undefined` array element is
 * written as null.
 */
export function outputJson(v: unknown, opts?: CanonicalJsonOptions): string {
  return once().output(v, opts);
}

/**
 * The UTF-8 bytes of `orderedJson(Object.fromEntries(members))`, keys in the order given (even
 * integer-like ones): a large map (inspect's rollouts) written without an object of its size or
 * a string per member.
 */
export function orderedJsonMembers(members: Iterable<readonly [string, unknown]>, opts?: CanonicalJsonOptions): Buffer {
  return once().orderedMembers(members, opts);
}

/**
 * The UTF-8 bytes of one member, `"key":value`, as `orderedJsonMembers` writes it: for a map
 * written member by member as its values come (a comma between members is the caller's).
 */
export function orderedJsonMember(key: string, value: unknown, opts?: CanonicalJsonOptions): Buffer {
  return once().orderedMember(key, value, opts);
}

class Member {
  constructor(
    readonly key: string,
    readonly value: unknown,
  ) {}
}

class Members {
  constructor(readonly members: Iterable<readonly [string, unknown]>) {}
}

/** The UTF-8 bytes of `outputJson(v, opts)`, in memory of their own. */
export function outputJsonBytes(v: unknown, opts?: CanonicalJsonOptions): Buffer {
  return once().outputBytes(v, opts);
}

/** `outputJsonBytes(v, opts)` followed by an LF (a whole `--json` document). */
export function outputJsonLine(v: unknown, opts?: CanonicalJsonOptions): Buffer {
  return once().outputLine(v, opts);
}

/**
 * Already-serialised JSON text that `orderedJson` writes verbatim: lets a caller serialise the
 * parts of a large document one by one (and drop the values) before writing it whole. Bytes may
 * come in parts, written one after the other (a result with members appended, not copied).
 */
export class RawJsonText {
  constructor(readonly text: string | Uint8Array | readonly Uint8Array[]) {}
}

/** A buffer grown beyond this by a large document is not kept for the next one. */
const KEEP_BYTES = 8 << 20;

/**
 * What a caller takes from the output `b[0, n)`. `spare` says the buffer will not be reused, so
 * its bytes need no copy (a large document is handed over as it is).
 */
type Take<T> = (b: Buffer, n: number, spare: boolean) => T;
const asString: Take<string> = (b, n) => b.toString('utf8', 0, n);
const asBytes: Take<Buffer> = (b, n, spare) => {
  if (spare) return b.subarray(0, n);
  const copy = Buffer.allocUnsafeSlow(n);
  b.copy(copy, 0, 0, n);
  return copy;
};
const asLine: Take<Buffer> = (b, n, spare) => {
  if (spare && n < b.length) {
    b[n] = 0x0a;
    return b.subarray(0, n + 1);
  }
  const copy = Buffer.allocUnsafeSlow(n + 1);
  b.copy(copy, 0, 0, n);
  copy[n] = 0x0a;
  return copy;
};

/** "00" to "99" as ASCII pairs. */
const DIGIT_PAIRS = Uint8Array.from({ length: 200 }, (_, i) => 48 + (i % 2 === 0 ? Math.floor(i / 20) : (i >> 1) % 10));

/**
 * Arrays from this length on are written into the prefix buffer (below); shorter ones into a
 * scratch buffer, so that a generation's ids written between two prompts leave it alone.
 */
const PREFIX_MIN = 256;

/**
 * A reusable text buffer for token-id arrays that remembers what it holds: `bytes[0, ends[k-1])`
 * is the text (`[` and `k` comma-separated ids) of the ids `values[0, k)`, `k` = `length`. The
 * next array that starts with the same ids keeps that text and writes only its own tail. A
 * projection's prompts each extend the previous one, so most of a result's digits are written
 * once. The ids are compared by value against this private copy, never by array identity.
 */
class IdText {
  bytes = Buffer.allocUnsafe(1 << 12);
  values = new Uint32Array(1 << 10);
  ends = new Uint32Array(1 << 10);
  length = 0;

  reserve(n: number): void {
    if (this.bytes.length < n * 11 + 2) {
      const bytes = Buffer.allocUnsafe(n * 11 + 2 + (n >> 1) * 11);
      this.bytes.copy(bytes, 0, 0, this.length > 0 ? this.ends[this.length - 1] : 0);
      this.bytes = bytes;
    }
    if (this.values.length < n) {
      const size = n + (n >> 1);
      const values = new Uint32Array(size);
      values.set(this.values.subarray(0, this.length));
      const ends = new Uint32Array(size);
      ends.set(this.ends.subarray(0, this.length));
      this.values = values;
      this.ends = ends;
    }
  }
}

function writeIntNumber(v: number): string {
  if (v < MIN_I64_NUM || v >= TWO_64_NUM) throw intRangeError();
  // Beyond 2^53 String() pads the shortest digits with zeros; BigInt gives the exact value.
  return Number.isSafeInteger(v) ? String(v) : BigInt(v).toString();
}

/** Printable ASCII without `"` and `\`: written between quotes as it is. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * Writes JSON as bytes into a buffer it reuses from one document to the next. Writing bytes, not
 * strings, spares the ropes that `+=` builds and their flattening and UTF-8 encoding when the
 * text is written out, which cost about as much as producing it. It also remembers the text of
 * the last long token-id array it wrote (`IdText`), so a result whose prompts extend one another
 * writes most digits once. A writer belongs to one thread and one job (a build, an export, a
 * command's output); the module functions below each use a writer of their own.
 */
export class JsonWriter {
  private out: Buffer;
  private at = 0;
  private busy = false;
  private prefixText: IdText | undefined;
  private scratchText: IdText | undefined;
  /** Texts of id arrays as read, written as they are (`outputBytesInto`). */
  private idTexts: IdArrayTexts | undefined;

  /**
   * `keeps`: the buffer is reused by the next document, so what is taken from it is copied
   * (false for a writer used once, whose buffer is handed over as it is).
   */
  constructor(
    initialBytes = 1 << 16,
    private readonly keeps = true,
  ) {
    this.out = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** `canonicalJson(v, opts)`. */
  canonical(v: JsonValue, opts?: CanonicalJsonOptions): string {
    return this.serialise(v, opts?.plusExponent ?? true, true, false, asString);
  }

  /** `canonicalJsonBytes(v, opts)`. */
  canonicalBytes(v: JsonValue, opts?: CanonicalJsonOptions): Buffer {
    return this.serialise(v, opts?.plusExponent ?? true, true, false, asBytes);
  }

  /** `orderedJson(v, opts)`. */
  ordered(v: JsonValue | unknown, opts?: CanonicalJsonOptions): string {
    return this.serialise(v, opts?.plusExponent ?? true, false, false, asString);
  }

  /** `orderedJsonLine(v, opts)`. */
  orderedLine(v: JsonValue | unknown, opts?: CanonicalJsonOptions): Buffer {
    return this.serialise(v, opts?.plusExponent ?? true, false, false, asLine);
  }

  /** `orderedJsonMembers(members, opts)`. */
  orderedMembers(members: Iterable<readonly [string, unknown]>, opts?: CanonicalJsonOptions): Buffer {
    return this.serialise(new Members(members), opts?.plusExponent ?? true, false, false, asBytes);
  }

  /** `orderedJsonMember(key, value, opts)`. */
  orderedMember(key: string, value: unknown, opts?: CanonicalJsonOptions): Buffer {
    return this.serialise(new Member(key, value), opts?.plusExponent ?? true, false, false, asBytes);
  }

  /** `outputJson(v, opts)`. */
  output(v: unknown, opts?: CanonicalJsonOptions): string {
    return this.serialise(v, opts?.plusExponent ?? true, false, true, asString);
  }

  /** `outputJsonBytes(v, opts)`. */
  outputBytes(v: unknown, opts?: CanonicalJsonOptions): Buffer {
    return this.serialise(v, opts?.plusExponent ?? true, false, true, asBytes);
  }

  /**
   * `outputJsonBytes(v, opts)` copied into `memory(size)` (a view of exactly `size` bytes), e.g.
   * memory that is reused once the bytes are written out, instead of new memory for each document.
   * An array in `idTexts` is written as its text there (the same bytes, copied: id-texts.ts).
   */
  outputBytesInto(
    v: unknown,
    memory: (size: number) => Buffer,
    opts?: CanonicalJsonOptions,
    idTexts?: IdArrayTexts,
  ): Buffer {
    this.idTexts = idTexts;
    try {
      return this.serialise(v, opts?.plusExponent ?? true, false, true, (b, n) => {
        const into = memory(n);
        b.copy(into, 0, 0, n);
        return into;
      });
    } finally {
      this.idTexts = undefined;
    }
  }

  /** `outputJsonLine(v, opts)`. */
  outputLine(v: unknown, opts?: CanonicalJsonOptions): Buffer {
    return this.serialise(v, opts?.plusExponent ?? true, false, true, asLine);
  }

  /** Serialises `v` into this writer's buffer and hands the bytes to `take`. */
  private serialise<T>(v: unknown, plus: boolean, sort: boolean, loose: boolean, take: Take<T>): T {
    // Reentrant (a getter could serialise too): a nested call writes with a writer of its own.
    if (this.busy) return new JsonWriter(1 << 12, false).serialise(v, plus, sort, loose, take);
    this.busy = true;
    this.at = 0;
    try {
      this.writeValue(v, plus, sort, loose);
      // A buffer this writer will not reuse is handed over as it is: the taker may keep it.
      const spare = !this.keeps || this.out.length > KEEP_BYTES;
      return take(this.out, this.at, spare);
    } finally {
      this.busy = false;
      // Also after an error half way through a large document.
      if (this.out.length > KEEP_BYTES) this.out = Buffer.allocUnsafeSlow(1 << 16);
    }
  }

  private reserve(n: number): void {
    if (this.at + n <= this.out.length) return;
    // Some room beyond: the next few bytes (a closing bracket, a line feed) need no copy.
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.out.length * 2, this.at + n + 4096));
    this.out.copy(bigger, 0, 0, this.at);
    this.out = bigger;
  }

  /** Appends an ASCII string. */
  private putAscii(s: string): void {
    const n = s.length;
    this.reserve(n);
    if (n < 32) {
      for (let i = 0; i < n; i++) this.out[this.at + i] = s.charCodeAt(i);
      this.at += n;
    } else {
      this.at += this.out.write(s, this.at, n, 'latin1');
    }
  }

  /** Appends any well-formed string as UTF-8. */
  private putUtf8(s: string): void {
    // At most 3 bytes per UTF-16 unit; a long string is measured instead (no triple-size buffer).
    this.reserve(s.length <= 4096 ? s.length * 3 : Buffer.byteLength(s, 'utf8'));
    this.at += this.out.write(s, this.at, 'utf8');
  }

  private putBytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.out.set(bytes, this.at);
    this.at += bytes.length;
  }

  private putByte(c: number): void {
    this.reserve(1);
    this.out[this.at++] = c;
  }

  /**
   * Appends `a` when it is an array of plain numbers whose JS text (JSON.stringify) is exactly
   * what `writeValue` would produce; false (nothing written) otherwise. True for token ids and
   * log probs: every element a safe integer or a non-integral double whose JS text equals orjson's
   * layout. JS and orjson both write fixed notation for 1e-5 <= |x| < 1e16 (non-integral doubles
   * are below 2^53 anyway) and both write `d.ddde-k` below 1e-6; only 1e-6 <= |x| < 1e-5 differ
   * (JS fixed, orjson scientific).
   */
  private putNumberArray(a: unknown[]): boolean {
    if (this.putTokenIds(a)) return true;
    const n = a.length;
    for (let i = 0; i < n; i++) {
      const x = a[i];
      if (typeof x !== 'number') return false;
      if (Number.isInteger(x)) {
        if (x > 9007199254740991 || x < -9007199254740991) return false;
      } else {
        const m = x < 0 ? -x : x;
        if (!(m >= 1e-5 || m < 1e-6)) return false; // NaN fails here too
      }
    }
    this.putAscii(JSON.stringify(a));
    return true;
  }

  /**
   * Appends the text of an array of integers in [0, 2^32) (token ids); false (nothing appended) as
   * soon as an element is anything else. Digits are written two at a time into a reused buffer: twice as fast as
   * JSON.stringify on the arrays the parser creates at their final length ("holey" in V8, which
   * JSON.stringify takes a slow path for), and as fast on the others; ids shared with the start of
   * the previous long array are not written again (IdText).
   */
  private putTokenIds(a: unknown[]): boolean {
    const n = a.length;
    const t = n >= PREFIX_MIN ? (this.prefixText ??= new IdText()) : (this.scratchText ??= new IdText());
    t.reserve(n);
    const { values, ends } = t;
    // The ids this array shares with the text already in the buffer.
    const known = Math.min(n, t.length);
    let i = 0;
    while (i < known && a[i] === values[i]) i++;
    t.length = i;
    const b = t.bytes;
    let p = i > 0 ? ends[i - 1] : 1;
    b[0] = 91;
    for (; i < n; i++) {
      if (i > 0) b[p++] = 44;
      const v = a[i];
      if (typeof v !== 'number' || !(v >= 0 && v <= 4294967295) || v !== Math.floor(v)) return false;
      let x = v;
      if (x < 10) {
        b[p++] = 48 + x;
      } else {
        const d =
          x < 100
            ? 2
            : x < 1000
              ? 3
              : x < 10000
                ? 4
                : x < 100000
                  ? 5
                  : x < 1000000
                    ? 6
                    : x < 10000000
                      ? 7
                      : x < 100000000
                        ? 8
                        : x < 1000000000
                          ? 9
                          : 10;
        // Two digits per division, from the end (`>>> 0` is exact below 2^32).
        let e = p + d;
        while (x >= 100) {
          const q = (x / 100) >>> 0;
          const r = (x - q * 100) * 2;
          b[--e] = DIGIT_PAIRS[r + 1];
          b[--e] = DIGIT_PAIRS[r];
          x = q;
        }
        // The leading one or two digits: e is p + 2 or p + 1 here.
        if (x >= 10) {
          b[e - 1] = DIGIT_PAIRS[2 * x + 1];
          b[e - 2] = DIGIT_PAIRS[2 * x];
        } else {
          b[e - 1] = 48 + x;
        }
        p += d;
      }
      values[i] = v;
      ends[i] = p;
      t.length = i + 1;
    }
    b[p++] = 93;
    this.reserve(p);
    b.copy(this.out, this.at, 0, p);
    this.at += p;
    return true;
  }

  private writeValue(v: unknown, plus: boolean, sort: boolean, loose: boolean): void {
    switch (typeof v) {
      case 'number':
        this.putAscii(Number.isInteger(v) ? writeIntNumber(v as number) : layoutFloat(v as number, plus));
        return;
      case 'string':
        this.putString(v as string);
        return;
      case 'boolean':
        this.putAscii(v ? 'true' : 'false');
        return;
      case 'bigint':
        if ((v as bigint) < MIN_I64 || (v as bigint) > MAX_U64) throw intRangeError();
        this.putAscii((v as bigint).toString());
        return;
      case 'object': {
        if (v === null) {
          this.putAscii('null');
          return;
        }
        if (Array.isArray(v)) {
          const text = this.idTexts?.get(v);
          if (text !== undefined) {
            this.putBytes(text);
            return;
          }
          const n = v.length;
          if (n > 0 && typeof v[0] === 'number' && this.putNumberArray(v)) return;
          this.putByte(91);
          for (let i = 0; i < n; i++) {
            const x: unknown = v[i];
            if (i > 0) this.putByte(44);
            if (loose && x === undefined) this.putAscii('null');
            else this.writeValue(x, plus, sort, loose);
          }
          this.putByte(93);
          return;
        }
        if (v instanceof JsonFloat) {
          this.putAscii(layoutFloat(v.value, plus));
          return;
        }
        if (v instanceof RawJsonText && !sort) {
          const text = v.text;
          if (typeof text === 'string') this.putUtf8(text);
          else for (const part of text instanceof Uint8Array ? [text] : text) this.putBytes(part);
          return;
        }
        if (v instanceof Member) {
          this.putMember(true, v.key, v.value, plus, sort, loose);
          return;
        }
        if (v instanceof Members) {
          this.putByte(123);
          let first = true;
          for (const [k, x] of v.members) {
            this.putMember(first, k, x, plus, sort, loose);
            first = false;
          }
          this.putByte(125);
          return;
        }
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) throw unsupported(v);
        const o = v as Record<string, unknown>;
        const keys = sort ? sortedKeys(o) : Object.keys(o);
        this.putByte(123);
        let first = true;
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          const x = o[k];
          if (loose && x === undefined) continue;
          this.putMember(first, k, x, plus, sort, loose);
          first = false;
        }
        this.putByte(125);
        return;
      }
      default:
        throw unsupported(v);
    }
  }

  /** `"k":x`, after a comma unless it is the first member. */
  private putMember(first: boolean, k: string, x: unknown, plus: boolean, sort: boolean, loose: boolean): void {
    if (!first) this.putByte(44);
    this.putString(k);
    this.putByte(58);
    this.writeValue(x, plus, sort, loose);
  }

  private putString(s: string): void {
    // Most strings (keys, ids, digests) need no escaping and cannot hold a lone surrogate.
    if (s.length < 256 && PLAIN_ASCII.test(s)) {
      this.putByte(34);
      this.putAscii(s);
      this.putByte(34);
      return;
    }
    if (!isWellFormed(s)) {
      throw new TokcapError('other', 'str is not valid UTF-8: surrogates not allowed', { pyClass: 'ValueError' });
    }
    this.putUtf8(JSON.stringify(s));
  }
}

function intRangeError(): TokcapError {
  return new TokcapError('other', 'Integer exceeds 64-bit range', { pyClass: 'ValueError' });
}

function unsupported(v: unknown): TokcapError {
  const what =
    v === undefined ? 'undefined' : typeof v === 'object' ? ((v as object).constructor?.name ?? 'object') : typeof v;
  return new TokcapError('other', `Type is not JSON serializable: ${what}`, { pyClass: 'ValueError' });
}
