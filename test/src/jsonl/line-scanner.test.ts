import * as fs from 'node:fs';
import { open } from 'node:fs/promises';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanFileLines, scanLines, type LineScanOptions, type ScannedLine } from '../../../src/jsonl/line-scanner.js';
import { useTempDirs } from '../../support/store.js';

/** A ScannedLine with the (view) buffer copied out as text, so it can be kept and compared. */
interface Seen {
  lineNo: number;
  start: number;
  end: number;
  hasNewline: boolean;
  text: string;
}

const seen = (l: ScannedLine): Seen => ({
  lineNo: l.lineNo,
  start: l.start,
  end: l.end,
  hasNewline: l.hasNewline,
  text: Buffer.from(l.stripped).toString('latin1'),
});

const tmp = useTempDirs();

function writeFile(content: string | Buffer): string {
  const p = path.join(tmp(), 'x.tokens.jsonl');
  fs.writeFileSync(p, content);
  return p;
}

async function scan(file: string, options: LineScanOptions = {}, stopAfter?: number) {
  const lines: Seen[] = [];
  const fh = await open(file, 'r');
  try {
    const r = await scanLines(
      fh,
      (l) => {
        lines.push(seen(l));
        if (stopAfter !== undefined && lines.length >= stopAfter) return false;
      },
      options,
    );
    return { lines, end: r.end, count: r.lines };
  } finally {
    await fh.close();
  }
}

// Offsets:  "ab\n" 0..2 | "\n" 3 | "  cdef\r\n" 4..11 | "ghijklmnopq\n" 12..23 | "xyz" 24..26
const SAMPLE = 'ab\n\n  cdef\r\nghijklmnopq\nxyz';
const SAMPLE_LINES: Seen[] = [
  { lineNo: 1, start: 0, end: 3, hasNewline: true, text: 'ab' },
  { lineNo: 2, start: 3, end: 4, hasNewline: true, text: '' },
  { lineNo: 3, start: 4, end: 12, hasNewline: true, text: 'cdef' },
  { lineNo: 4, start: 12, end: 24, hasNewline: true, text: 'ghijklmnopq' },
  { lineNo: 5, start: 24, end: 27, hasNewline: false, text: 'xyz' },
];

describe('scanLines', () => {
  it('reports byte offsets and 1-based line numbers, blank lines included, with lines spanning 7-byte chunks', async () => {
    const r = await scan(writeFile(SAMPLE), { chunkSize: 7 });
    expect(r.lines).toEqual(SAMPLE_LINES);
    expect(r.end).toBe(27);
    expect(r.count).toBe(5);
  });

  it('gives the same lines whatever the chunk size (1 byte up to the default)', async () => {
    const file = writeFile(SAMPLE);
    for (const chunkSize of [1, 2, 3, 4, 5, 7, 11, 12, 13, 24, 27, 64, undefined]) {
      const r = await scan(file, chunkSize === undefined ? {} : { chunkSize });
      expect(r.lines, `chunkSize ${chunkSize}`).toEqual(SAMPLE_LINES);
      expect(r.end).toBe(27);
    }
  });

  it('handles a line longer than several chunks whose LF is the first byte of a chunk', async () => {
    // chunkSize 4: "abcd" | "efgh" | "\nij" -> the LF opens the third chunk.
    const r = await scan(writeFile('abcdefgh\nij'), { chunkSize: 4 });
    expect(r.lines).toEqual([
      { lineNo: 1, start: 0, end: 9, hasNewline: true, text: 'abcdefgh' },
      { lineNo: 2, start: 9, end: 11, hasNewline: false, text: 'ij' },
    ]);
  });

  it('strips CRLF, but only LF separates lines (a bare CR stays inside the line)', async () => {
    const r = await scan(writeFile('a\r\nb\rc\n\r\n'), { chunkSize: 7 });
    expect(r.lines.map((l) => l.text)).toEqual(['a', 'b\rc', '']);
    expect(r.lines.every((l) => l.hasNewline)).toBe(true);
  });

  it('strips only ASCII whitespace from the line (a NBSP byte pair survives)', async () => {
    const r = await scan(writeFile(Buffer.from([0x20, 0x09, 0xc2, 0xa0, 0x78, 0x0b, 0x0c, 0x0a])));
    expect(Buffer.from(r.lines[0].text, 'latin1')).toEqual(Buffer.from([0xc2, 0xa0, 0x78]));
  });

  it('reports no phantom empty line after a final LF, and nothing for an empty file', async () => {
    const r1 = await scan(writeFile('a\n'), { chunkSize: 7 });
    expect(r1.lines).toEqual([{ lineNo: 1, start: 0, end: 2, hasNewline: true, text: 'a' }]);
    expect(r1.end).toBe(2);
    const r2 = await scan(writeFile(''));
    expect(r2.lines).toEqual([]);
    expect(r2).toMatchObject({ end: 0, count: 0 });
  });

  it('marks a last line without LF with hasNewline false and ends it at the end of the file', async () => {
    const r = await scan(writeFile('{"a":1}\n{"b":'), { chunkSize: 7 });
    expect(r.lines[1]).toEqual({ lineNo: 2, start: 8, end: 13, hasNewline: false, text: '{"b":' });
  });

  it('starts at `start` and numbers lines from `firstLineNo`', async () => {
    const r = await scan(writeFile(SAMPLE), { start: 4, firstLineNo: 3, chunkSize: 7 });
    expect(r.lines).toEqual(SAMPLE_LINES.slice(2));
    expect(r.end).toBe(27);
  });

  it('numbers from 1 when only `start` is given, and a mid-line start begins a partial line there', async () => {
    const r = await scan(writeFile(SAMPLE), { start: 6, chunkSize: 7 });
    expect(r.lines[0]).toEqual({ lineNo: 1, start: 6, end: 12, hasNewline: true, text: 'cdef' });
    expect(r.lines.map((l) => l.lineNo)).toEqual([1, 2, 3]);
  });

  it('reads nothing past `limit`: a line cut by the limit is reported without its LF', async () => {
    const r = await scan(writeFile(SAMPLE), { limit: 20, chunkSize: 7 });
    expect(r.lines).toEqual([
      ...SAMPLE_LINES.slice(0, 3),
      { lineNo: 4, start: 12, end: 20, hasNewline: false, text: 'ghijklmn' },
    ]);
    expect(r.end).toBe(20);
  });

  it('a limit exactly at a line end yields whole lines only', async () => {
    const r = await scan(writeFile(SAMPLE), { limit: 12, chunkSize: 7 });
    expect(r.lines).toEqual(SAMPLE_LINES.slice(0, 3));
    expect(r.end).toBe(12);
  });

  it('stops early when onLine returns false and reports where it stopped', async () => {
    const r = await scan(writeFile(SAMPLE), { chunkSize: 7 }, 2);
    expect(r.lines).toEqual(SAMPLE_LINES.slice(0, 2));
    expect(r.end).toBe(4);
    expect(r.count).toBe(2);
    // Early stop inside a line assembled across chunks.
    const r2 = await scan(writeFile(SAMPLE), { chunkSize: 7 }, 4);
    expect(r2.lines).toEqual(SAMPLE_LINES.slice(0, 4));
    expect(r2.end).toBe(24);
  });
});

describe('scanFileLines', () => {
  it('scans an existing file and says it exists', async () => {
    const file = writeFile(SAMPLE);
    const lines: Seen[] = [];
    const r = await scanFileLines(file, (l) => void lines.push(seen(l)), { chunkSize: 7 });
    expect(lines).toEqual(SAMPLE_LINES);
    expect(r).toEqual({ end: 27, lines: 5, exists: true });
  });

  it('treats a missing file as empty, without calling onLine', async () => {
    let calls = 0;
    const r = await scanFileLines(path.join(tmp(), 'absent.tokens.jsonl'), () => void calls++);
    expect(r).toEqual({ end: 0, lines: 0, exists: false });
    expect(calls).toBe(0);
  });
});
