/**
 * Damaged bytes cost what reading them costs: a torn tail or a corrupt line is parsed once per
 * command (src/jsonl/damaged-lines.ts), and long runs of digits, strings or nesting are read in
 * linear time. Linear is checked by counting work (the characters the parser reads, and the
 * length of the literals it hands to BigInt, whose conversion is quadratic); what the parse costs
 * next to a valid line of the same size is measured by bench/damaged-lines.ts.
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TokcapError } from '../../../src/errors.js';
import { JsonBytesReader } from '../../../src/json/parse-json.js';
import { classifyLine } from '../../../src/jsonl/classify-line.js';
import { largeLinesParsed, REMEMBERED_MIN_BYTES } from '../../../src/jsonl/damaged-lines.js';
import { cli, fakeIo } from '../../support/cli.js';
import { DAMAGED } from '../../support/damaged-lines.js';

const MB = 1024 * 1024;
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** The parse error of `bytes`, with the work done: characters read and the longest BigInt literal. */
function parseCounted(bytes: Uint8Array): { error: TokcapError; reads: number; longestBigInt: number } {
  const charCodeAt = String.prototype.charCodeAt;
  const bigInt = globalThis.BigInt;
  let reads = 0;
  let longestBigInt = 0;
  String.prototype.charCodeAt = function (this: string, i: number) {
    reads++;
    return charCodeAt.call(this, i);
  };
  globalThis.BigInt = new Proxy(bigInt, {
    apply(target, self, args: unknown[]) {
      if (typeof args[0] === 'string') longestBigInt = Math.max(longestBigInt, args[0].length);
      return Reflect.apply(target, self, args) as bigint;
    },
  });
  try {
    new JsonBytesReader().read(bytes);
  } catch (e) {
    if (!(e instanceof TokcapError)) throw e;
    return { error: e, reads, longestBigInt };
  } finally {
    String.prototype.charCodeAt = charCodeAt;
    globalThis.BigInt = bigInt;
  }
  throw new Error('expected a parse error');
}

describe('damaged bytes are read in linear time', () => {
  for (const [name, make] of Object.entries(DAMAGED)) {
    it(`${name}: 8 MB are read at most twice per byte, and no long literal goes to BigInt`, () => {
      const bytes = make(8 * MB);
      const { error, reads, longestBigInt } = parseCounted(bytes);
      expect(error.kind).toBe('corrupt');
      expect(reads).toBeLessThanOrEqual(2 * bytes.length + 64);
      // Past 20 digits an integer is outside the 64-bit range: no BigInt needed to tell.
      expect(longestBigInt).toBeLessThanOrEqual(21);
    });
  }
});

describe('a damaged large line is parsed once per command', () => {
  it('classifyLine remembers a failed large line by content, and only that line', () => {
    const torn = Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(REMEMBERED_MIN_BYTES, 'x')]);
    const before = largeLinesParsed();
    const first = classifyLine(torn, { rolloutId: 'r0' });
    const second = classifyLine(Buffer.from(torn), { rolloutId: 'r1' });
    expect(largeLinesParsed() - before).toBe(1);
    expect(first.kind).toBe('bad_json');
    expect(second.kind).toBe('bad_json');
    if (first.kind !== 'bad_json' || second.kind !== 'bad_json') return;
    expect(second.error.message).toBe(first.error.message);
    expect(second.error.rolloutId).toBe('r1');
    // Same length and edges, one byte different in the middle: parsed again, with its own error.
    const other = Buffer.from(torn);
    other[other.length >> 1] = 0x01;
    const third = classifyLine(other, { rolloutId: 'r0' });
    expect(largeLinesParsed() - before).toBe(2);
    expect(third.kind).toBe('bad_json');
    if (third.kind === 'bad_json') expect(third.error.message).not.toBe(first.error.message);
  });

  const commands = [
    ['inspect', 'r0'],
    ['inspect', '--deep'],
    ['verify-digests'],
    ['build'],
    ['build', 'r0', '--json'],
    ['export', '--out', '-'],
  ];
  commands.forEach((args, k) => {
    it(`${args.join(' ')}: a torn 1 MB tail is parsed once`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tokcap-damaged-'));
      temps.push(dir);
      const made = await cli([
        'fixture',
        dir,
        '--rollouts',
        '2',
        '--calls',
        '2',
        '--prompt',
        '10',
        '--gen',
        '5',
        '--turn',
        '3',
        '-q',
      ]);
      expect(made.code).toBe(0);
      // A tail of its own for each command: the lines remembered are this thread's, across commands.
      appendFileSync(join(dir, 'r0.tokens.jsonl'), Buffer.concat([Buffer.from(`{"a${k}":`), Buffer.alloc(MB, '1')]));
      const before = largeLinesParsed();
      const r = await cli([args[0], dir, ...args.slice(1)], fakeIo({ env: { TOKCAP_WORKERS: '1' } }));
      expect(r.stderr).not.toMatch(/internal/i);
      expect(largeLinesParsed() - before).toBe(1);
    });
  });
});
