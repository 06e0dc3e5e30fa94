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
import type { FileKind } from '../layout/file-names.js';
import { rawDirectory } from '../native/directory-entries.js';
import { filesOfMask, listedIds, type DirectoryListing, type IndexedListing } from '../layout/scan-directory.js';

/** Rollouts stat'ed per claim (a millisecond or so): the main thread yields between two. */
const STAT_CHUNK = 256;

/** A listing as it crosses between threads, with the state of its shared stat pass. */
export interface SharedListing {
  /** The rollout ids, in listing order, joined by newlines (one string crosses faster than 100,000). */
  ids: string;
  /** Each rollout's files (scan-directory.ts `filesOfMask`), in the order of `ids`. */
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

/**
 * A rescan's listing with every listed rollout's change signature, made in the read worker
 * (read-worker.ts, file-signature.ts `listedSignatures`).
 */
export interface RescanListing {
  listing: DirectoryListing;
  /** The rollout ids in listing order (the order of `listing.rollouts`). */
  ids: readonly string[];
  /** Each rollout's signature key, in the order of `ids` (NaN: a file could not be stat'ed). */
  keys: Float64Array;
  /** Each rollout's newest file mtime, in the order of `ids`. */
  mtimes: Float64Array;
}

/** A listing and its ids, to cross threads. */
export function sharedListing(listing: IndexedListing): { shared: SharedListing; ids: string[] } {
  return { shared: shareListing(listing), ids: listedIds(listing) };
}

/** A listing as it crosses threads (its ids stay one string: no string is made per rollout here). */
export function shareListing(listing: IndexedListing): SharedListing {
  const count = listing.masks.length;
  return {
    ids: listing.idText,
    masks: listing.masks,
    invalidNames: listing.invalidNames,
    tempStateFiles: listing.tempStateFiles,
    lockOnly: listing.lockOnly,
    mtimes: new SharedArrayBuffer(8 * count),
    next: new SharedArrayBuffer(4),
  };
}

/** Ids by their index in a listing, as `statNextChunk` takes them: an array, or `IdText`. */
export interface IdsByIndex {
  readonly length: number;
  at(index: number): string | undefined;
}

/**
 * The ids of a `SharedListing` taken from its one string as they are stat'ed, for the thread
 * that listed (its stat pass then makes one short-lived string per name, as it would anyway, and
 * no array of 100,000 kept ones).
 */
export class IdText implements IdsByIndex {
  /** Where each id starts in the text; the last entry is the text's length + 1 (past a last newline). */
  private readonly starts: Int32Array;

  /** `count`: the number of ids in `text` (the listing's masks). */
  constructor(
    private readonly text: string,
    count: number,
  ) {
    const starts = new Int32Array(count + 1);
    for (let i = 1, at = text.indexOf('\n'); i < count; i++, at = text.indexOf('\n', at + 1)) starts[i] = at + 1;
    starts[count] = text.length + 1;
    this.starts = starts;
  }

  get length(): number {
    return this.starts.length - 1;
  }

  at(index: number): string | undefined {
    return index < 0 || index >= this.length
      ? undefined
      : this.text.slice(this.starts[index], this.starts[index + 1] - 1);
  }
}

/** The listing of a `SharedListing` (rollouts in the same order) and its ids. */
export function listingOf(shared: SharedListing): { listing: DirectoryListing; ids: string[] } {
  const ids = shared.ids === '' ? [] : shared.ids.split('\n');
  const rollouts = new ListedRollouts(ids, shared.masks);
  return {
    listing: {
      rollouts,
      invalidNames: shared.invalidNames,
      tempStateFiles: shared.tempStateFiles,
      lockOnly: shared.lockOnly,
    },
    ids,
  };
}

/**
 * A listing's rollouts as a Map made when first looked into: the first scan of a load, into an
 * empty model, only counts them and takes their ids in order (100,000 Map entries made by this
 * thread would hold up the first screen by ~0.15 s).
 */
class ListedRollouts extends Map<string, ReadonlySet<FileKind>> {
  private unmade: { ids: readonly string[]; masks: Uint8Array } | undefined;

  constructor(ids: readonly string[], masks: Uint8Array) {
    super();
    this.unmade = { ids, masks };
  }

  private made(): this {
    const unmade = this.unmade;
    if (unmade) {
      this.unmade = undefined;
      for (let i = 0; i < unmade.ids.length; i++) super.set(unmade.ids[i], filesOfMask(unmade.masks[i]));
    }
    return this;
  }

  override get size(): number {
    return this.unmade ? this.unmade.ids.length : super.size;
  }
  override get(id: string) {
    return this.made() && super.get(id);
  }
  override has(id: string): boolean {
    return this.made() && super.has(id);
  }
  override set(id: string, files: ReadonlySet<FileKind>): this {
    return this.made() && super.set(id, files);
  }
  override delete(id: string): boolean {
    return this.made() && super.delete(id);
  }
  override clear(): void {
    this.unmade = undefined;
    super.clear();
  }
  override forEach(
    visit: (files: ReadonlySet<FileKind>, id: string, map: Map<string, ReadonlySet<FileKind>>) => void,
    thisArg?: unknown,
  ): void {
    this.made();
    super.forEach(visit, thisArg);
  }
  override keys() {
    return this.made() && super.keys();
  }
  override values() {
    return this.made() && super.values();
  }
  override entries() {
    return this.made() && super.entries();
  }
  override [Symbol.iterator]() {
    return this.made() && super[Symbol.iterator]();
  }
}

/** The first capture file's suffix for a mask (J, else S, I, M), as the model's own stat pass. */
function firstSuffix(mask: number): string {
  return mask & 4 ? SUFFIX.jsonl : mask & 8 ? SUFFIX.state : mask & 2 ? SUFFIX.intents : SUFFIX.incomplete;
}

/**
 * Claims the next chunk of rollouts and stats them; false when none was left to claim. Either
 * thread, any number of times: each rollout is claimed by exactly one call.
 */
export function statNextChunk(dir: string, ids: IdsByIndex, shared: SharedListing): boolean {
  const start = Atomics.add(new Int32Array(shared.next), 0, STAT_CHUNK);
  if (start >= ids.length) return false;
  const mtimes = new Float64Array(shared.mtimes);
  const end = Math.min(ids.length, start + STAT_CHUNK);
  const stat = firstMtimes(dir);
  try {
    for (let i = start; i < end; i++) mtimes[i] = stat.mtime(ids.at(i)!, shared.masks[i]);
  } finally {
    stat.done();
  }
  return true;
}

/**
 * Loads what this thread's share of the stat pass calls (koffi and libc, ~20 ms), while it waits
 * for the listing rather than once the listing is there.
 */
export function prepareStat(): void {
  rawDirectory();
}

/**
 * The first file's mtime of rollouts of `dir` (0: none), through statx relative to one
 * descriptor of the directory where available (native/directory-entries.ts: no path to resolve
 * and no Stats object per file), through Node's lstat otherwise and whenever statx fails.
 */
function firstMtimes(dir: string): { mtime(id: string, mask: number): number; done(): void } {
  const base = dir.endsWith('/') ? dir : dir + '/';
  const raw = rawDirectory();
  let dirFd: number | undefined;
  try {
    dirFd = raw?.open(dir);
  } catch {
    // lstat's way, below
  }
  const fast = raw && dirFd !== undefined ? { raw, dirFd } : undefined;
  return {
    mtime(id, mask) {
      const name = id + firstSuffix(mask);
      return fast?.raw.mtimeAt(fast.dirFd, name) ?? lstatMtime(base + name);
    },
    done() {
      fast?.raw.close(fast.dirFd);
    },
  };
}

function lstatMtime(path: string): number {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  } catch {
    return 0; // the read will say why
  }
}

/**
 * This thread's share of the stat pass (see `LoadListing.stat`). `otherDone` resolves true when
 * the other thread has claimed and stat'ed its last chunk, false when it stopped (a worker that
 * died): the rollouts left without an mtime are then stat'ed here.
 */
export async function statHere(
  dir: string,
  ids: readonly string[],
  shared: SharedListing,
  otherDone: Promise<boolean>,
): Promise<Float64Array> {
  while (statNextChunk(dir, ids, shared)) await yieldToEventLoop();
  const completed = await otherDone;
  const mtimes = new Float64Array(shared.mtimes);
  if (!completed) {
    const stat = firstMtimes(dir);
    try {
      for (let i = 0; i < ids.length; i++) if (mtimes[i] === 0) mtimes[i] = stat.mtime(ids[i], shared.masks[i]);
    } finally {
      stat.done();
    }
  }
  return mtimes;
}
