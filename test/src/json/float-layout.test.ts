import { describe, it, expect } from 'vitest';
import { formatFloat, layoutFloat } from '../../../src/json/float-layout.js';

/** [value, orjson < 3.11.7 output]; the `+` style differs only by `e+` for positive exponents. */
// Some literals are written as a writer printed them, with more digits than the double keeps:
// that rounding is what the vectors test.
/* eslint-disable no-loss-of-precision */
const VECTORS: [number, string][] = [
  // docs/format.md#float-layout table and docs/format.md#test-vectors
  [1.0, '1.0'],
  [100.0, '100.0'],
  [1700000000.0, '1700000000.0'],
  [1e15, '1000000000000000.0'],
  [2.5, '2.5'],
  [1700000000.25, '1700000000.25'],
  [0.1, '0.1'],
  [0.001, '0.001'],
  [0.0001234, '0.0001234'],
  [0.00001234, '0.00001234'],
  [1e-5, '0.00001'],
  [1e-7, '1e-7'],
  [1.234e-6, '1.234e-6'],
  [-1.25e-7, '-1.25e-7'],
  [5e-324, '5e-324'],
  [-0.0, '-0.0'],
  [0.0, '0.0'],
  [1e16, '1e16'],
  [1.2345678901234568e17, '1.2345678901234568e17'],
  [1.5e300, '1.5e300'],
  // thresholds and extremes (checked against orjson 3.8.3)
  [-1.7976931348623157e308, '-1.7976931348623157e308'],
  [123456789012345680000.0, '1.2345678901234568e20'],
  [1.2345678901234568e20, '1.2345678901234568e20'],
  [1e-6, '1e-6'],
  [1e-4, '0.0001'],
  [9.999999999999999e-5, '0.00009999999999999999'],
  [0.30000000000000004, '0.30000000000000004'],
  [9007199254740993.0, '9007199254740992.0'],
  [9999999999999998.0, '9999999999999998.0'],
  [12345678901234567.0, '1.2345678901234568e16'],
  [1e21, '1e21'],
  [1e22, '1e22'],
  [2.2250738585072014e-308, '2.2250738585072014e-308'],
  [0.5, '0.5'],
  [1234567.125, '1234567.125'],
  [-3.0, '-3.0'],
  [-0.03125, '-0.03125'],
  [-0.5, '-0.5'],
];
/* eslint-enable no-loss-of-precision */

describe('formatFloat', () => {
  it('lays out every example without the + sign (orjson < 3.11.7)', () => {
    for (const [x, expected] of VECTORS) expect(formatFloat(x, { plusExponent: false }), String(x)).toBe(expected);
  });

  it('writes positive exponents with + by default (orjson >= 3.11.7)', () => {
    for (const [x, expected] of VECTORS) {
      const plus = expected.replace(/e(\d)/, 'e+$1');
      expect(formatFloat(x), String(x)).toBe(plus);
      expect(formatFloat(x, { plusExponent: true })).toBe(plus);
      expect(layoutFloat(x, true)).toBe(plus);
    }
    expect(formatFloat(1e16)).toBe('1e+16');
    expect(formatFloat(1.2345678901234568e17)).toBe('1.2345678901234568e+17');
    expect(formatFloat(1e-7)).toBe('1e-7');
  });

  it('switches to scientific exactly outside 1 <= E <= 16 and -4 <= E <= 0', () => {
    expect(formatFloat(9999999999999998)).toBe('9999999999999998.0'); // E = 16
    expect(formatFloat(1e16)).toBe('1e+16'); // E = 17
    expect(formatFloat(1.5e15)).toBe('1500000000000000.0');
    expect(formatFloat(0.00001)).toBe('0.00001'); // E = -4
    expect(formatFloat(0.000009)).toBe('9e-6'); // E = -5
    expect(formatFloat(0.0000099)).toBe('9.9e-6');
    expect(formatFloat(0.00009999)).toBe('0.00009999');
  });

  it('writes null for NaN and infinities', () => {
    expect(formatFloat(NaN)).toBe('null');
    expect(formatFloat(Infinity)).toBe('null');
    expect(formatFloat(-Infinity)).toBe('null');
  });

  it('round-trips: the layout parses back to the same double', () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const buf = new DataView(new ArrayBuffer(8));
    for (let i = 0; i < 20000; i++) {
      buf.setUint32(0, Math.floor(rnd() * 2 ** 32));
      buf.setUint32(4, Math.floor(rnd() * 2 ** 32));
      const x = buf.getFloat64(0);
      if (!Number.isFinite(x)) continue;
      const s = formatFloat(x);
      expect(Object.is(Number(s), x), s).toBe(true);
      expect(s).toMatch(/^-?(\d+\.\d+|\d(\.\d+)?e[+-]\d+)$/);
    }
  });
});
