/**
 * The text of token-id arrays as the byte parser read them, kept for one build so that its
 * result writes those ids by copying their bytes instead of formatting every id again.
 *
 * Why: most of a build result's bytes are its prompts' ids (54 of the 66 MB of `build --json`
 * on full-200x12), and a linked call's prompt is the record's own array (projection.ts). The
 * byte parser (parse-json-fast.ts) adds an array here only when its text is exactly what the
 * writer (canonical-json.ts) would write for it: `[`, integers of up to 15 digits without a sign
 * or a leading zero, bare commas, `]`; a text with spaces, or an array the parser did not read
 * whole as ids, is not added and is formatted by the writer
 * (docs/decisions/0012-result-ids-from-j-text.md).
 *
 * A text is a view of the bytes being parsed (a copy of J), not a copy. So whoever fills one
 * keeps those bytes unchanged, and the arrays unchanged, until the result is written, then
 * calls `clear` (src/rollout-read/build-outcome.ts: parsed arrays are never changed by a build).
 */
export class IdArrayTexts {
  private readonly texts = new Map<readonly unknown[], Uint8Array>();

  add(array: readonly unknown[], text: Uint8Array): void {
    this.texts.set(array, text);
  }

  /** The text of `array` as read, when it was added. */
  get(array: readonly unknown[]): Uint8Array | undefined {
    return this.texts.get(array);
  }

  clear(): void {
    this.texts.clear();
  }
}
