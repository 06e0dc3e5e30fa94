/**
 * The process's tokenizers from the command line and the environment (src/ reads none):
 * `--tokenizer PATH` (or `none`), else TOKCAP_TOKENIZER, else each record's `model` in the local
 * Hugging Face hub cache: HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub and
 * ~/.cache/huggingface/hub, in that order. Creating the source reads nothing; a tokenizer is
 * looked up and loaded when a text is first asked for.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TokenizerSource } from '../../src/tokenizer/tokenizer-source.js';
import type { TokenText } from '../../src/tokenizer/token-text.js';

export function hubCaches(env: NodeJS.ProcessEnv): string[] {
  const dirs: string[] = [];
  if (env.HF_HUB_CACHE) dirs.push(env.HF_HUB_CACHE);
  if (env.HF_HOME) dirs.push(join(env.HF_HOME, 'hub'));
  if (env.XDG_CACHE_HOME) dirs.push(join(env.XDG_CACHE_HOME, 'huggingface', 'hub'));
  dirs.push(join(env.HOME || homedir(), '.cache', 'huggingface', 'hub'));
  return [...new Set(dirs)];
}

export function tokenizerSource(option: string | undefined, env: NodeJS.ProcessEnv): TokenizerSource {
  const given = option ?? (env.TOKCAP_TOKENIZER || undefined);
  const disabled = given === 'none';
  return new TokenizerSource({ explicit: disabled ? undefined : given, hubCaches: hubCaches(env), disabled });
}

/**
 * Where a command says why ids are shown without text. A tokenizer the user named
 * (`--tokenizer`, TOKCAP_TOKENIZER) that cannot be used is a warning on stderr; a model that is
 * only missing from the cache is said beside the ids, in text output alone: nobody asked for text,
 * so cron and `--json` runs get no stderr line for it.
 */
export function tokenizerNote(
  option: string | undefined,
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void,
  beside: (line: string) => void,
): (line: string) => void {
  return option !== undefined || env.TOKCAP_TOKENIZER ? warn : beside;
}

/**
 * A model's decoder for a command's output, or null (ids only): why there is none is said once
 * per process through `note` (a missing tokenizer is no failure: the ids are still the answer).
 */
export class CommandTokenizers {
  private readonly noted = new Set<string>();

  constructor(
    private readonly source: TokenizerSource,
    private readonly note: (line: string) => void,
  ) {}

  async textFor(model: string): Promise<TokenText | null> {
    let message: string;
    try {
      const answer = await this.source.forModel(model);
      if (answer.text) return answer.text;
      message = answer.missing;
    } catch (e) {
      message = e instanceof Error ? e.message : String(e);
    }
    if (!this.noted.has(message)) {
      this.noted.add(message);
      this.note(`ids shown without text: ${message}`);
    }
    return null;
  }
}

/** The decoders of several models (each looked up once), for a view that renders synchronously. */
export async function textsByModel(
  tokenizers: CommandTokenizers,
  models: Iterable<string>,
): Promise<Map<string, TokenText | null>> {
  const texts = new Map<string, TokenText | null>();
  for (const m of models) if (!texts.has(m)) texts.set(m, await tokenizers.textFor(m));
  return texts;
}
