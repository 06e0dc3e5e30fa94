/**
 * Python's repr() of a str (docs/format.md#store-errors), used verbatim inside reference error messages.
 */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + quote;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (isPrintable(cp)) out += ch;
    else if (cp <= 0xff) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp <= 0xffff) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + quote;
}

/**
 * Approximates Python's str.isprintable(): controls, surrogates, unassigned, private-use and
 * separators other than the ASCII space are not printable.
 */
function isPrintable(cp: number): boolean {
  if (cp === 0x20) return true;
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0)) return false;
  if (cp < 0x7f) return true;
  const ch = String.fromCodePoint(cp);
  return !/[\p{C}\p{Z}]/u.test(ch);
}
