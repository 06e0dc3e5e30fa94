/**
 * Orders strings by Unicode code point (= UTF-8 byte order). UTF-16 code-unit order differs
 * only where a surrogate (a code point above U+FFFF) meets a unit in U+E000…U+FFFF, which is
 * corrected at the first differing unit.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 || y >= 0xd800) {
      // Move surrogates above U+E000…U+FFFF; both ranges keep their internal order.
      x = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
      y = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
