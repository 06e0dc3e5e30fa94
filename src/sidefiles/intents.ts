import { TokcapError } from '../errors.js';
import { readRegularFile } from '../layout/safe-open.js';
import { isAsciiSpace } from '../jsonl/bytes.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses `<R>.tokens.intents` (docs/format.md#intents): split on LF, CR or CRLF, strip ASCII
 * whitespace, drop empty pieces, decode strict UTF-8. Order and duplicates are kept.
 */
export function parseIntents(bytes: Uint8Array, rolloutId?: string, file?: string): string[] {
  const out: string[] = [];
  let start = 0;
  const n = bytes.length;
  const flush = (end: number) => {
    let s = start;
    let e = end;
    while (s < e && isAsciiSpace(bytes[s])) s++;
    while (e > s && isAsciiSpace(bytes[e - 1])) e--;
    if (e > s) {
      try {
        out.push(strictUtf8.decode(bytes.subarray(s, e)));
      } catch (err) {
        throw new TokcapError(
          'corrupt',
          `'utf-8' codec can't decode the intents of rollout ${rolloutId ?? '?'}: invalid UTF-8`,
          {
            rolloutId,
            file,
            pyClass: 'UnicodeDecodeError',
            cause: err,
          },
        );
      }
    }
  };
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b === 0x0a || b === 0x0d) {
      flush(i);
      if (b === 0x0d && bytes[i + 1] === 0x0a) i++;
      start = i + 1;
    }
  }
  flush(n);
  return out;
}

/** Reads the intents file; a missing file has no intents. */
export async function readIntents(path: string, rolloutId?: string): Promise<string[]> {
  const bytes = await readRegularFile(path, rolloutId);
  return bytes === undefined ? [] : parseIntents(bytes, rolloutId, path);
}

/** Intents without an entry and not refused, in intent order with duplicates (docs/format.md#freeze step 6). */
export function danglingIntents(
  intents: readonly string[],
  entryCallIds: Iterable<string>,
  refusedCallIds: Iterable<string>,
): string[] {
  const known = new Set(entryCallIds);
  for (const r of refusedCallIds) known.add(r);
  return intents.filter((c) => !known.has(c));
}
