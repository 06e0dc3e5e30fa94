/**
 * Python's `round(x, 4)` (docs/format.md#numeric-details): the exact binary value of `x` rounded to 4 decimal
 * places, ties to even, then the double nearest to that decimal (CPython does this with
 * dtoa mode 3 followed by strtod).
 */

const view = new DataView(new ArrayBuffer(8));

export function round4(x: number): number {
  if (x !== x || x === Infinity || x === -Infinity || x === 0) return x;
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const neg = hi >>> 31 === 1;
  const biased = (hi >>> 20) & 0x7ff;
  const fracHi = hi & 0xfffff;
  // |x| = mant × 2^exp exactly.
  let mant = (BigInt(fracHi) << 32n) | BigInt(lo);
  let exp: number;
  if (biased === 0) {
    exp = -1074;
  } else {
    mant |= 1n << 52n;
    exp = biased - 1075;
  }
  if (exp >= 0) return x; // an integer: already has no decimals
  // q = round_half_even(mant × 10^4 / 2^-exp)
  const shift = BigInt(-exp);
  const scaled = mant * 10000n;
  let q = scaled >> shift;
  const rem = scaled - (q << shift);
  const twice = rem << 1n;
  const half = 1n << shift;
  if (twice > half || (twice === half && (q & 1n) === 1n)) q += 1n;
  if (q === 0n) return neg ? -0 : 0;
  // StringToNumber is correctly rounded: the double nearest to q / 10^4.
  const r = Number(`${q}e-4`);
  return neg ? -r : r;
}
