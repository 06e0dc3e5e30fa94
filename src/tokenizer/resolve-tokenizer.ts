import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TokcapError } from '../errors.js';

/**
 * Where a tokenizer comes from, offline only: a path the user gave (a tokenizer.json, or a
 * Hugging Face model directory holding one), or the record's `model` found in the local Hugging
 * Face hub cache as the hub lays it out (`models--ORG--NAME/snapshots/REVISION/tokenizer.json`,
 * the revision `refs/main` names first). Nothing here makes a network request.
 */

export interface TokenizerSearch {
  /** `--tokenizer PATH` or TOKCAP_TOKENIZER: used for every model when given. */
  readonly explicit?: string;
  /** Hub cache directories in order (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub). */
  readonly hubCaches: readonly string[];
}

/** The tokenizer.json of an explicit path; a usage error naming the path when there is none. */
export function explicitTokenizerFile(path: string): string {
  const kind = statKind(path);
  if (kind === 'file') return path;
  if (kind === 'dir') {
    const inside = join(path, 'tokenizer.json');
    if (statKind(inside) === 'file') return inside;
    throw new TokcapError('usage', `tokenizer ${path}: no tokenizer.json in that directory`);
  }
  throw new TokcapError('usage', `tokenizer ${path}: no such file or directory`);
}

/** The result of looking a model up: its file, or the paths tried. */
export type TokenizerLocation = { readonly file: string } | { readonly file: null; readonly tried: readonly string[] };

/** The cached tokenizer.json of `model` (`ORG/NAME`), trying `refs/main`'s snapshot first. */
export function findCachedTokenizer(model: string, hubCaches: readonly string[]): TokenizerLocation {
  const tried: string[] = [];
  if (model === '' || model.includes('..')) return { file: null, tried };
  const folder = `models--${model.split('/').join('--')}`;
  for (const cache of hubCaches) {
    const repo = join(cache, folder);
    const snapshots = join(repo, 'snapshots');
    let main: string | undefined;
    try {
      main = readFileSync(join(repo, 'refs', 'main'), 'utf8').trim();
    } catch {
      // no refs/main: any snapshot will do
    }
    const revisions: string[] = [];
    if (main && /^[\w.-]+$/.test(main)) revisions.push(main);
    try {
      for (const r of readdirSync(snapshots).sort()) if (r !== main) revisions.push(r);
    } catch {
      // no snapshots in this cache
    }
    for (const r of revisions) {
      const file = join(snapshots, r, 'tokenizer.json');
      if (statKind(file) === 'file') return { file };
    }
    tried.push(join(snapshots, '*', 'tokenizer.json'));
  }
  return { file: null, tried };
}

function statKind(path: string): 'file' | 'dir' | null {
  try {
    const s = statSync(path);
    return s.isFile() ? 'file' : s.isDirectory() ? 'dir' : null;
  } catch {
    return null;
  }
}
