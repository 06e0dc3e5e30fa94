/**
 * The stat pass of a live load, shared by two threads: the read worker lists the directory
 * (while the main thread loads the renderer), then both threads lstat the first capture file of
 * every listed rollout (J, else S, I, M: the file the model's own stat pass takes), each
 * claiming chunks of the listing from one shared counter and writing the mtimes into one shared
 * array. Names and mtimes only: no capture file is opened and no lock is taken here (the rows
 * are read later, under their locks, by the main thread).
 */
import { lstatSync } from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { SUFFIX } from '../layout/file-names.js';
import { filesOfMask, maskOfFiles, type DirectoryListing } from '../layout/scan-directory.js';

/** Rollouts stat'ed per claim (a millisecond or so): the main thread yields between two. */
const STAT_CHUNK = 256;

/** A listing as it crosses between threads, with the state of its shared stat pass. */
export interface SharedListing {
  /** The rollout ids, in listing order, joined by newlines (one string crosses faster than 100,000). */
  ids: string;
  /** Each rollout's files (scan-directory.ts `maskOfFiles`), in the order of `ids`. */
  masks: Uint8Array;
  invalidNames: string[];
  tempStateFiles: string[];
  lockOnly: string[];
  /** Float64: the first file's mtime of each rollout (ms; 0 when it cannot be stat'ed). */
  mtimes: SharedArrayBuffer;
  /** Int32 [0]: the index of the next rollout to claim. */
  next: SharedArrayBuffer;
}

/** A listing whose stat pass runs in two threads, as the directory model takes it (see `statHere`). */
export interface LoadListing {
  listing: DirectoryListing;
  /** The rollout ids in listing order (the order of `listing.rollouts`). */
  ids: readonly string[];
  /**
   * Takes this thread's share of the stat pass, yielding to the event loop between chunks, and
   * resolves with every rollout's first-file mtime (in the order of `ids`; 0: none) once the
   * other thread's share is done too.
   */
  stat(): Promise<Float64Array>;
}

export function sharedListing(listing: DirectoryListing): { shared: SharedListing; ids: string[] } {
  const ids: string[] = [];
  const masks = new Uint8Array(listing.rollouts.size);
  for (const [id, files] of listing.rollouts) {
    masks[ids.length] = maskOfFiles(files);
    ids.push(id);
  }
  const shared = {
    ids: ids.join('\n'),
    masks,
    invalidNames: listing.invalidNames,
    tempStateFiles: listing.tempStateFiles,
    lockOnly: listing.lockOnly,
    mtimes: new SharedArrayBuffer(8 * ids.length),
    next: new SharedArrayBuffer(4),
  };
  return { shared, ids };
}

/** The listing of a `SharedListing` (rollouts in the same order) and its ids. */
export function listingOf(shared: SharedListing): { listing: DirectoryListing; ids: string[] } {
  const ids = shared.ids === '' ? [] : shared.ids.split('\n');
  const rollouts = new Map<string, ReturnType<typeof filesOfMask>>();
  ids.forEach((id, i) => rollouts.set(id, filesOfMask(shared.masks[i])));
  return { listing: { rollouts, invalidNames: shared.invalidNames, tempStateFiles: shared.tempStateFiles, lockOnly: shared.lockOnly }, ids };
}

/** The first capture file's suffix for a mask (J, else S, I, M), as the model's own stat pass. */
function firstSuffix(mask: number): string {
  return mask & 4 ? SUFFIX.jsonl : mask & 8 ? SUFFIX.state : mask & 2 ? SUFFIX.intents : SUFFIX.incomplete;
}

/**
 * Claims the next chunk of rollouts and stats them; false when none was left to claim. Either
 * thread, any number of times: each rollout is claimed by exactly one call.
 */
export function statNextChunk(dir: string, ids: readonly string[], shared: SharedListing): boolean {
  const start = Atomics.add(new Int32Array(shared.next), 0, STAT_CHUNK);
  if (start >= ids.length) return false;
  const mtimes = new Float64Array(shared.mtimes);
  const base = dir.endsWith('/') ? dir : dir + '/';
  const end = Math.min(ids.length, start + STAT_CHUNK);
  for (let i = start; i < end; i++) mtimes[i] = firstMtime(base, ids[i], shared.masks[i]);
  return true;
}

function firstMtime(base: string, id: string, mask: number): number {
  try {
    return lstatSync(base + id + firstSuffix(mask), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  } catch {
    return 0; // the read will say why
  }
}

/**
 * This thread's share of the stat pass (see `LoadListing.stat`). `otherDone` resolves true when
 * the other thread has claimed and stat'ed its last chunk, false when it stopped (a worker that
 * died): the rollouts left without an mtime are then stat'ed here.
 */
export async function statHere(dir: string, ids: readonly string[], shared: SharedListing, otherDone: Promise<boolean>): Promise<Float64Array> {
  while (statNextChunk(dir, ids, shared)) await yieldToEventLoop();
  const completed = await otherDone;
  const mtimes = new Float64Array(shared.mtimes);
  if (!completed) {
    const base = dir.endsWith('/') ? dir : dir + '/';
    for (let i = 0; i < ids.length; i++) if (mtimes[i] === 0) mtimes[i] = firstMtime(base, ids[i], shared.masks[i]);
  }
  return mtimes;
}
