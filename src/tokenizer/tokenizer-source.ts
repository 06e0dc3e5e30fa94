import { explicitTokenizerFile, findCachedTokenizer, type TokenizerSearch } from './resolve-tokenizer.js';
import { loadTokenizer } from './load-tokenizer.js';
import type { TokenText } from './token-text.js';

/** A model's tokenizer, or why there is none (one line naming the paths tried). */
export type TokenizerAnswer =
  { readonly text: TokenText; readonly file: string } | { readonly text: null; readonly missing: string };

/**
 * The tokenizers of one process: each model is looked up once and each file loaded once
 * (`loadTokenizer`); nothing is read until a model's text is asked for. `disabled` (the user
 * said `--tokenizer none`) answers every model with ids only.
 */
export class TokenizerSource {
  private readonly answers = new Map<string, Promise<TokenizerAnswer>>();
  private readonly explicitFile: string | undefined;

  constructor(private readonly search: TokenizerSearch & { readonly disabled?: boolean }) {
    // An explicit path that does not exist is the user's mistake: said at once (exit 2).
    this.explicitFile =
      search.explicit !== undefined && !search.disabled ? explicitTokenizerFile(search.explicit) : undefined;
  }

  forModel(model: string): Promise<TokenizerAnswer> {
    let answer = this.answers.get(model);
    if (answer === undefined) {
      answer = this.resolve(model);
      this.answers.set(model, answer);
    }
    return answer;
  }

  private async resolve(model: string): Promise<TokenizerAnswer> {
    if (this.search.disabled) return { text: null, missing: 'decoding is off (--tokenizer none)' };
    const file = this.explicitFile ?? findCachedTokenizer(model, this.search.hubCaches);
    if (typeof file === 'string') return { text: await loadTokenizer(file), file };
    if (file.file !== null) return { text: await loadTokenizer(file.file), file: file.file };
    if (model === '') return { text: null, missing: 'the records name no model: give --tokenizer PATH to decode' };
    return {
      text: null,
      missing: `no tokenizer for ${model} in the Hugging Face cache (tried ${file.tried.join(', ')}): give --tokenizer PATH to decode`,
    };
  }
}
