import { opendir } from 'node:fs/promises';
import { ioError } from '../errors.js';
import { compareCodePoints } from '../json/canonical-json.js';
import { CAPTURE_SUFFIXES, SUFFIX, TEMP_STATE_PATTERN, type FileKind } from './file-names.js';
import { isValidRolloutId } from './rollout-id.js';

/** How one directory entry is classified (FORMAT.md §1.4). */
export type EntryClass =
  | { kind: 'temp_state'; name: string }
  | { kind: 'capture'; name: string; rolloutId: string; file: FileKind }
  | { kind: 'invalid_name'; name: string; file: FileKind }
  | { kind: 'foreign'; name: string };

const SUFFIX_KINDS = Object.entries(SUFFIX) as [FileKind, string][];

export function classifyName(name: string): EntryClass {
  if (TEMP_STATE_PATTERN.test(name)) return { kind: 'temp_state', name };
  for (const [file, suffix] of SUFFIX_KINDS) {
    if (!name.endsWith(suffix)) continue;
    const id = name.slice(0, -suffix.length);
    if (isValidRolloutId(id)) return { kind: 'capture', name, rolloutId: id, file };
    // Lock files with an invalid id are not reported as invalid names (§1.4).
    return file === 'lock' ? { kind: 'foreign', name } : { kind: 'invalid_name', name, file };
  }
  return { kind: 'foreign', name };
}

export interface DirectoryListing {
  /** Rollouts with at least one of J, S, I, M, and which of those files exist. */
  rollouts: Map<string, Set<FileKind>>;
  /** Capture-suffixed names with an invalid id, sorted by code point. */
  invalidNames: string[];
  /** Orphan-able temporary state files (`.tokens-state-XXXXXXXX`). */
  tempStateFiles: string[];
  /** Rollout ids that have only a lock file. */
  lockOnly: string[];
}

/**
 * Lists the capture directory once, dot-files included, classifying every name. Holds only
 * names, never contents: a directory of 100k rollouts is a few megabytes here.
 */
export async function scanDirectory(dir: string): Promise<DirectoryListing> {
  const rollouts = new Map<string, Set<FileKind>>();
  const locks = new Set<string>();
  const invalidNames: string[] = [];
  const tempStateFiles: string[] = [];
  let handle;
  try {
    handle = await opendir(dir, { bufferSize: 256 });
  } catch (e) {
    throw ioError(e, dir);
  }
  try {
    for await (const ent of handle) {
      const c = classifyName(ent.name);
      if (c.kind === 'capture') {
        if (c.file === 'lock') {
          locks.add(c.rolloutId);
          continue;
        }
        let files = rollouts.get(c.rolloutId);
        if (!files) rollouts.set(c.rolloutId, (files = new Set()));
        files.add(c.file);
      } else if (c.kind === 'invalid_name') invalidNames.push(c.name);
      else if (c.kind === 'temp_state') tempStateFiles.push(c.name);
    }
  } catch (e) {
    throw ioError(e, dir);
  }
  const lockOnly = [...locks].filter((id) => !rollouts.has(id)).sort(compareCodePoints);
  invalidNames.sort(compareCodePoints);
  tempStateFiles.sort();
  return { rollouts, invalidNames, tempStateFiles, lockOnly };
}

/** Sorted rollout ids of a listing (ids are ASCII, so plain comparison is code-point order). */
export function sortedRolloutIds(listing: DirectoryListing): string[] {
  return [...listing.rollouts.keys()].sort();
}

export const CAPTURE_FILE_KINDS: readonly FileKind[] = ['incomplete', 'intents', 'jsonl', 'state'];
export { CAPTURE_SUFFIXES };
