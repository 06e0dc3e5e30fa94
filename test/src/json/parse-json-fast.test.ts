import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect } from 'vitest';
import { mulberry32 } from '../../../src/fixture/prng.js';
import { parseJson } from '../../../src/json/parse-json.js';
import { FastJsonParser, NOT_FAST } from '../../../src/json/parse-json-fast.js';
import { JsonFloat, type JsonValue } from '../../../src/json/value.js';
import { corpusDir } from '../../support/conformance-corpus.js';

/** The value with every kind spelled out (JsonFloat vs number, -0, key order, own keys). */
function describeValue(v: JsonValue): unknown {
  if (v instanceof JsonFloat) return { float: Object.is(v.value, -0) ? '-0' : v.value };
  if (typeof v === 'number')
    return Object.is(v, -0) ? { number: '-0' } : Number.isInteger(v) ? { int: v } : { float: v };
  if (typeof v === 'bigint') return { bigint: String(v) };
  if (Array.isArray(v)) return v.map(describeValue);
  if (v !== null && typeof v === 'object') {
    return {
      keys: Reflect.ownKeys(v),
      values: Object.keys(v).map((k) => describeValue(v[k])),
      proto: Object.getPrototypeOf(v) === Object.prototype,
    };
  }
  return v;
}

/** What the strict parser makes of the bytes: the value, or 'error'. */
function strict(bytes: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return 'error';
  }
  try {
    return describeValue(parseJson(text));
  } catch {
    return 'error';
  }
}

/**
 * One parser for the whole file, as a reader keeps one for the lines of a file: what it remembers
 * from one document (id runs, keys) must never change the value of another.
 */
const parser = new FastJsonParser();
const parseJsonBytesFast = (bytes: Uint8Array) => parser.parse(bytes);

function expectAgrees(bytes: Buffer): 'fast' | 'strict' {
  const fast = parseJsonBytesFast(bytes);
  if (fast === NOT_FAST) return 'strict';
  expect(describeValue(fast), bytes.toString('latin1')).toEqual(strict(bytes));
  return 'fast';
}

const rnd = mulberry32(20261130);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const int = (n: number) => Math.floor(rnd() * n);

const NUMBERS = [
  '0',
  '-0',
  '1',
  '7',
  '12',
  '150000',
  '-42',
  '0.0',
  '-0.0',
  '1.0',
  '1760000000.0',
  '1.5',
  '-3.9172540999999996',
  '1e5',
  '1E-5',
  '2.5e+3',
  '1e16',
  '1e400',
  '-1e400',
  '123456789012345',
  '1234567890123456',
  '9007199254740993',
  '18446744073709551615',
  '18446744073709551616',
  '01',
  '-',
  '1.',
  '.5',
  '1e',
  '0.1e-400',
  '5e-324',
  '1.7976931348623157e308',
  '0.30000000000000004',
  '100000000000000000000000.0',
  '123.456e-7',
];
const STRINGS = [
  '""',
  '"a"',
  '"model"',
  '"__proto__"',
  '"é"',
  '"中文"',
  '"😀"',
  '"a\\nb"',
  '"\\"q\\""',
  '"\\u00e9"',
  '"\\ud83d\\ude00"',
  '"\\ud800"',
  '"\\udc00x"',
  '"\\ud800\\u0041"',
  '"\\/"',
  '"\\x"',
  '"tab\there"',
  '"\\u12g4"',
  '"1"',
  '"10"',
  '"2"',
];

function randomValue(d: number): string {
  const r = rnd();
  if (d > 3 || r < 0.35) return pick(NUMBERS);
  if (r < 0.5) return pick(STRINGS);
  if (r < 0.55) return pick(['true', 'false', 'null', 'tru', 'nul']);
  if (r < 0.8) {
    // Token-id-like arrays, sometimes with an odd element or odd separators.
    const n = int(12);
    const xs: string[] = [];
    for (let k = 0; k < n; k++)
      xs.push(rnd() < 0.85 ? String(int(200000)) : rnd() < 0.5 ? pick(NUMBERS) : randomValue(d + 1));
    return '[' + xs.join(pick([',', ',', ',', ', ', ' ,', ',\n'])) + pick(['', '', '', ',', ' ', ', ', ',\n']) + ']';
  }
  const n = int(6);
  const kv: string[] = [];
  for (let k = 0; k < n; k++) kv.push(pick(STRINGS) + pick([':', ':', ' : ']) + randomValue(d + 1));
  return '{' + kv.join(pick([',', ', '])) + pick(['', '', ',']) + '}';
}

function mutate(s: string): string {
  const at = int(s.length + 1);
  switch (int(4)) {
    case 0:
      return s.slice(0, at) + s.slice(at + 1);
    case 1:
      return s.slice(0, at) + pick([',', ']', '}', '"', ' ', '0', '.', '\\', '\x00', '\xe9', '[', 'x']) + s.slice(at);
    case 2:
      return s.slice(0, at);
    default:
      return s;
  }
}

describe('FastJsonParser (the byte lane of parseJsonBytes)', () => {
  it("either gives the strict parser's exact value or hands the document back, on 20,000 random documents", () => {
    let fast = 0;
    for (let k = 0; k < 20000; k++) {
      const text = k % 3 === 0 ? mutate(randomValue(0)) : randomValue(0);
      const bytes = k % 7 === 0 ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
      if (expectAgrees(bytes) === 'fast') fast++;
    }
    // Most well-formed documents take the fast lane.
    expect(fast).toBeGreaterThan(5000);
  });

  it('hands back everything that is not exactly the strict value: big ints, infinities, lone surrogates, bad UTF-8, depth', () => {
    for (const text of [
      '1234567890123456',
      '[18446744073709551615]',
      '1e400',
      '"\\ud800"',
      '{"a":"\\udc00"}',
      '[1,]',
      '[1 2]',
      '01',
      '[01]',
    ]) {
      expect(parseJsonBytesFast(Buffer.from(text)), text).toBe(NOT_FAST);
    }
    expect(parseJsonBytesFast(Buffer.from([0x22, 0xff, 0x22]))).toBe(NOT_FAST);
    expect(parseJsonBytesFast(Buffer.from([0xef, 0xbb, 0xbf, 0x31]))).toBe(NOT_FAST);
    expect(parseJsonBytesFast(Buffer.from('['.repeat(1025) + ']'.repeat(1025)))).toBe(NOT_FAST);
    expect(describeValue(parseJsonBytesFast(Buffer.from('['.repeat(1024) + ']'.repeat(1024))) as JsonValue)).toEqual(
      strict(Buffer.from('['.repeat(1024) + ']'.repeat(1024))),
    );
  });

  it('keeps the kinds: -0 is 0 as an int, integral floats are boxed, keys stay own data properties', () => {
    const v = parseJsonBytesFast(Buffer.from('{"__proto__":[0,-0,1.0,-0.0,2.5],"b":1,"b":2}')) as Record<
      string,
      JsonValue
    >;
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.enumerable).toBe(true);
    expect(describeValue(v)).toEqual(strict(Buffer.from('{"__proto__":[0,-0,1.0,-0.0,2.5],"b":1,"b":2}')));
    expect(v.b).toBe(2);
  });

  it('gives the strict value for runs of long id arrays that repeat earlier ones up to a point (the remembered runs)', () => {
    const ids = (n: number) => Array.from({ length: n }, () => String(int(200000)));
    // Where a document stops repeating the previous one, and how.
    const endings = [
      () => [],
      () => ids(1 + int(400)),
      () => [String(int(10))], // a shorter last id: "12,4" after "12,45"
      () => ['1.5', ...ids(3)],
      () => ['1e3'],
      () => ['1234567890123456'],
      () => ['-7', ...ids(2)],
      () => ['[1,2]', ...ids(2)],
      () => ['01'],
      () => ['"x"'],
    ];
    let prompt = ids(300);
    let generation = ids(300);
    let documents = 0;
    let fast = 0;
    for (let k = 0; k < 600; k++) {
      const r = rnd();
      if (r < 0.5) prompt = prompt.concat(generation, ids(int(300)));
      else if (r < 0.6) prompt = prompt.slice(0, int(prompt.length));
      else if (r < 0.7)
        prompt = [...prompt.slice(0, int(prompt.length)), ...pick(endings)(), ...prompt.slice(int(prompt.length))];
      else if (r < 0.75) prompt = ids(256 + int(600));
      else if (r < 0.8) {
        // The same element again, one digit longer or shorter.
        const at = int(prompt.length);
        prompt = [
          ...prompt.slice(0, at),
          rnd() < 0.5 ? prompt[at] + String(int(10)) : prompt[at].slice(0, -1) || '0',
          ...prompt.slice(at + 1),
        ];
      }
      generation = rnd() < 0.5 ? ids(300) : generation;
      const separator = rnd() < 0.9 ? ',' : pick([', ', ' ,', ',\n']);
      const tail = rnd() < 0.9 ? '' : pick([',', ' ', ', ']);
      const document = `{"generation_token_ids":[${generation.join(',')}],"prompt_token_ids":[${prompt.join(separator)}${tail}],"x":[${prompt.slice(0, 300).join(',')}]}`;
      for (const text of [document, mutate(document)]) {
        if (expectAgrees(Buffer.from(text)) === 'fast') fast++;
        documents++;
      }
    }
    expect(documents).toBe(1200);
    expect(fast).toBeGreaterThan(400);
  });

  it('does not remember runs of more than 2^20 ids, and still parses what follows them right', () => {
    const ids = Array.from({ length: (1 << 20) + 10 }, (_, i) => (i * 7919) % 150000);
    const short = ids.slice(0, 3000);
    for (const a of [short, ids, [...ids.slice(0, 2000), 5, 6], short]) {
      const text = JSON.stringify({ a });
      expect(parseJsonBytesFast(Buffer.from(text))).toEqual({ a });
    }
  });

  it('reads object keys right when many keys share the key cache (same length, same slot)', () => {
    // 3,000 distinct 3-letter keys over 256 slots: many pairs of the same length meet in a slot.
    const keys = Array.from({ length: 3000 }, (_, i) =>
      String.fromCharCode(97 + (i % 26), 97 + (Math.floor(i / 26) % 26), 65 + Math.floor(i / 676)),
    );
    expect(new Set(keys).size).toBe(3000);
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < keys.length; k += 7) {
        const group = keys.slice(k, k + 7 + round);
        const text = `{${group.map((key, j) => `"${key}":${j}`).join(',')},"${group[0]}":"last"}`;
        expect(expectAgrees(Buffer.from(text))).toBe('fast');
      }
    }
  });

  it('takes every record line of the conformance corpus that the strict parser reads, with the same value', () => {
    let lines = 0;
    const cases = join(corpusDir(), 'cases');
    for (const c of readdirSync(cases)) {
      const store = join(cases, c, 'store');
      let names: string[];
      try {
        names = readdirSync(store).filter((n) => n.endsWith('.jsonl'));
      } catch {
        continue;
      }
      for (const n of names) {
        for (const line of readFileSync(join(store, n)).toString('latin1').split('\n')) {
          if (line.trim() === '') continue;
          const bytes = Buffer.from(line, 'latin1');
          const verdict = expectAgrees(bytes);
          if (strict(bytes) !== 'error' && !/\d{16}/.test(line)) expect(verdict, line.slice(0, 80)).toBe('fast');
          lines++;
        }
      }
    }
    expect(lines).toBeGreaterThan(100);
  });
});
