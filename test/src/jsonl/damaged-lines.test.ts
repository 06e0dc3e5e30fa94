/**
 * Damaged bytes cost what reading them costs: a torn tail or a corrupt line is parsed once per
 * command (src/jsonl/damaged-lines.ts), and long runs of digits, strings or nesting are read in
 * linear time. The cost checks compare two parses in the same process (a damaged line against a
 * valid line of the same size, alternated, the best of several), never a time against a bound.
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

const MB = 1024 * 1024;
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function cpuMs(f: () => void): number {
  const t = process.cpuUsage();
  f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000;
}

function parseError(bytes: Uint8Array): TokcapError {
  try {
    new JsonBytesReader().read(bytes);
  } catch (e) {
    if (e instanceof TokcapError) return e;
    throw e;
  }
  throw new Error('expected a parse error');
}

/** Best-of-five CPU of parsing `damaged` over that of a valid line of the same size. */
function costRatio(damaged: Buffer): number {
  const ids = Array.from({ length: Math.ceil(damaged.length / 7) }, (_, i) => 100000 + (i % 50000));
  const valid = Buffer.from(JSON.stringify({ a: ids }).slice(0, damaged.length - 1) + ']}');
  const okText = valid.subarray(0, valid.lastIndexOf(44)); // up to the last comma: still valid once closed
  const validLine = Buffer.concat([okText, Buffer.from(']}')]);
  new JsonBytesReader().read(validLine);
  let bestDamaged = Infinity;
  let bestValid = Infinity;
  for (let i = 0; i < 5; i++) {
    bestDamaged = Math.min(
      bestDamaged,
      cpuMs(() => parseError(damaged)),
    );
    bestValid = Math.min(
      bestValid,
      cpuMs(() => new JsonBytesReader().read(validLine)),
    );
  }
  return bestDamaged / Math.max(bestValid, 1);
}

const DAMAGED: Record<string, (n: number) => Buffer> = {
  'a torn run of digits': (n) => Buffer.concat([Buffer.from('{"a":'), Buffer.alloc(n, '1')]),
  'a run of digits too long for a double': (n) =>
    Buffer.concat([Buffer.from('{"a":'), Buffer.alloc(n, '7'), Buffer.from('}')]),
  'digits in an array': (n) => Buffer.concat([Buffer.from('{"a":[1,'), Buffer.alloc(n, '9')]),
  'a torn fraction': (n) => Buffer.concat([Buffer.from('{"a":1.'), Buffer.alloc(n, '5')]),
  'a torn string': (n) => Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(n, 'x')]),
  'a torn string with escapes': (n) => Buffer.concat([Buffer.from('{"a":"'), Buffer.from('\\n'.repeat(n / 2))]),
  'deep nesting': (n) => Buffer.alloc(n, '['),
};

describe('damaged bytes are read in linear time', () => {
  for (const [name, make] of Object.entries(DAMAGED)) {
    it(`${name}: 8 MB cost about what a valid 8 MB line costs`, () => {
      const ratio = costRatio(make(8 * MB));
      // A linear read is within a few times a valid parse; BigInt of the digits was ~50x.
      expect(ratio).toBeLessThan(6);
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
