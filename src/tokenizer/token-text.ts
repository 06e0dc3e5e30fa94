import type { TokenId } from '../digest/token-digest.js';

/** What tokcap needs of a loaded tokenizer (the part of @huggingface/tokenizers' Tokenizer it calls). */
export interface TokenizerModel {
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  id_to_token(id: number): string | undefined;
}

/** One piece of decoded text and the ids it came from (one id, or several that only decode together). */
export interface TextPiece {
  readonly ids: readonly TokenId[];
  /** Index of the first id in the decoded sequence. */
  readonly index: number;
  readonly text: string;
}

const REPLACEMENT = '\ufffd';
/** Ids a byte-level tokenizer may need to complete one character (UTF-8 is at most 4 bytes). */
const MAX_GROUP = 4;

/** Ids to text with a loaded tokenizer; special tokens kept as their text (`<|im_end|>`). */
export class TokenText {
  constructor(private readonly model: TokenizerModel) {}

  /** Whether the tokenizer knows the id. */
  knows(id: TokenId): boolean {
    const n = Number(id);
    return Number.isSafeInteger(n) && n >= 0 && this.model.id_to_token(n) !== undefined;
  }

  /** The text of `ids`; an id the tokenizer does not know shows as `<?ID>`. */
  decode(ids: readonly TokenId[]): string {
    return this.pieces(ids)
      .map((p) => p.text)
      .join('');
  }

  /**
   * The text of each id, in order; ids that decode only together (a character split over byte
   * tokens) form one piece. Decoding id by id keeps the text aligned with the ids, so a log-prob
   * shade or an id on hover belongs to exactly the text it produced.
   */
  pieces(ids: readonly TokenId[]): TextPiece[] {
    const out: TextPiece[] = [];
    let i = 0;
    while (i < ids.length) {
      if (!this.knows(ids[i])) {
        out.push({ ids: [ids[i]], index: i, text: `<?${String(ids[i])}>` });
        i++;
        continue;
      }
      let n = 1;
      let text = this.model.decode([Number(ids[i])]);
      // A lone part of a multi-byte character decodes to U+FFFD: take the next ids with it.
      while (text.endsWith(REPLACEMENT) && n < MAX_GROUP && i + n < ids.length && this.knows(ids[i + n])) {
        n++;
        text = this.model.decode(ids.slice(i, i + n).map(Number));
      }
      if (text.endsWith(REPLACEMENT) && n > 1) {
        // Never completed: the id by itself, as the tokenizer shows it.
        n = 1;
        text = this.model.decode([Number(ids[i])]);
      }
      out.push({ ids: ids.slice(i, i + n), index: i, text });
      i += n;
    }
    return out;
  }
}

/**
 * Text with its whitespace made visible, for one line: `⏎` for a line feed, `⇥` for a tab, `␍`
 * for a carriage return and `·` for a space (in windows of a few tokens, where a space at an edge
 * would vanish).
 */
export function visibleWhitespace(text: string, spaces = true): string {
  let out = text.replace(/\n/g, '⏎').replace(/\t/g, '⇥').replace(/\r/g, '␍');
  if (spaces) out = out.replace(/ /g, '·');
  return out;
}
