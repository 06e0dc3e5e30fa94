/**
 * Terminal cell arithmetic for the watch view, without a runtime dependency: how many columns a
 * string takes (untrusted text is made safe to print by src/text/terminal-safe.ts).
 *
 * Widths: combining marks and zero-width characters take 0 cells, East Asian wide / fullwidth
 * characters and emoji take 2, everything else 1. This matches terminals for the text the view
 * shows (ids are ASCII; call ids and messages are usually ASCII); the components also tell Ink to
 * truncate, so a rare disagreement can never add a line.
 */

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]$/u;
const EMOJI = /^\p{Extended_Pictographic}$/u;

const WIDE_RANGES: readonly [number, number][] = [
  [0x1100, 0x115f],
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
];

export function charWidth(ch: string): number {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp < 0x300) return 1;
  if (ZERO_WIDTH.test(ch)) return 0;
  for (const [lo, hi] of WIDE_RANGES) if (cp >= lo && cp <= hi) return 2;
  if (cp >= 0x1f000 && EMOJI.test(ch)) return 2;
  return 1;
}

/** Columns taken by plain text (no escape sequences). */
export function cellWidth(text: string): number {
  let w = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) {
      w++;
      continue;
    }
    const cp = text.codePointAt(i)!;
    if (cp > 0xffff) i++;
    w += charWidth(String.fromCodePoint(cp));
  }
  return w;
}
