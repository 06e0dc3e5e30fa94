/** Tokenizers, offline: where one is found, loading it once, and ids to visible text. */
export {
  explicitTokenizerFile,
  findCachedTokenizer,
  type TokenizerLocation,
  type TokenizerSearch,
} from './resolve-tokenizer.js';
export { loadTokenizer } from './load-tokenizer.js';
export { TokenText, visibleWhitespace, type TextPiece, type TokenizerModel } from './token-text.js';
export { TokenizerSource, type TokenizerAnswer } from './tokenizer-source.js';
