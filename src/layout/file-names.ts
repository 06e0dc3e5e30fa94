/** The files of one rollout, named by what they hold. */
export type FileKind = 'jsonl' | 'state' | 'intents' | 'incomplete' | 'lock';

/** docs/format.md#files: the files a rollout owns, all flat in the capture directory. */
export const SUFFIX = {
  jsonl: '.tokens.jsonl',
  state: '.tokens.state.json',
  intents: '.tokens.intents',
  incomplete: '.tokens.incomplete',
  lock: '.tokens.lock',
} as const satisfies Record<FileKind, string>;

/** The four suffixes that make a rollout present (a lock file alone does not), sorted. */
export const CAPTURE_SUFFIXES = [SUFFIX.incomplete, SUFFIX.intents, SUFFIX.jsonl, SUFFIX.state] as const;

export const TEMP_STATE_PATTERN = /^\.tokens-state-[a-z0-9_]{8}$/;

export interface RolloutPaths {
  jsonl: string;
  state: string;
  intents: string;
  incomplete: string;
  lock: string;
}

export function rolloutFileName(id: string, kind: FileKind): string {
  return id + SUFFIX[kind];
}

export function rolloutPaths(dir: string, id: string): RolloutPaths {
  const base = dir.endsWith('/') ? dir : dir + '/';
  return {
    jsonl: base + id + SUFFIX.jsonl,
    state: base + id + SUFFIX.state,
    intents: base + id + SUFFIX.intents,
    incomplete: base + id + SUFFIX.incomplete,
    lock: base + id + SUFFIX.lock,
  };
}
