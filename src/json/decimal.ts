/**
 * The part of reading a decimal float that both JSON parsers share (parse-json.ts over a string,
 * parse-json-fast.ts over bytes): the mantissa limit for exact accumulation and Clinger's fast
 * path. Scanning stays in each parser, where the source type makes the loop fast.
 */

/** Largest m for which m * 10 + 9 is still below 2^53 (so the accumulation stays exact). */
export const ACC_LIMIT = 900719925474099;

/** Exactly representable powers of ten. */
const POW10: number[] = [];
for (let k = 0, p = 1; k <= 22; k++, p *= 10) POW10.push(p);

/**
 * m × 10^e10 (negated when `neg`), correctly rounded, when one exact operation gives it:
 * `m` is an exact integer below 2^53 and |e10| <= 22 (Clinger's fast path); else undefined,
 * and the caller converts the literal's text with Number(), which is correctly rounded too.
 */
export function fastDecimal(m: number, e10: number, neg: boolean): number | undefined {
  if (e10 < -22 || e10 > 22) return undefined;
  const x = e10 < 0 ? m / POW10[-e10] : m * POW10[e10];
  return neg ? -x : x;
}
