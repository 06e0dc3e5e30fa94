import { open, type FileHandle } from 'node:fs/promises';
import { stripBytes } from './bytes.js';

/**
 * One physical line of a JSONL file, split on LF only (docs/format.md#line-framing). Offsets are bytes from
 * the start of the file: the index (`indexed_size`) is in bytes, so the scanner never decodes.
 */
export interface ScannedLine {
  /** 1-based physical line number, blank lines included (docs/conformance.md#verify-findings). */
  lineNo: number;
  /** Byte offset of the first byte of the line. */
  start: number;
  /** Byte offset just after the line: after its LF, or the end of the file without one. */
  end: number;
  /** Whether the line was terminated by LF. */
  hasNewline: boolean;
  /** The line's bytes without the LF, stripped of ASCII whitespace (a view; copy to keep). */
  stripped: Buffer;
}

export interface LineScanOptions {
  /** Byte offset to start at (the line numbering then starts at `firstLineNo`). */
  start?: number;
  firstLineNo?: number;
  /** Read at most up to this offset (a snapshot of the size taken under the lock). */
  limit?: number;
  chunkSize?: number;
}

const DEFAULT_CHUNK = 1 << 20;

/**
 * Streams the lines of an open file in chunks, calling `onLine` for every physical line
 * (including blank ones). A line longer than a chunk is assembled across reads; memory is
 * bounded by the longest line, not the file. `onLine` may return `false` to stop early.
 */
export async function scanLines(
  fh: FileHandle,
  onLine: (line: ScannedLine) => boolean | void,
  options: LineScanOptions = {},
): Promise<{ end: number; lines: number }> {
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  let pos = options.start ?? 0;
  const limit = options.limit ?? (await fh.stat()).size;
  let lineNo = (options.firstLineNo ?? 1) - 1;
  let carry: Buffer | null = null;
  let carryStart = pos;
  const buf = Buffer.allocUnsafe(chunkSize);
  while (pos < limit) {
    const want = Math.min(chunkSize, limit - pos);
    const { bytesRead } = await fh.read(buf, 0, want, pos);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, from);
      if (nl === -1) break;
      let lineBytes: Buffer;
      let start: number;
      if (carry) {
        lineBytes = Buffer.concat([carry, chunk.subarray(from, nl)]);
        start = carryStart;
        carry = null;
      } else {
        lineBytes = chunk.subarray(from, nl);
        start = pos + from;
      }
      lineNo++;
      const keepGoing = onLine({ lineNo, start, end: pos + nl + 1, hasNewline: true, stripped: stripBytes(lineBytes) });
      if (keepGoing === false) return { end: pos + nl + 1, lines: lineNo };
      from = nl + 1;
    }
    if (from < chunk.length) {
      const rest = Buffer.from(chunk.subarray(from));
      if (carry) carry = Buffer.concat([carry, rest]);
      else {
        carry = rest;
        carryStart = pos + from;
      }
    }
    pos += bytesRead;
  }
  if (carry && carry.length > 0) {
    lineNo++;
    onLine({ lineNo, start: carryStart, end: pos, hasNewline: false, stripped: stripBytes(carry) });
  }
  return { end: pos, lines: lineNo };
}

/** Opens `path` read-only and scans it; a missing file scans as empty. */
export async function scanFileLines(
  path: string,
  onLine: (line: ScannedLine) => boolean | void,
  options: LineScanOptions = {},
): Promise<{ end: number; lines: number; exists: boolean }> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { end: 0, lines: 0, exists: false };
    throw e;
  }
  try {
    return { ...(await scanLines(fh, onLine, options)), exists: true };
  } finally {
    await fh.close();
  }
}

/**
 * The same walk over bytes already in memory: `buf` holds the file from byte `baseOffset` on
 * (readers copy J under the shared lock, release it, then parse, so a writer never waits for a
 * parse). Offsets and line numbers are reported as in the file.
 */
export function scanBufferLines(
  buf: Buffer,
  onLine: (line: ScannedLine) => boolean | void,
  options: { baseOffset?: number; firstLineNo?: number } = {},
): { end: number; lines: number } {
  const base = options.baseOffset ?? 0;
  let lineNo = (options.firstLineNo ?? 1) - 1;
  let from = 0;
  const n = buf.length;
  while (from < n) {
    const nl = buf.indexOf(0x0a, from);
    const stop = nl === -1 ? n : nl;
    lineNo++;
    const keepGoing = onLine({
      lineNo,
      start: base + from,
      end: base + (nl === -1 ? n : nl + 1),
      hasNewline: nl !== -1,
      stripped: stripBytes(buf.subarray(from, stop)),
    });
    if (keepGoing === false) return { end: base + (nl === -1 ? n : nl + 1), lines: lineNo };
    if (nl === -1) break;
    from = nl + 1;
  }
  return { end: base + n, lines: lineNo };
}
