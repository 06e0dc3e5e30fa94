/**
 * orjson's float layout (docs/format.md#float-layout): shortest round-trip digits D (n digits) and exponent E
 * with |x| = 0.D × 10^E, written fixed for 1 <= E <= 16 and -4 <= E <= 0, scientific otherwise.
 *
 * ECMAScript's Number::toString yields exactly the shortest round-trip digits (closest to the
 * exact value, ties to even), so D and E are read from `String(Math.abs(x))`. That string is
 * fixed for 1e-7 < |x| < 1e21 and scientific (`d.ddde±k`, one digit before the point) otherwise;
 * its fixed form coincides with ours whenever E is in our fixed ranges.
 */

export interface FloatLayoutOptions {
  /**
   * Write positive exponents with `+` (`1e+16`, orjson >= 3.11.7) instead of without (`1e16`,
   * earlier orjson). Default true.
   */
  plusExponent?: boolean;
}

/** Layout of a double as orjson writes a float; NaN and ±Infinity become `null`. */
export function formatFloat(x: number, opts?: FloatLayoutOptions): string {
  return layoutFloat(x, opts?.plusExponent ?? true);
}

/** `formatFloat` with the exponent style as a plain argument (no options object per call). */
export function layoutFloat(x: number, plus: boolean): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  if (x !== x || x === Infinity || x === -Infinity) return 'null';
  const neg = x < 0;
  const s = String(neg ? -x : x);
  const body = layoutPositive(s, plus);
  return neg ? '-' + body : body;
}

function layoutPositive(s: string, plus: boolean): string {
  const ePos = s.indexOf('e');
  if (ePos >= 0) {
    // |x| < 1e-6 or |x| >= 1e21: E - 1 = k, outside both fixed ranges; JS writes "e+k"/"e-k".
    return plus ? s : s.replace('e+', 'e');
  }
  const dot = s.indexOf('.');
  if (s.charCodeAt(0) === 48) {
    // "0.000ddd": E = -(number of zeros after the point).
    let z = 2;
    while (s.charCodeAt(z) === 48) z++;
    const zeros = z - 2;
    if (zeros <= 4) return s;
    return scientific(s.slice(z), -zeros, plus);
  }
  const intLen = dot < 0 ? s.length : dot;
  if (intLen <= 16) return dot < 0 ? s + '.0' : s;
  // 17..21 integer digits (JS stays fixed below 1e21): scientific for orjson.
  const digits = (dot < 0 ? s : s.slice(0, dot) + s.slice(dot + 1)).replace(/0+$/, '');
  return scientific(digits, intLen, plus);
}

/** d1[.d2…dn]e<E-1> for digits D (no leading or trailing zeros) and exponent E. */
function scientific(digits: string, e: number, plus: boolean): string {
  const k = e - 1;
  const mantissa = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
  return mantissa + (k < 0 ? 'e' + k : plus ? 'e+' + k : 'e' + k);
}
