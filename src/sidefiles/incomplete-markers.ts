import { readRegularFile } from '../layout/safe-open.js';

/**
 * Parses `<R>.tokens.incomplete` (docs/format.md#incomplete-markers): one mark per LF-terminated line, as written.
 * Split on LF, drop only the empty piece after the last LF, strip nothing, keep empty ids.
 */
export function parseIncompleteMarkers(bytes: Uint8Array): string[] {
  if (bytes.length === 0) return [];
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const pieces = text.split('\n');
  if (pieces[pieces.length - 1] === '') pieces.pop();
  return pieces;
}

export async function readIncompleteMarkers(path: string, rolloutId?: string): Promise<string[]> {
  const bytes = await readRegularFile(path, rolloutId);
  return bytes === undefined ? [] : parseIncompleteMarkers(bytes);
}
