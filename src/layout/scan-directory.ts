import { opendirSync, readdirSync, type Dir } from 'node:fs';
import { ioError } from '../errors.js';
import { compareCodePoints } from '../json/code-point-order.js';
import { CAPTURE_SUFFIXES, SUFFIX, TEMP_STATE_PATTERN, type FileKind } from './file-names.js';
import { isValidRolloutId } from './rollout-id.js';
import { filterShard, inShard, type Shard } from './shard.js';
import { rawDirectory, type RawDirectory } from '../native/directory-entries.js';
import { ByteIdIndex, FNV_OFFSET, fnvStep } from './byte-id-index.js';

/** How one directory entry is classified (docs/format.md#classifying-names). */
export type EntryClass =
  | { kind: 'temp_state'; name: string }
  | { kind: 'capture'; name: string; rolloutId: string; file: FileKind }
  | { kind: 'invalid_name'; name: string; file: FileKind }
  | { kind: 'foreign'; name: string };

const KIND_OF_SUFFIX = new Map<string, FileKind>(
  (Object.entries(SUFFIX) as [FileKind, string][]).map(([k, suffix]) => [suffix, k]),
);

export function classifyName(name: string): EntryClass {
  if (name.charCodeAt(0) === 0x2e && TEMP_STATE_PATTERN.test(name)) return { kind: 'temp_state', name };
  // Every suffix starts with '.tokens' and none contains it again, so the only candidate is the
  // piece from the last '.tokens' on (same result as trying each suffix with endsWith).
  const at = name.lastIndexOf('.tokens');
  const file = at === -1 ? undefined : KIND_OF_SUFFIX.get(name.slice(at));
  if (file === undefined) return { kind: 'foreign', name };
  const id = name.slice(0, at);
  if (isValidRolloutId(id)) return { kind: 'capture', name, rolloutId: id, file };
  // Lock files with an invalid id are not reported as invalid names (docs/format.md#classifying-names).
  return file === 'lock' ? { kind: 'foreign', name } : { kind: 'invalid_name', name, file };
}

export interface DirectoryListing {
  /**
   * Rollouts with at least one of J, S, I, M, and which of those files exist. The sets are
   * shared between rollouts with the same files (one per combination): read-only.
   */
  rollouts: Map<string, ReadonlySet<FileKind>>;
  /** Capture-suffixed names with an invalid id, sorted by code point. */
  invalidNames: string[];
  /** Orphan-able temporary state files (`.tokens-state-XXXXXXXX`). */
  tempStateFiles: string[];
  /** Rollout ids that have only a lock file. */
  lockOnly: string[];
}

const MASK_KINDS: FileKind[] = ['incomplete', 'intents', 'jsonl', 'state'];
const MASK_BIT = { incomplete: 1, intents: 2, jsonl: 4, state: 8, lock: 0 } satisfies Record<FileKind, number>;
const SETS_BY_MASK: ReadonlySet<FileKind>[] = Array.from(
  { length: 16 },
  (_, m) => new Set(MASK_KINDS.filter((k) => m & MASK_BIT[k])),
);

/**
 * The (shared, read-only) set of files of a mask (incomplete 1, intents 2, jsonl 4, state 8): a
 * listing crosses threads as masks.
 */
export function filesOfMask(mask: number): ReadonlySet<FileKind> {
  return SETS_BY_MASK[mask];
}

export interface ScanOptions {
  /** Only this shard's part of the listing (see shard.ts): ids are filtered by name, nothing is read. */
  shard?: Shard;
}

/**
 * Lists the capture directory once, dot-files included, classifying every name. Holds only
 * names, never contents: a directory of 100k rollouts is a few megabytes here.
 */
export async function scanDirectory(dir: string, options: ScanOptions = {}): Promise<DirectoryListing> {
  const listed = listDirectory(dir);
  const { masks, invalidNames, tempStateFiles, lockOnly } = listed;
  const ids = listedIds(listed);
  const rollouts = new Map<string, ReadonlySet<FileKind>>();
  for (let i = 0; i < ids.length; i++) rollouts.set(ids[i], filesOfMask(masks[i]));
  return shardListing({ rollouts, invalidNames, tempStateFiles, lockOnly }, options.shard);
}

/** A directory's listing as ids and file masks (what `scanDirectory` makes its Map of). */
export interface IndexedListing {
  /**
   * Rollouts with at least one of J, S, I, M, in listing order, joined by newlines ('' for none;
   * `listedIds` splits it): one string made from the listed bytes, not one per rollout (100,000
   * strings kept to the end of a listing cost it their making and the collector's copying, and
   * a listing that crosses threads is joined anyway).
   */
  idText: string;
  /** Each rollout's files as a mask (`filesOfMask`), in the order of the ids. */
  masks: Uint8Array;
  invalidNames: string[];
  tempStateFiles: string[];
  lockOnly: string[];
}

/** The rollout ids of a listing, in listing order. */
export function listedIds(listing: IndexedListing): string[] {
  return listing.idText === '' ? [] : listing.idText.split('\n');
}

/**
 * The listing of `scanDirectory` without a Map of sets: one id index while listing, the files as
 * masks (a listing that crosses threads is made of these). Through the system calls where they
 * are available (native/directory-entries.ts: names classified as bytes, a string per rollout
 * rather than per name); Node's listing otherwise, and whenever that way fails (Node's error
 * then names what went wrong).
 */
export function listDirectory(dir: string): IndexedListing {
  const raw = rawDirectory();
  if (raw) {
    try {
      return listDirectoryRaw(dir, raw);
    } catch {
      // Node's listing below: it lists, or says why it cannot.
    }
  }
  return listDirectoryNode(dir);
}

/** `listDirectory` through Node's `opendir` (exported so tests can pin both ways to one answer). */
export function listDirectoryNode(dir: string): IndexedListing {
  const index = new Map<string, number>();
  const ids: string[] = [];
  let masks = new Uint8Array(1024);
  const locks: string[] = [];
  const others = new OtherNames();
  forEachName(dir, 1024, (name) => {
    const c = classifyName(name);
    if (c.kind !== 'capture') return others.add(c);
    if (c.file === 'lock') {
      locks.push(c.rolloutId);
      return;
    }
    let at = index.get(c.rolloutId);
    if (at === undefined) {
      at = ids.length;
      index.set(c.rolloutId, at);
      ids.push(c.rolloutId);
      if (at === masks.length) masks = grownBytes(masks);
    }
    masks[at] |= MASK_BIT[c.file];
  });
  return others.listing(ids.join('\n'), ids.length, masks, [...new Set(locks.filter((id) => !index.has(id)))]);
}

/** Valid rollout id bytes (docs/format.md#rollout-ids: ASCII letters, digits, `.`, `_`, `-`). */
const ID_BYTE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-') ID_BYTE[c.charCodeAt(0)] = 1;
/** The capture suffixes by their last byte (each ends with a different one), as bytes. */
const SUFFIX_BY_LAST_BYTE: ({ bytes: Buffer; file: FileKind } | undefined)[] = new Array(256).fill(undefined);
for (const [file, suffix] of Object.entries(SUFFIX) as [FileKind, string][])
  SUFFIX_BY_LAST_BYTE[suffix.charCodeAt(suffix.length - 1)] = { bytes: Buffer.from(suffix, 'latin1'), file };

/**
 * `listDirectory` from the system's entries (`raw`): a name that ends with a capture suffix
 * after a valid id is classified from its bytes; any other name becomes a string and goes
 * through `classifyName` (same answers: tests pin it against `listDirectoryNode`).
 */
export function listDirectoryRaw(dir: string, raw: RawDirectory): IndexedListing {
  const index = new ByteIdIndex();
  /** By index entry: the row + 1 (0: only a lock file so far). */
  let rows = new Int32Array(1024);
  let masks = new Uint8Array(1024);
  let rowCount = 0;
  /** The ids of the rows, each followed by a newline: `idText`'s bytes. */
  let idBytes = Buffer.allocUnsafe(1 << 16);
  let idBytesUsed = 0;
  const lockEntries: number[] = [];
  const others = new OtherNames();
  const capture = (buf: Uint8Array, start: number, idEnd: number, hash: number, file: FileKind) => {
    const e = index.entry(buf, start, idEnd, hash);
    if (e === rows.length) {
      const r = new Int32Array(2 * e);
      r.set(rows);
      rows = r;
    }
    if (file === 'lock') {
      lockEntries.push(e);
      return;
    }
    let row = rows[e] - 1;
    if (row < 0) {
      row = rowCount++;
      rows[e] = row + 1;
      const length = idEnd - start;
      if (idBytesUsed + length + 1 > idBytes.length) {
        const b = Buffer.allocUnsafe(2 * (idBytesUsed + length + 1));
        idBytes.copy(b, 0, 0, idBytesUsed);
        idBytes = b;
      }
      for (let i = 0; i < length; i++) idBytes[idBytesUsed + i] = buf[start + i];
      idBytes[idBytesUsed + length] = 0x0a;
      idBytesUsed += length + 1;
      if (row === masks.length) masks = grownBytes(masks);
    }
    masks[row] |= MASK_BIT[file];
  };
  raw.forEachEntry(dir, (buf, start, end) => {
    const suffix = SUFFIX_BY_LAST_BYTE[buf[end - 1]];
    const idEnd = suffix === undefined ? -1 : end - suffix.bytes.length;
    if (suffix !== undefined && idEnd > start && sameBytes(buf, idEnd, suffix.bytes)) {
      let hash = FNV_OFFSET;
      let i = start;
      for (; i < idEnd && ID_BYTE[buf[i]] === 1; i++) hash = fnvStep(hash, buf[i]);
      if (i === idEnd) return capture(buf, start, idEnd, hash, suffix.file);
    }
    // Every capture name was taken above: its test is classifyName's (the suffix, then an id of
    // valid bytes; a valid id is ASCII, so its bytes are its characters). What is left is an
    // invalid name, a temporary state file or a foreign name (the tests pin it to Node's listing).
    others.add(classifyName(buf.toString('utf8', start, end)));
  });
  const lockOnly = [...new Set(lockEntries.filter((e) => rows[e] === 0))].map((e) => index.id(e));
  // Valid ids are ASCII: latin1 is their text (without the last newline).
  return others.listing(idBytes.toString('latin1', 0, Math.max(0, idBytesUsed - 1)), rowCount, masks, lockOnly);
}

/** Whether `buf` holds `bytes` at `at` (no view made per name). */
function sameBytes(buf: Uint8Array, at: number, bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

function grownBytes(a: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(2 * a.length);
  b.set(a);
  return b;
}

/** The names of a listing that are not a rollout's, and the listing's final form. */
class OtherNames {
  private invalidNames: string[] = [];
  private tempStateFiles: string[] = [];

  add(c: EntryClass): void {
    if (c.kind === 'invalid_name') this.invalidNames.push(c.name);
    else if (c.kind === 'temp_state') this.tempStateFiles.push(c.name);
  }

  listing(idText: string, count: number, masks: Uint8Array, lockOnly: string[]): IndexedListing {
    this.invalidNames.sort(compareCodePoints);
    this.tempStateFiles.sort();
    return {
      idText,
      masks: masks.slice(0, count),
      invalidNames: this.invalidNames,
      tempStateFiles: this.tempStateFiles,
      lockOnly: lockOnly.sort(compareCodePoints),
    };
  }
}

/**
 * The rollout ids of DIR that start with `prefix` (those with at least one of J, S, I, M), in
 * code-point order. For shell completion, which runs on every Tab: names are filtered by the
 * prefix before they are classified, and nothing is kept for the others.
 */
export function rolloutIdsStartingWith(dir: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw ioError(e, dir);
  }
  const ids = new Set<string>();
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const c = classifyName(name);
    if (c.kind === 'capture' && c.file !== 'lock') ids.add(c.rolloutId);
  }
  return [...ids].sort();
}

/** Sorted rollout ids of a listing (ids are ASCII, so plain comparison is code-point order). */
export function sortedRolloutIds(listing: DirectoryListing): string[] {
  return [...listing.rollouts.keys()].sort();
}

export { CAPTURE_SUFFIXES };

/**
 * Whether DIR holds at least one capture file (J, S, I or M) of a valid rollout id; a lock file
 * alone does not count. Stops at the first one: read-only commands refuse a DIR without any
 * (docs/cli.md#unavailable), and a mistyped or emptied DIR must not cost a full listing to be told apart.
 * Fails with an `io` error naming DIR when it cannot be listed.
 */
export function hasCaptureFiles(dir: string): boolean {
  return forEachName(dir, 256, (name) => {
    const c = classifyName(name);
    return c.kind === 'capture' && c.file !== 'lock';
  });
}

/**
 * Visits every name of DIR (dot-files included) until `visit` returns true; returns whether it
 * did. Synchronous reads of a batch: the async iterator costs a thread-pool round trip per batch
 * and a promise per entry (400,000 names for 100,000 rollouts). Errors are `io` errors naming DIR.
 */
function forEachName(dir: string, bufferSize: number, visit: (name: string) => boolean | void): boolean {
  let handle: Dir;
  try {
    handle = opendirSync(dir, { bufferSize });
  } catch (e) {
    throw ioError(e, dir);
  }
  try {
    for (let ent = handle.readSync(); ent !== null; ent = handle.readSync()) if (visit(ent.name) === true) return true;
    return false;
  } catch (e) {
    throw ioError(e, dir);
  } finally {
    try {
      handle.closeSync();
    } catch {
      /* already closed */
    }
  }
}

/**
 * The part of a listing that belongs to a shard: its rollouts, and the names that belong to no
 * rollout (invalid names, temporary state files) by the shard of the name itself, so that the
 * union of the shards' reports is the whole directory's, each name reported once. Only names
 * are hashed: nothing of a rollout is read here.
 */
export function shardListing(listing: DirectoryListing, shard: Shard | undefined): DirectoryListing {
  if (shard === undefined || shard.count === 1) return listing;
  const rollouts = new Map<string, ReturnType<DirectoryListing['rollouts']['get']> & object>();
  for (const [id, files] of listing.rollouts) if (inShard(id, shard)) rollouts.set(id, files);
  return {
    rollouts,
    invalidNames: filterShard(listing.invalidNames, shard),
    tempStateFiles: filterShard(listing.tempStateFiles, shard),
    lockOnly: filterShard(listing.lockOnly, shard),
  };
}
