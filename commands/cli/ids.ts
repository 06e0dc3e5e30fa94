/**
 * Rollout-id input (docs/cli.md#invocation): positional ids plus `--ids-from FILE|-`, one id per
 * line; blank lines and lines starting with `#` are ignored; duplicates are dropped, first
 * occurrences kept in order. Ids are NOT validated here (that is the batch validation's job,
 * or build's per-rollout failure).
 */
import { readFile } from 'node:fs/promises';
import { TokcapError } from '../../src/errors.js';
import { dedupeIds } from '../../src/layout/rollout-id.js';

/**
 * Splits --ids-from text into ids. Lines end with LF; a CR before the LF is dropped (CRLF files).
 * A line is blank when it is empty or only whitespace. Other lines are taken verbatim: an id
 * with surrounding spaces is kept as is and then fails validation, rather than being silently
 * changed into a different id.
 */
export function parseIdLines(text: string): string[] {
  const ids: string[] = [];
  for (let line of text.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() === '' || line.startsWith('#')) continue;
    ids.push(line);
  }
  return ids;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads ids from a file, or from `stdin` when `source` is `-`. Unreadable file -> usage error (exit 2). */
export async function readIdsFrom(source: string, stdin: NodeJS.ReadableStream): Promise<string[]> {
  let text: string;
  try {
    text = source === '-' ? await readAll(stdin) : await readFile(source, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // "ENOENT: no such file or directory, open 'x'" -> "ENOENT: no such file or directory"
    const detail = String(err?.message ?? e).replace(/, \w+ '.*'$/, '');
    throw new TokcapError('usage', `cannot read --ids-from file: ${detail}`, {
      file: source === '-' ? '<stdin>' : source,
      cause: e,
    });
  }
  return parseIdLines(text);
}

/** Positional ids, then --ids-from ids, deduplicated keeping order. */
export async function collectIds(
  positional: readonly string[],
  idsFrom: string | undefined,
  stdin: NodeJS.ReadableStream,
): Promise<string[]> {
  const fromFile = idsFrom === undefined ? [] : await readIdsFrom(idsFrom, stdin);
  return dedupeIds([...positional, ...fromFile]);
}
