import { spawnSync } from 'node:child_process';
import { describe, it, expect } from 'vitest';
import { round4 } from '../../../src/json/round4.js';

describe('round4', () => {
  it('matches the examples of docs/format.md#numeric-details', () => {
    expect(round4(1 / 32)).toBe(0.0312);
    expect(round4(3 / 32)).toBe(0.0938);
    expect(round4(5 / 32)).toBe(0.1562);
    expect(round4(7 / 32)).toBe(0.2188);
    expect(round4(2 / 3)).toBe(0.6667);
    expect(round4(1 / 3)).toBe(0.3333);
    expect(round4(0.00005)).toBe(0.0001); // the double lies above the tie
    expect(round4(0.00015)).toBe(0.0001); // ... and this one below it
    expect(round4(1.0)).toBe(1);
    expect(round4(0.5)).toBe(0.5);
    expect(round4(0.99995)).toBe(1); // 0.99995 is stored as 0.99995000000000000550…
    expect(round4(0.99996)).toBe(1);
    expect(round4(12345.67895)).toBe(12345.6789); // stored as 12345.67894999…
  });

  it('differs from the naive recipes where they are wrong', () => {
    expect(Math.round((1 / 32) * 1e4) / 1e4).toBe(0.0313);
    expect(round4(1 / 32)).toBe(0.0312);
  });

  it('keeps zeros, signs, integers and non-finite values', () => {
    expect(Object.is(round4(0), 0)).toBe(true);
    expect(Object.is(round4(-0), -0)).toBe(true);
    expect(Object.is(round4(-0.00001), -0)).toBe(true);
    expect(Object.is(round4(0.00001), 0)).toBe(true);
    expect(round4(-1 / 32)).toBe(-0.0312);
    expect(round4(-2 / 3)).toBe(-0.6667);
    expect(round4(1e300)).toBe(1e300);
    expect(round4(2 ** 53 + 2)).toBe(2 ** 53 + 2);
    expect(round4(5e-324)).toBe(0);
    expect(round4(NaN)).toBeNaN();
    expect(round4(Infinity)).toBe(Infinity);
    expect(round4(-Infinity)).toBe(-Infinity);
  });

  const hasPython = spawnSync('python3', ['-c', 'pass']).status === 0;
  it.skipIf(!hasPython)('agrees with Python round(x, 4) on many values', () => {
    let seed = 2024;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const xs: number[] = [];
    for (let k = 1; k < 64; k++) xs.push(k / 32, -k / 32, k / 64, k / 3, k / 7, k / 10000 + 0.00005);
    for (let i = 0; i < 2000; i++) {
      xs.push(rnd());
      xs.push(Math.floor(rnd() * 100000) / 100000);
      xs.push((Math.floor(rnd() * 20000) + 0.5) / 10000); // near ties
      xs.push(rnd() * 10 ** (Math.floor(rnd() * 12) - 6) * (rnd() < 0.5 ? -1 : 1));
      const a = Math.floor(rnd() * 50) + 1;
      xs.push(Math.floor(rnd() * (a + 1)) / a); // fractions like the builder's
    }
    xs.push(0.99995, 0.00005, 1e-300, 123456789.00005, 4503599627370495.5, 1e16 + 2);
    const py = spawnSync(
      'python3',
      ['-c', 'import sys\nfor l in sys.stdin.read().split():\n    print(repr(round(float(l), 4)))'],
      {
        input: xs.map(String).join('\n'),
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    expect(py.status, py.stderr).toBe(0);
    const out = py.stdout.trim().split('\n');
    expect(out).toHaveLength(xs.length);
    xs.forEach((x, i) => {
      expect(Object.is(round4(x), Number(out[i])), `round(${x}, 4) = ${out[i]}, got ${round4(x)}`).toBe(true);
    });
  });
});
