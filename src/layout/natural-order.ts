import { compareCodePoints } from '../json/canonical-json.js';

/**
 * Natural order of strings: runs of ASCII digits compare as numbers (`t1-r2` before `t1-r10`),
 * everything else by code point. Equal by that measure (`r2` and `r02`), code-point order
 * decides, so the order is total and the same on every machine. Numbers of any length compare
 * exactly (by length without leading zeros, then digit by digit), never through floats.
 */
export function compareNatural(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      const ea = digitsEnd(a, i);
      const eb = digitsEnd(b, j);
      const c = compareDigitRuns(a.slice(i, ea), b.slice(j, eb));
      if (c !== 0) return c;
      i = ea;
      j = eb;
      continue;
    }
    if (ca !== cb) return compareCodePoints(a.slice(i), b.slice(j));
    i += 1;
    j += 1;
  }
  const rest = a.length - i - (b.length - j);
  if (rest !== 0) return rest < 0 ? -1 : 1;
  return compareCodePoints(a, b);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function digitsEnd(s: string, from: number): number {
  let k = from;
  while (k < s.length && isDigit(s.charCodeAt(k))) k += 1;
  return k;
}

function compareDigitRuns(x: string, y: string): number {
  const a = x.replace(/^0+/, '');
  const b = y.replace(/^0+/, '');
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
