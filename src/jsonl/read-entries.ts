import type { FileHandle } from 'node:fs/promises';
import type { TokcapError } from '../errors.js';
import type { TokenEntry } from '../records/token-entry.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { classifyLine } from './classify-line.js';
import { scanBufferLines, scanLines, type ScannedLine } from './line-scanner.js';

export interface ReadEntriesOptions {
  rolloutId: string;
  file: string;
  /**
   * 'fail' (the reference's read, docs/format.md#read-entries): any bad line fails, a torn final line included.
   * 'ignore' (read-only preview, docs/format.md#commands): a final unparseable line followed by nothing but
   * whitespace is skipped and reported as `tornTail`; everything else still fails.
   */
  tornTail: 'fail' | 'ignore';
  /** Read only up to this byte offset (a size observed under the lock). */
  limit?: number;
  /** Reads the lines' JSON: the calling thread's reader for its job (default: one for this file). */
  jsonReader?: JsonBytesReader;
}

export interface EntriesRead {
  entries: TokenEntry[];
  /** Byte offset of a skipped torn final line (only with tornTail 'ignore'). */
  tornTailAt?: number;
  size: number;
}

/** Reads every entry of J in file order (docs/format.md#read-entries). The caller holds the lock. */
export async function readEntries(fh: FileHandle, options: ReadEntriesOptions): Promise<EntriesRead> {
  const collect = entryCollector(options);
  const { end } = await scanLines(fh, collect.onLine, { limit: options.limit });
  return collect.finish(end);
}

/** `readEntries` over bytes already copied (under the lock, by the caller). */
export function entriesFromBytes(bytes: Uint8Array, options: ReadEntriesOptions): EntriesRead {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const collect = entryCollector(options);
  const limited = options.limit !== undefined && options.limit < buf.length ? buf.subarray(0, options.limit) : buf;
  scanBufferLines(limited, collect.onLine);
  return collect.finish(limited.length);
}

function entryCollector(options: ReadEntriesOptions) {
  const entries: TokenEntry[] = [];
  const context = { rolloutId: options.rolloutId, file: options.file };
  const jsonReader = options.jsonReader ?? new JsonBytesReader();
  let pending: { error: TokcapError; start: number } | undefined;
  let failure: TokcapError | undefined;
  const onLine = (line: ScannedLine): false | void => {
    if (line.stripped.length === 0) return;
    if (pending) {
      // Content after an unparseable line: it was a corrupt middle line, not a torn tail.
      failure = pending.error;
      return false;
    }
    const verdict = classifyLine(line.stripped, context, jsonReader);
    if (verdict.kind === 'entry') {
      entries.push(verdict.entry);
      return;
    }
    if (verdict.kind === 'bad_json' && options.tornTail === 'ignore') {
      pending = { error: verdict.error, start: line.start };
      return;
    }
    failure = verdict.error;
    return false;
  };
  const finish = (end: number): EntriesRead => {
    if (failure) throw failure;
    return { entries, tornTailAt: pending?.start, size: end };
  };
  return { onLine, finish };
}
