import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TokcapError } from '../../../src/errors.js';
import { parseIncompleteMarkers, readIncompleteMarkers } from '../../../src/sidefiles/incomplete-markers.js';
import { danglingIntents, parseIntents, readIntents } from '../../../src/sidefiles/intents.js';
import { useTempDirs } from '../../support/store.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const tmp = useTempDirs();

describe('parseIntents (docs/format.md#intents)', () => {
  it('reads one call id per LF-terminated line, in file order', () => {
    expect(parseIntents(bytes('c1\nc2\nc3\n'))).toEqual(['c1', 'c2', 'c3']);
  });

  it('splits on LF, CR and CRLF alike; a CRLF is one break, CR CR LF is two', () => {
    expect(parseIntents(bytes('a\nb\rc\r\nd'))).toEqual(['a', 'b', 'c', 'd']);
    // "a\r\r\nb": the empty piece between the breaks is dropped.
    expect(parseIntents(bytes('a\r\r\nb'))).toEqual(['a', 'b']);
  });

  it('splits on nothing else: VT, FF, 0x1C, NEL and U+2028 stay inside the id (same as Python bytes.splitlines)', () => {
    expect(parseIntents(bytes('a\u2028b\vc\x1cd\u0085e\r\nf'))).toEqual(['a\u2028b\vc\x1cd\u0085e', 'f']);
  });

  it('strips ASCII whitespace from each piece and drops the pieces left empty', () => {
    expect(parseIntents(bytes('  c1 \t\n\n \v\f \n\tc2\n'))).toEqual(['c1', 'c2']);
    expect(parseIntents(bytes(''))).toEqual([]);
    expect(parseIntents(bytes('\n\r\n  \r'))).toEqual([]);
  });

  it('does not strip U+00A0 or a BOM (not ASCII whitespace)', () => {
    expect(parseIntents(bytes(' \u00a0x\u00a0 \n'))).toEqual(['\u00a0x\u00a0']);
    expect(parseIntents(Buffer.from([0xef, 0xbb, 0xbf, 0x63, 0x31, 0x0a]))).toEqual(['\ufeffc1']);
  });

  it('keeps duplicates in file order', () => {
    expect(parseIntents(bytes('c1\nc2\nc1\nc1\n'))).toEqual(['c1', 'c2', 'c1', 'c1']);
  });

  it('decodes non-ASCII ids as UTF-8', () => {
    expect(parseIntents(bytes('é\n😀\n'))).toEqual(['é', '😀']);
  });

  it('fails on invalid UTF-8 with kind corrupt and pyClass UnicodeDecodeError', () => {
    let caught: unknown;
    try {
      parseIntents(Buffer.from([0x63, 0x31, 0x0a, 0xff, 0xfe, 0x0a]), 'r', '/x/r.tokens.intents');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TokcapError);
    const err = caught as TokcapError;
    expect(err.kind).toBe('corrupt');
    expect(err.pyClass).toBe('UnicodeDecodeError');
    expect(err.rolloutId).toBe('r');
    expect(err.file).toBe('/x/r.tokens.intents');
    expect(err.pythonString().startsWith('UnicodeDecodeError: ')).toBe(true);
  });

  it('fails on a truncated multi-byte sequence and on an encoded surrogate', () => {
    expect(() => parseIntents(Buffer.from([0x61, 0xc3]))).toThrow(TokcapError);
    expect(() => parseIntents(Buffer.from([0xed, 0xa0, 0x80]))).toThrow(TokcapError);
  });
});

describe('readIntents', () => {
  it('returns [] for a missing file and parses an existing one', async () => {
    const dir = tmp();
    const p = path.join(dir, 'r.tokens.intents');
    expect(await readIntents(p, 'r')).toEqual([]);
    fs.writeFileSync(p, 'c1\r\nc2\n');
    expect(await readIntents(p, 'r')).toEqual(['c1', 'c2']);
  });
});

describe('danglingIntents', () => {
  it('lists intents without an entry, in intent order, duplicates included', () => {
    expect(danglingIntents(['c1', 'c3', 'c2', 'c3', 'c4'], ['c1', 'c2'], [])).toEqual(['c3', 'c3', 'c4']);
  });

  it('excludes refused calls (newer-store rule)', () => {
    expect(danglingIntents(['c1', 'c2', 'c3', 'c2'], ['c1'], ['c2'])).toEqual(['c3']);
  });

  it('accepts any iterables, e.g. a Set of entry ids', () => {
    expect(danglingIntents(['a', 'b'], new Set(['b']), new Set<string>())).toEqual(['a']);
  });
});

describe('parseIncompleteMarkers (docs/format.md#incomplete-markers)', () => {
  it('gives one mark per LF-terminated line', () => {
    expect(parseIncompleteMarkers(bytes('c1\nc2\n'))).toEqual(['c1', 'c2']);
  });

  it('keeps empty call ids, anywhere', () => {
    expect(parseIncompleteMarkers(bytes('\n'))).toEqual(['']);
    expect(parseIncompleteMarkers(bytes('c1\n\nc2\n'))).toEqual(['c1', '', 'c2']);
    expect(parseIncompleteMarkers(bytes('c1\n\n'))).toEqual(['c1', '']);
  });

  it('drops only the final empty piece after the last LF; an unterminated last mark is kept', () => {
    expect(parseIncompleteMarkers(bytes('c1\nc2'))).toEqual(['c1', 'c2']);
    expect(parseIncompleteMarkers(bytes(''))).toEqual([]);
  });

  it('strips nothing and splits on LF only (CR and spaces are part of the id)', () => {
    expect(parseIncompleteMarkers(bytes(' c1 \r\n\tc2\rc3\n'))).toEqual([' c1 \r', '\tc2\rc3']);
  });

  it('reads a missing file as no marks', async () => {
    const dir = tmp();
    const p = path.join(dir, 'r.tokens.incomplete');
    expect(await readIncompleteMarkers(p, 'r')).toEqual([]);
    fs.writeFileSync(p, 'c1\n\n');
    expect(await readIncompleteMarkers(p, 'r')).toEqual(['c1', '']);
  });
});
