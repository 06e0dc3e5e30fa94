/**
 * Text fitted to a number of terminal cells (./cells.ts measures them): cut with `…`, padded,
 * wrapped. Text from the store is made safe to print on the way (src/text/terminal-safe.ts).
 */
import { cellWidth as stringWidth, charWidth } from './cells.js';
import { terminalSafe as sanitize } from '../../src/text/terminal-safe.js';

/** Cuts `text` to at most `width` cells, ending with `…` when cut; control characters are escaped. */
export function truncate(raw: string, width: number): string {
  if (width <= 0) return '';
  const text = sanitize(raw);
  if (stringWidth(text) <= width) return text;
  let out = '';
  let w = 0;
  for (const ch of text) {
    const cw = charWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

export function padEnd(text: string, width: number): string {
  const t = truncate(text, width);
  return t + ' '.repeat(Math.max(0, width - stringWidth(t)));
}

export function padStart(text: string, width: number): string {
  const t = truncate(text, width);
  return ' '.repeat(Math.max(0, width - stringWidth(t))) + t;
}

/** Greedy word wrap to `width` cells; words longer than a line are cut. */
export function wrapText(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of sanitize(text).split(/\s+/).filter(Boolean)) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (stringWidth(candidate) <= width || line === '') {
      line = stringWidth(candidate) <= width ? candidate : truncate(candidate, width);
    } else {
      lines.push(line);
      line = indent + word;
      if (stringWidth(line) > width) line = truncate(line, width);
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}
