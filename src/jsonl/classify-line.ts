import { TokcapError } from '../errors.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { noteLargeParse, rememberFailure, rememberedFailure } from './damaged-lines.js';
import type { JsonValue } from '../json/value.js';
import { validateTokenEntry, type TokenEntry } from '../records/token-entry.js';

/** What one stripped, non-blank JSONL line is: not JSON, JSON but not a TokenEntry, or an entry. */
export type LineVerdict =
  | { kind: 'bad_json'; error: TokcapError }
  | { kind: 'invalid'; error: TokcapError; value: JsonValue }
  | { kind: 'entry'; entry: TokenEntry };

/**
 * `jsonReader` reads the lines of one file, one after the other (a reader kept for the file is faster:
 * a line repeats much of the one before).
 */
export function parseLineJson(
  stripped: Uint8Array,
  context: { rolloutId?: string; file?: string },
  jsonReader = new JsonBytesReader(),
): JsonValue {
  // A large line that already failed in this command is not parsed again (damaged-lines.ts).
  const known = rememberedFailure(stripped);
  if (known !== undefined) throw new TokcapError('corrupt', known, { ...context, pyClass: 'JSONDecodeError' });
  noteLargeParse(stripped);
  try {
    return jsonReader.read(stripped);
  } catch (e) {
    if (e instanceof TokcapError) {
      rememberFailure(stripped, e.message);
      throw new TokcapError('corrupt', e.message, { ...context, pyClass: 'JSONDecodeError', cause: e });
    }
    throw e;
  }
}

export function classifyLine(
  stripped: Uint8Array,
  context: { rolloutId?: string; file?: string } = {},
  jsonReader = new JsonBytesReader(),
): LineVerdict {
  let value: JsonValue;
  try {
    value = parseLineJson(stripped, context, jsonReader);
  } catch (e) {
    if (e instanceof TokcapError) return { kind: 'bad_json', error: e };
    throw e;
  }
  try {
    // Validated as parsed: the id arrays the reader made need no second look.
    return { kind: 'entry', entry: validateTokenEntry(value, context, jsonReader.idArrays) };
  } catch (e) {
    if (e instanceof TokcapError) return { kind: 'invalid', error: e, value };
    throw e;
  }
}
