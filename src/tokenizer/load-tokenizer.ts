import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TokcapError } from '../errors.js';
import { TokenText, type TokenizerModel } from './token-text.js';

/**
 * Loads a tokenizer.json (and the tokenizer_config.json beside it, when there is one) with Hugging
 * Face's pure-JavaScript tokenizers package, imported only here and only when text is asked for:
 * a command that shows no text never loads it. Each file is loaded once per process.
 */
const loaded = new Map<string, Promise<TokenText>>();

export function loadTokenizer(file: string): Promise<TokenText> {
  let p = loaded.get(file);
  if (p === undefined) {
    p = load(file);
    loaded.set(file, p);
  }
  return p;
}

async function load(file: string): Promise<TokenText> {
  let document: unknown;
  try {
    document = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new TokcapError('io', `tokenizer ${file} cannot be read: ${e instanceof Error ? e.message : String(e)}`);
  }
  let config: unknown = {};
  try {
    config = JSON.parse(await readFile(join(dirname(file), 'tokenizer_config.json'), 'utf8'));
  } catch {
    // optional: the tokenizer.json alone decodes
  }
  const { Tokenizer } = await import('@huggingface/tokenizers');
  try {
    return new TokenText(new Tokenizer(document as object, config as object) as unknown as TokenizerModel);
  } catch (e) {
    throw new TokcapError(
      'usage',
      `tokenizer ${file} is not a tokenizer.json this library reads: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}
