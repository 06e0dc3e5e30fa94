/** ASCII whitespace per docs/format.md#terms: 0x20, 0x09-0x0D. Nothing else (not U+00A0, not a BOM). */
export function isAsciiSpace(b: number): boolean {
  return b === 0x20 || (b >= 0x09 && b <= 0x0d);
}

/** Strips ASCII whitespace bytes from both ends; returns a view (no copy). */
export function stripBytes(buf: Buffer): Buffer {
  let s = 0;
  let e = buf.length;
  while (s < e && isAsciiSpace(buf[s])) s++;
  while (e > s && isAsciiSpace(buf[e - 1])) e--;
  return s === 0 && e === buf.length ? buf : buf.subarray(s, e);
}

export function isBlank(buf: Uint8Array): boolean {
  for (let i = 0; i < buf.length; i++) if (!isAsciiSpace(buf[i])) return false;
  return true;
}
