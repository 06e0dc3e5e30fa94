import { describe, expect, it } from 'vitest';
import { isAsciiSpace, isBlank, stripBytes } from '../../../src/jsonl/bytes.js';

const b = (...bytes: number[]) => Buffer.from(bytes);

describe('ASCII whitespace (docs/format.md#terms)', () => {
  it('is exactly 0x20 and 0x09-0x0D', () => {
    const spaces: number[] = [];
    for (let i = 0; i < 256; i++) if (isAsciiSpace(i)) spaces.push(i);
    expect(spaces).toEqual([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]);
  });
});

describe('stripBytes', () => {
  it('removes leading and trailing space, TAB, LF, VT, FF and CR', () => {
    const input = Buffer.from(' \t\n\v\f\r{"a": 1}\r\n \t', 'latin1');
    expect(stripBytes(input).toString('latin1')).toBe('{"a": 1}');
  });

  it('keeps inner whitespace', () => {
    expect(stripBytes(Buffer.from('  a \r b  ')).toString()).toBe('a \r b');
  });

  it('does not strip U+00A0 (C2 A0), a lone 0xA0 byte, a UTF-8 BOM, NEL (C2 85), NUL or 0x1C-0x1F', () => {
    const nbsp = b(0xc2, 0xa0, 0x78, 0xc2, 0xa0);
    expect(stripBytes(nbsp)).toEqual(nbsp);
    expect(stripBytes(b(0xa0, 0x78, 0xa0))).toEqual(b(0xa0, 0x78, 0xa0));
    const bom = b(0xef, 0xbb, 0xbf, 0x7b, 0x7d);
    expect(stripBytes(bom)).toEqual(bom);
    expect(stripBytes(b(0xc2, 0x85, 0x78))).toEqual(b(0xc2, 0x85, 0x78));
    expect(stripBytes(b(0x00, 0x78, 0x00))).toEqual(b(0x00, 0x78, 0x00));
    expect(stripBytes(b(0x1c, 0x1d, 0x1e, 0x1f))).toEqual(b(0x1c, 0x1d, 0x1e, 0x1f));
  });

  it('strips ASCII whitespace around, but not through, a BOM or NBSP', () => {
    expect(stripBytes(b(0x20, 0xef, 0xbb, 0xbf, 0x78, 0x0d, 0x0a))).toEqual(b(0xef, 0xbb, 0xbf, 0x78));
    expect(stripBytes(b(0x09, 0xc2, 0xa0, 0x20))).toEqual(b(0xc2, 0xa0));
  });

  it('returns the same buffer when there is nothing to strip, and an empty view for all-whitespace input', () => {
    const x = Buffer.from('abc');
    expect(stripBytes(x)).toBe(x);
    expect(stripBytes(Buffer.from(' \r\n\t')).length).toBe(0);
    expect(stripBytes(Buffer.alloc(0)).length).toBe(0);
  });

  it('returns a view into the input, not a copy', () => {
    const x = Buffer.from('  abc  ');
    const s = stripBytes(x);
    x[2] = 0x58; // 'X'
    expect(s.toString()).toBe('Xbc');
  });
});

describe('isBlank', () => {
  it('is true only for empty or all-ASCII-whitespace input', () => {
    expect(isBlank(Buffer.alloc(0))).toBe(true);
    expect(isBlank(Buffer.from(' \t\r\n\v\f'))).toBe(true);
    expect(isBlank(b(0xc2, 0xa0))).toBe(false);
    expect(isBlank(b(0xef, 0xbb, 0xbf))).toBe(false);
    expect(isBlank(Buffer.from(' x '))).toBe(false);
  });
});
