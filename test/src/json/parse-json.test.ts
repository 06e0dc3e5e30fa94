import { spawnSync } from 'node:child_process';
import { describe, it, expect } from 'vitest';
import { TokcapError } from '../../../src/errors.js';
import { compareCodePoints } from '../../../src/json/canonical-json.js';
import { JsonBytesReader, MAX_JSON_DEPTH, parseJson, parseJsonBytes } from '../../../src/json/parse-json.js';
import { JsonFloat, type JsonValue } from '../../../src/json/value.js';

function errorOf(f: () => unknown): TokcapError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TokcapError);
    return e as TokcapError;
  }
  throw new Error('expected a parse error');
}

const bytes = (s: string) => Buffer.from(s, 'latin1');

describe('parseJson: values and number kinds', () => {
  it('parses literals, strings, arrays and objects', () => {
    expect(parseJson('null')).toBe(null);
    expect(parseJson('true')).toBe(true);
    expect(parseJson('false')).toBe(false);
    expect(parseJson('"abc"')).toBe('abc');
    expect(parseJson('[]')).toEqual([]);
    expect(parseJson('{}')).toEqual({});
    expect(parseJson(' [1, [2, {"a" : [3]}], "x" ] ')).toEqual([1, [2, { a: [3] }], 'x']);
  });

  it('keeps integers as numbers when safe, bigint up to the 64-bit range, floats beyond', () => {
    expect(parseJson('0')).toBe(0);
    expect(Object.is(parseJson('-0'), 0)).toBe(true); // int 0, never -0
    expect(parseJson('123456789012345')).toBe(123456789012345);
    expect(parseJson('-123456789012345')).toBe(-123456789012345);
    expect(parseJson('9007199254740991')).toBe(9007199254740991);
    expect(parseJson('-9007199254740991')).toBe(-9007199254740991);
    expect(parseJson('9007199254740992')).toBe(9007199254740992n);
    expect(parseJson('-9007199254740992')).toBe(-9007199254740992n);
    expect(parseJson('18446744073709551615')).toBe(18446744073709551615n);
    expect(parseJson('-9223372036854775808')).toBe(-9223372036854775808n);
    const over = parseJson('18446744073709551616');
    expect(over).toBeInstanceOf(JsonFloat);
    expect((over as JsonFloat).value).toBe(18446744073709551616);
    const under = parseJson('-9223372036854775809');
    expect(under).toBeInstanceOf(JsonFloat);
    expect((under as JsonFloat).value).toBe(-9223372036854775808);
    const big = parseJson('123456789012345678901234567890');
    expect(big).toBeInstanceOf(JsonFloat);
    expect((big as JsonFloat).value).toBe(1.2345678901234568e29);
  });

  it('makes every number with a fraction or exponent a float, boxing integral values', () => {
    for (const [text, value] of [
      ['1.0', 1],
      ['-3.0', -3],
      ['1e2', 100],
      ['1E2', 100],
      ['1.5e+3', 1500],
      ['0e0', 0],
      ['1e16', 1e16],
      ['100000000000000000000000.0', 1e23],
    ] as const) {
      const v = parseJson(text);
      expect(v, text).toBeInstanceOf(JsonFloat);
      expect((v as JsonFloat).value, text).toBe(value);
    }
    const negZero = parseJson('-0.0');
    expect(negZero).toBeInstanceOf(JsonFloat);
    expect(Object.is((negZero as JsonFloat).value, -0)).toBe(true);
    expect(Object.is((parseJson('-0.0e0') as JsonFloat).value, -0)).toBe(true);
    expect(parseJson('0.5')).toBe(0.5);
    expect(parseJson('-1.25e-7')).toBe(-1.25e-7);
    expect(parseJson('0.1e-5')).toBe(1e-6);
    expect(parseJson('-0.30000000000000004')).toBe(-0.30000000000000004);
    expect(parseJson('2.5E-324')).toBe(5e-324);
    expect(parseJson('2.4703282292062328e-324')).toBe(5e-324);
    expect((parseJson('2.4703282292062327e-324') as JsonFloat).value).toBe(0);
    expect(parseJson('1.7976931348623157e308')).toBeInstanceOf(JsonFloat);
    expect(parseJson('-1.2345678901234567890123e-5')).toBe(-0.000012345678901234568);
  });

  it('rounds decimal floats correctly (fast and slow paths agree with Number())', () => {
    let seed = 99;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    for (let i = 0; i < 20000; i++) {
      const digits = String(Math.floor(rnd() * 10 ** (1 + Math.floor(rnd() * 17))));
      const point = Math.floor(rnd() * (digits.length + 1));
      let text = (rnd() < 0.5 ? '-' : '') + (digits.slice(0, point) || '0') + '.' + (digits.slice(point) || '0');
      if (rnd() < 0.3) text += 'e' + (Math.floor(rnd() * 60) - 30);
      text = text.replace(/^(-?)0+(\d)/, '$1$2');
      const v = parseJson(text);
      const x = v instanceof JsonFloat ? v.value : v;
      expect(Object.is(x, Number(text)), text).toBe(true);
    }
  });

  it('keeps every key as an own data property, last duplicate wins', () => {
    const o = parseJson('{"__proto__": 1, "constructor": 2, "toString": 3}') as Record<string, JsonValue>;
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(o, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(o, '__proto__')).toEqual({
      value: 1,
      writable: true,
      enumerable: true,
      configurable: true,
    });
    expect(Object.keys(o)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(o.constructor).toBe(2);
    const p = parseJson('{"__proto__": {"polluted": true}}') as Record<string, JsonValue>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((p as { polluted?: unknown }).polluted).toBeUndefined();
    expect(p['__proto__']).toEqual({ polluted: true });
    const d = parseJson('{"a": 1, "b": 2, "a": 3, "__proto__": 4, "__proto__": 5}') as Record<string, JsonValue>;
    expect(Object.entries(d)).toEqual([
      ['a', 3],
      ['b', 2],
      ['__proto__', 5],
    ]);
  });

  it('decodes escapes and surrogate pairs', () => {
    expect(parseJson('"\\"\\\\\\/\\b\\f\\n\\r\\t"')).toBe('"\\/\b\f\n\r\t');
    expect(parseJson('"\\u0041\\u00e9\\u4E2D\\u0000"')).toBe('Aé中\u0000');
    expect(parseJson('"\\ud83d\\ude00x"')).toBe('😀x');
    expect(parseJson('"\\uDBFF\\uDFFF"')).toBe('\u{10ffff}');
    expect(parseJson('"a\\nb' + 'c'.repeat(100) + '"')).toBe('a\nb' + 'c'.repeat(100));
    expect(parseJson('"é😀\u2028\u007f/"')).toBe('é😀\u2028\u007f/');
  });

  it('allows RFC whitespace around the document and tokens', () => {
    expect(parseJson(' \t\n\r1 \t\n\r')).toBe(1);
    expect(parseJson('{ "a" :\n[ 1 ,\t2 ] }')).toEqual({ a: [1, 2] });
  });

  it('accepts nesting up to 1024 levels and refuses deeper documents', () => {
    expect(MAX_JSON_DEPTH).toBe(1024);
    const ok = '['.repeat(1024) + ']'.repeat(1024);
    expect(() => parseJson(ok)).not.toThrow();
    const okObj = '{"a":'.repeat(1024) + '1' + '}'.repeat(1024);
    expect(() => parseJson(okObj)).not.toThrow();
    const deep = '['.repeat(1025) + ']'.repeat(1025);
    const e = errorOf(() => parseJson(deep));
    expect(e.kind).toBe('corrupt');
    expect(e.pyClass).toBe('JSONDecodeError');
    expect(e.message).toMatch(/^recursion limit exceeded: line 1 column 1025 \(char 1024\)$/);
    expect(() => parseJson('['.repeat(100000))).toThrow(TokcapError);
  });

  it('parses bytes as strict UTF-8', () => {
    expect(parseJsonBytes(Buffer.from('{"k":"é😀","n":[1,2.5]}', 'utf8'))).toEqual({ k: 'é😀', n: [1, 2.5] });
    expect(parseJsonBytes(new Uint8Array([0x5b, 0x31, 0x5d]))).toEqual([1]);
  });
});

describe('parse errors (orjson 3.8.3 messages)', () => {
  // Messages recorded from orjson 3.8.3 (yyjson). Only the class and the reason are contractual
  // (docs/format.md#result-errors); the positions are reproduced as well.
  const cases: [string, string][] = [
    ['', 'input length is 0: line 1 column 1 (char 0)'],
    [' ', 'input data is empty: line 1 column 1 (char 0)'],
    ['\n\n', 'input data is empty: line 1 column 1 (char 0)'],
    ['[1,', 'unexpected end of data: line 1 column 4 (char 3)'],
    ['[1,]', 'unexpected end of data: line 1 column 5 (char 4)'],
    ['[1,]   ', 'trailing comma is not allowed: line 1 column 5 (char 4)'],
    ['[[1,],2]', 'trailing comma is not allowed: line 1 column 6 (char 5)'],
    ['{"a":1,}xx', 'trailing comma is not allowed: line 1 column 9 (char 8)'],
    ['{"a":1,}', 'unexpected end of data: line 1 column 9 (char 8)'],
    ['NaN', 'unexpected character: line 1 column 1 (char 0)'],
    ['[Infinity]', 'unexpected character: line 1 column 2 (char 1)'],
    ['-Infinity', 'no digit after minus sign: line 1 column 1 (char 0)'],
    ['[nan]', 'invalid literal: line 1 column 2 (char 1)'],
    ['tru', 'invalid literal: line 1 column 1 (char 0)'],
    ['truex', 'unexpected content after document: line 1 column 5 (char 4)'],
    ['1 2', 'unexpected content after document: line 1 column 3 (char 2)'],
    ['[1]\n\n\n x', 'unexpected content after document: line 4 column 2 (char 7)'],
    ['"\\ud800"', 'no matched low surrogate in string: line 1 column 8 (char 7)'],
    ['"\\udc00"', 'invalid high surrogate in string: line 1 column 2 (char 1)'],
    ['"\\ud800\\u0041"', 'invalid low surrogate in string: line 1 column 8 (char 7)'],
    ['"\\ud800\\ud800"', 'invalid low surrogate in string: line 1 column 8 (char 7)'],
    ['"\\ud800\\n"', 'no matched low surrogate in string: line 1 column 8 (char 7)'],
    ['"\\ud800\\u12"', 'no matched low surrogate in string: line 1 column 8 (char 7)'],
    ['"\\ud800', 'unexpected end of data: line 1 column 8 (char 7)'],
    ['"a\x01"', 'unexpected control character in string: line 1 column 3 (char 2)'],
    ['"\x1f"', 'unexpected control character in string: line 1 column 2 (char 1)'],
    ['"a\tb"', 'unexpected control character in string: line 1 column 3 (char 2)'],
    ['"\\x"', 'invalid escaped character in string: line 1 column 3 (char 2)'],
    ['"\\u12g4"', 'invalid escaped unicode in string: line 1 column 2 (char 1)'],
    ['"\\', 'unexpected end of data: line 1 column 3 (char 2)'],
    ['"abc', 'unexpected end of data: line 1 column 5 (char 4)'],
    ['01', 'number with leading zero is not allowed: line 1 column 1 (char 0)'],
    ['-01', 'number with leading zero is not allowed: line 1 column 2 (char 1)'],
    ['[0x10]', 'unexpected character: line 1 column 3 (char 2)'],
    ['-', 'no digit after minus sign: line 1 column 1 (char 0)'],
    ['1.', 'no digit after decimal point: line 1 column 2 (char 1)'],
    ['2.e5', 'no digit after decimal point: line 1 column 2 (char 1)'],
    ['1111111111111111111.x', 'no digit after decimal point: line 1 column 21 (char 20)'],
    ['.5', 'unexpected character: line 1 column 1 (char 0)'],
    ['[+1]', 'unexpected character: line 1 column 2 (char 1)'],
    ['1e', 'no digit after exponent sign: line 1 column 2 (char 1)'],
    ['1e+', 'no digit after exponent sign: line 1 column 3 (char 2)'],
    ['[1e-]', 'no digit after exponent sign: line 1 column 4 (char 3)'],
    ['1e400', 'number is infinity when parsed as double: line 1 column 1 (char 0)'],
    ['[-1e400]', 'number is infinity when parsed as double: line 1 column 2 (char 1)'],
    ['1' + '0'.repeat(309) + '.0', 'number is infinity when parsed as double: line 1 column 1 (char 0)'],
    ['9'.repeat(400), 'number is infinity when parsed as double: line 1 column 1 (char 0)'],
    ['1.7976931348623159e308', 'number is infinity when parsed as double: line 1 column 1 (char 0)'],
    ['/*c*/1', 'unexpected character: line 1 column 1 (char 0)'],
    ['{"a" 1}', 'unexpected character: line 1 column 6 (char 5)'],
    ['{1:1}', 'unexpected character: line 1 column 2 (char 1)'],
    ['{"a":}', 'unexpected character: line 1 column 6 (char 5)'],
    ['{"a":1 "b":2}', 'unexpected character: line 1 column 8 (char 7)'],
    ['[1 2]', 'unexpected character: line 1 column 4 (char 3)'],
    ['[,1]', 'unexpected character: line 1 column 2 (char 1)'],
    ['[1,,2]', 'unexpected character: line 1 column 4 (char 3)'],
    ['[1,\n 2,\n x]', 'unexpected character: line 3 column 2 (char 9)'],
    ['{', 'unexpected end of data: line 1 column 2 (char 1)'],
    ['{"a":1', 'unexpected end of data: line 1 column 7 (char 6)'],
    ['\x0c1', 'unexpected character: line 1 column 1 (char 0)'],
    ['1\x0b', 'unexpected content after document: line 1 column 2 (char 1)'],
    ['\u00a01', 'unexpected character: line 1 column 1 (char 0)'],
    ['[1]\x00', 'unexpected content after document: line 1 column 4 (char 3)'],
    ['\ufeff1', 'byte order mark (BOM) is not supported: line 1 column 1 (char 0)'],
    ['[\ufeff1]', 'unexpected character: line 1 column 2 (char 1)'],
    ['"é" x', 'unexpected content after document: line 1 column 5 (char 4)'],
    ['"😀" x', 'unexpected content after document: line 1 column 5 (char 4)'],
    ['[\n"中"\n, x]', 'unexpected character: line 3 column 3 (char 8)'],
  ];
  for (const [text, message] of cases) {
    it(`refuses ${JSON.stringify(text.length > 40 ? text.slice(0, 40) + '…' : text)}`, () => {
      const e = errorOf(() => parseJson(text));
      expect(e.kind).toBe('corrupt');
      expect(e.pyClass).toBe('JSONDecodeError');
      expect(e.message).toBe(message);
      expect(e.pythonString()).toBe(`JSONDecodeError: ${message}`);
      // The same document as UTF-8 bytes fails the same way.
      expect(errorOf(() => parseJsonBytes(Buffer.from(text, 'utf8'))).message).toBe(message);
    });
  }

  it('refuses invalid UTF-8 and a BOM in bytes', () => {
    const utf8 = 'str is not valid UTF-8: surrogates not allowed: line 1 column 1 (char 0)';
    for (const b of [bytes('"\xff"'), bytes('"\xc3"'), bytes('["\xe9"]'), bytes('"\xed\xa0\x80"'), bytes('1 \xc3')]) {
      expect(errorOf(() => parseJsonBytes(b)).message).toBe(utf8);
    }
    expect(errorOf(() => parseJsonBytes(bytes('\xef\xbb\xbf1'))).message).toBe(
      'byte order mark (BOM) is not supported: line 1 column 1 (char 0)',
    );
  });

  it('refuses a string argument holding lone surrogates, wherever they are', () => {
    const utf8 = 'str is not valid UTF-8: surrogates not allowed: line 1 column 1 (char 0)';
    for (const s of ['"\ud800"', '1 \ud800', '[1,"\udc00"]', '"\ude00\ud83d"']) {
      expect(errorOf(() => parseJson(s)).message).toBe(utf8);
    }
  });

  it('restores a usable state after an error', () => {
    expect(() => parseJson('[1,')).toThrow(TokcapError);
    expect(parseJson('[1]')).toEqual([1]);
  });
});

// ---------------------------------------------------------------------------------------------
// Cross-check with Python's json module (stdlib). Python's reader is more permissive than
// orjson (NaN/Infinity, lone surrogate escapes, unbounded ints); the Python side maps those to
// orjson's outcome (refusal, or a float for out-of-range ints), then both sides describe the
// value as a tagged tree.

const PY_TAGGER = String.raw`
import sys, json, base64, math
def bad(*a): raise ValueError('constant')
def chk(s):
    if any(0xd800 <= ord(c) <= 0xdfff for c in s): raise ValueError('surrogate')
    return s
def tag(v):
    if v is None or isinstance(v, bool): return v
    if isinstance(v, int):
        if -2**63 <= v <= 2**64 - 1: return {'i': str(v)}
        return tag(float(v))
    if isinstance(v, float):
        if math.isinf(v) or math.isnan(v): raise ValueError('inf')
        return {'f': repr(v)}
    if isinstance(v, str): return {'s': chk(v)}
    if isinstance(v, list): return [tag(x) for x in v]
    return {'o': sorted([chk(k), tag(x)] for k, x in v.items())}
out = []
for doc in json.load(sys.stdin):
    try:
        out.append(tag(json.loads(base64.b64decode(doc).decode('utf-8'), parse_constant=bad)))
    except (ValueError, OverflowError, RecursionError):
        out.append({'err': True})
print(json.dumps(out))
`;

type Tag =
  null | boolean | { i: string } | { f: number } | { s: string } | { o: [string, Tag][] } | { err: true } | Tag[];

function tagOf(v: JsonValue): Tag {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return { i: v.toString() };
  if (typeof v === 'number') return Number.isInteger(v) ? { i: String(v) } : { f: v };
  if (v instanceof JsonFloat) return { f: v.value };
  if (typeof v === 'string') return { s: v };
  if (Array.isArray(v)) return v.map(tagOf);
  return {
    o: Object.keys(v)
      .sort(compareCodePoints)
      .map((k) => [k, tagOf(v[k])] as [string, Tag]),
  };
}

function pyFloats(t: unknown): Tag {
  if (Array.isArray(t)) return t.map(pyFloats);
  if (t !== null && typeof t === 'object') {
    const o = t as Record<string, unknown>;
    if (typeof o.f === 'string') return { f: Number(o.f) };
    if (Array.isArray(o.o))
      return { o: (o.o as [string, unknown][]).map(([k, x]) => [k, pyFloats(x)] as [string, Tag]) };
  }
  return t as Tag;
}

function generatedDocs(): Buffer[] {
  let seed = 4242;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const num = (): string => {
    const r = rnd();
    if (r < 0.3) return String(Math.floor(rnd() * 2e6) - 1e6);
    if (r < 0.5) return String(-rnd() * 20);
    if (r < 0.6)
      return pick([
        '9007199254740993',
        '18446744073709551615',
        '18446744073709551616',
        '-9223372036854775809',
        '1e16',
        '5e-324',
        '1e400',
        '-0',
        '-0.0',
      ]);
    let s = pick(['', '-']) + pick(['0', '1', '9', '00', '01', '123', '9'.repeat(25), '']);
    if (rnd() < 0.5) s += '.' + String(Math.floor(rnd() * 1e6)).slice(0, Math.floor(rnd() * 7));
    if (rnd() < 0.4)
      s += pick(['e', 'E']) + pick(['', '+', '-']) + String(Math.floor(rnd() * 400)).slice(0, Math.floor(rnd() * 4));
    return s;
  };
  const str = (): string => {
    let s = '"';
    for (let n = Math.floor(rnd() * 5); n > 0; n--) {
      s += pick([
        'a',
        'é',
        '中',
        '😀',
        ' ',
        '/',
        '\x7f',
        '\u2028',
        '\\n',
        '\\"',
        '\\\\',
        '\\/',
        '\\u0041',
        '\\uD83D\\uDE00',
        '\\ud800',
        '\\udc00',
        '\\ud800\\u0041',
        '\\x',
        '\\u12g4',
        '\\u0000',
        '\x01',
        '\t',
        '\\',
        '"',
      ]);
    }
    return s + '"';
  };
  const ws = () => pick(['', '', '', ' ', '\n', '\t', '\r\n', '\x0b', '\x0c', '\u00a0']);
  const val = (d: number): string => {
    const r = rnd();
    if (d > 3 || r < 0.35) return num();
    if (r < 0.5) return str();
    if (r < 0.58) return pick(['true', 'false', 'null', 'tru', 'nul', 'NaN', 'Infinity', '-Infinity']);
    if (r < 0.8) {
      const items = Array.from({ length: Math.floor(rnd() * 5) }, () => ws() + val(d + 1) + ws());
      return '[' + items.join(',') + (rnd() < 0.05 ? ',' : '') + ws() + ']';
    }
    const items = Array.from(
      { length: Math.floor(rnd() * 5) },
      () => ws() + (rnd() < 0.95 ? str() : num()) + ws() + ':' + ws() + val(d + 1) + ws(),
    );
    return '{' + items.join(',') + (rnd() < 0.05 ? ',' : '') + '}';
  };
  const docs: Buffer[] = [];
  for (let n = 0; n < 3000; n++) {
    let b = Buffer.from(pick(['', ' ', '\n']) + val(0) + pick(['', ' ', '\n']), 'utf8');
    if (rnd() < 0.25) {
      // mutate a few bytes
      const arr = [...b];
      for (let k = Math.floor(rnd() * 3) + 1; k > 0; k--) {
        const i = Math.floor(rnd() * (arr.length + 1));
        const op = rnd();
        if (op < 0.3 && arr.length > 0) arr.splice(Math.min(i, arr.length - 1), 1);
        else if (op < 0.6)
          arr.splice(i, 0, pick([...Buffer.from('[]{},:"\\-.eE0123456789 \nx'), 0x00, 0xff, 0xc3, 0xef]));
        else arr.length = Math.min(arr.length, i);
      }
      b = Buffer.from(arr);
    }
    docs.push(b);
  }
  return docs;
}

const hasPython = spawnSync('python3', ['-c', 'import json'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!hasPython)('parseJson agrees with Python json on acceptance and values', () => {
  it('tricky hand-written and generated documents', () => {
    const handWritten = [
      '1',
      '-0',
      '-0.0',
      '0e0',
      '1E400',
      '1e-400',
      '1.0',
      '[1.5, -2, 3e2]',
      '"\\ud83d\\ude00"',
      '"\\ud800"',
      '"\\udc00"',
      '"\\ud800\\u0041"',
      '{"a":1,"a":2}',
      '{"é":1,"😀":2,"\uffff":3}',
      '18446744073709551615',
      '18446744073709551616',
      '-9223372036854775808',
      '-9223372036854775809',
      '9'.repeat(30),
      '1' + '0'.repeat(400),
      'NaN',
      'Infinity',
      '-Infinity',
      '[1,]',
      '{"a":1,}',
      '01',
      '1.',
      '.5',
      '+1',
      '1e',
      '[1 2]',
      '"a\x01"',
      '"a\x7f"',
      ' \t\n\r[] \t\n\r',
      '\x0c[]',
      '[]\x0b',
      '\ufeff[]',
      '"\\/"',
      '"\\u00E9"',
      'nul',
      'truee',
      '{"__proto__":{"x":1}}',
      '2.4703282292062328e-324',
      '2.4703282292062327e-324',
      '1.7976931348623158e308',
      '1.7976931348623159e308',
      '0.' + '0'.repeat(400) + '1',
      '[' + '1,'.repeat(1000) + '2]',
    ].map((s) => Buffer.from(s, 'utf8'));
    handWritten.push(bytes('"\xff"'), bytes('\xef\xbb\xbf1'), bytes('"\xed\xa0\x80"'));
    const docs = [...handWritten, ...generatedDocs()];
    const py = spawnSync('python3', ['-c', PY_TAGGER], {
      input: JSON.stringify(docs.map((d) => d.toString('base64'))),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(py.status, py.stderr).toBe(0);
    const expected = (JSON.parse(py.stdout) as unknown[]).map(pyFloats);
    let accepted = 0;
    docs.forEach((doc, i) => {
      let got: Tag;
      try {
        got = tagOf(parseJsonBytes(doc));
        accepted++;
      } catch (e) {
        expect(e).toBeInstanceOf(TokcapError);
        got = { err: true };
      }
      expect(got, JSON.stringify(doc.toString('latin1'))).toEqual(expected[i]);
    });
    expect(accepted).toBeGreaterThan(500);
  });
});

describe('JsonBytesReader.idArrays', () => {
  it('names the arrays of the last document that hold plain token ids only, and none with anything else', () => {
    const reader = new JsonBytesReader();
    const doc = '{"a":[0,1,22,333],"b":[1,-2],"c":[1,2.5],"d":[1,"2"],"e":[1,2 ,3]}';
    const v = reader.read(Buffer.from(doc)) as Record<string, JsonValue>;
    expect(v).toEqual(JSON.parse(doc));
    expect(reader.idArrays).toHaveLength(1);
    expect(reader.idArrays[0]).toBe(v.a);
    // A document the byte lane gives up on (an integer of 17 digits) names none.
    reader.read(Buffer.from('{"a":[1,2,3],"b":12345678901234567}'));
    expect(reader.idArrays).toEqual([]);
  });
});
