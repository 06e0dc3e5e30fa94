import { lstatSync } from 'node:fs';
import { toTokcapError, type ErrorFacts, type TokcapError } from '../errors.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { classifyLine } from '../jsonl/classify-line.js';
import { scanBufferLines } from '../jsonl/line-scanner.js';
import { readJsonlBytes, type JsonlBytes } from '../jsonl/read-jsonl-bytes.js';
import { SUFFIX, rolloutPaths, type FileKind, type RolloutPaths } from '../layout/file-names.js';
import { readRegularFileWithMtimeSync, regularFileSizeAndLastByte } from '../layout/safe-open.js';
import { copyError, spanBytes, type CopiedKind, type RolloutCopyRecord } from '../ops/rollout-copy.js';
import { parseIncompleteMarkers } from '../sidefiles/incomplete-markers.js';
import { danglingIntents, parseIntents } from '../sidefiles/intents.js';
import { parseStateBytes } from '../state/read-state.js';
import {
  defaultStateData,
  entryDigests,
  indexedSize,
  isFrozen,
  isIncompleteFlag,
  isRetired,
  refusalCallIds,
  snapshotId,
  stateVersion,
  type RolloutState,
} from '../state/rollout-state.js';
import { lockWaitOf, type StoreOptions } from '../ops/store.js';

/**
 * The `facts` of one rollout (docs/conformance.md#facts), plus what `inspect` shows beside them.
 * Read-only: no lock file is created, J is read under a short shared lock, nothing is repaired.
 */
export interface RolloutFacts {
  files: string[];
  frozen: boolean;
  retired: boolean;
  incomplete_flag: boolean;
  incomplete_marker_calls: string[];
  intents: string[];
  dangling_intents: string[];
  version: number;
  snapshot_id: string;
  entries: number;
  indexed_size: number | null;
  file_size: number;
  refusals: string[];
  /** 'scan' when every line was read, 'index' when counts came from the index plus the tail. */
  entries_source: 'scan' | 'index';
  /** A final line that does not parse, followed only by whitespace (a torn write). */
  torn_tail: boolean;
  /** J's last byte is not LF (the next writer append would glue onto it, docs/format.md#hazard-1). */
  missing_final_newline: boolean;
  /** Bytes of J past `indexed_size` (pending reconciliation). */
  unindexed_bytes: number;
  /** Lines that are not valid entries (bad JSON in the middle, or invalid records). */
  bad_lines: number;
  /** Most recent modification time among the rollout's files, in ms since the epoch. */
  mtime_ms: number;
  /** Problems met while gathering the facts (unreadable state or intents, lock timeout...). */
  errors: (ErrorFacts & { file: string })[];
}

export interface FactsOptions {
  /** Read every line of J (`--deep`); otherwise counts come from the index plus the tail. */
  deep?: boolean;
  /** Files present, when the caller has listed the directory already. */
  files?: ReadonlySet<FileKind>;
  /**
   * Copies J under the shared lock (default `readJsonlBytes`). A worker thread passes a function
   * that asks the main thread to do it, so that the process still holds one rollout lock at a time.
   * @internal
   */
  readJsonl?: (
    paths: ReturnType<typeof rolloutPaths>,
    rolloutId: string,
    options: { waitMs: number; from?: number },
  ) => Promise<JsonlBytes | undefined>;
  /**
   * Answer from this copy of the rollout's files, taken under one lock (src/ops/rollout-copy.ts),
   * instead of reading them: the same facts, with no file opened. If the copy failed as a whole
   * (the lock was not granted), the files that need no lock are read as usual and J's lines,
   * which do, fail with the copy's error.
   * @internal
   */
  copy?: { arena: Uint8Array; record: RolloutCopyRecord };
  /**
   * Reads the state's and the records' JSON: the calling thread's reader for its job (default:
   * one for this rollout).
   * @internal
   */
  jsonReader?: JsonBytesReader;
}

/** Where the facts' bytes come from: the files, or a copy of them. */
interface FactsFiles {
  small(kind: FileKind): { bytes: Buffer; mtimeMs: number } | undefined;
  jsonlEnd(): { size: number; lastByte?: number; mtimeMs: number } | undefined;
  readJsonl: NonNullable<FactsOptions['readJsonl']>;
  /** A file's mtime known without a stat (a copy's), if any. */
  mtime?(kind: FileKind): number | undefined;
}

function diskFiles(paths: RolloutPaths, rolloutId: string, readJsonl: FactsOptions['readJsonl']): FactsFiles {
  return {
    small: (kind) => readRegularFileWithMtimeSync(paths[kind], rolloutId),
    jsonlEnd: () => regularFileSizeAndLastByte(paths.jsonl, rolloutId),
    readJsonl: readJsonl ?? readJsonlBytes,
  };
}

function copiedFiles(
  paths: RolloutPaths,
  rolloutId: string,
  { arena, record }: NonNullable<FactsOptions['copy']>,
): FactsFiles {
  const lockFailure = copyError(record, record.failure);
  if (lockFailure) {
    const disk = diskFiles(paths, rolloutId, undefined);
    return {
      ...disk,
      readJsonl: async () => {
        throw lockFailure;
      },
    };
  }
  const get = (kind: CopiedKind) => {
    const failed = copyError(record, record.errors?.[kind]);
    if (failed) throw failed;
    const bytes = spanBytes(arena, record.spans[kind]);
    return bytes && { bytes, mtimeMs: record.stamps[kind]!.mtimeMs };
  };
  return {
    mtime: (kind) => record.stamps[kind as CopiedKind]?.mtimeMs,
    small: (kind) => get(kind as CopiedKind),
    jsonlEnd: () => {
      const j = get('jsonl');
      return (
        j && {
          size: j.bytes.length,
          lastByte: j.bytes.length > 0 ? j.bytes[j.bytes.length - 1] : undefined,
          mtimeMs: j.mtimeMs,
        }
      );
    },
    readJsonl: async (_paths, _id, { from = 0 }) => {
      const j = get('jsonl');
      if (!j) return undefined;
      const at = Math.min(Math.max(from, 0), j.bytes.length);
      const lastByte = j.bytes.length > 0 ? j.bytes[j.bytes.length - 1] : undefined;
      return { bytes: j.bytes.subarray(at), from: at, size: j.bytes.length, lastByte };
    },
  };
}

const FILE_ORDER: FileKind[] = ['incomplete', 'intents', 'jsonl', 'state'];

/** What the parts of a rollout's facts share while they are gathered. */
interface FactsRead {
  readonly store: StoreOptions;
  readonly rolloutId: string;
  readonly paths: RolloutPaths;
  readonly present: ReadonlySet<FileKind>;
  readonly files: FactsFiles;
  readonly options: FactsOptions;
  /** mtimes come from the fstat of each file opened anyway; only files not opened are lstat'ed. */
  readonly mtimes: Map<FileKind, number>;
  /** Records a problem met reading `file`. */
  note(file: string, e: unknown): void;
}

/** A small file's bytes (its mtime noted), undefined when it is not there. */
function readSmall(r: FactsRead, kind: FileKind): Buffer | undefined {
  const got = r.files.small(kind);
  if (got === undefined) return undefined;
  r.mtimes.set(kind, got.mtimeMs);
  return got.bytes;
}

export async function rolloutFacts(
  store: StoreOptions,
  rolloutId: string,
  options: FactsOptions = {},
): Promise<RolloutFacts> {
  const paths = rolloutPaths(store.dir, rolloutId);
  const errors: RolloutFacts['errors'] = [];
  const present = options.files ?? (await presentFiles(paths));
  const r: FactsRead = {
    store,
    rolloutId,
    paths,
    present,
    files: options.copy ? copiedFiles(paths, rolloutId, options.copy) : diskFiles(paths, rolloutId, options.readJsonl),
    options,
    mtimes: new Map(),
    note(file, e) {
      const err: TokcapError = toTokcapError(e, { rolloutId, file });
      errors.push({ file, ...err.facts() });
    },
  };
  const { state, stateReadable, stateOk, version } = stateFacts(r);
  const idx = stateOk ? indexedSize(state, false) : undefined;
  const digests = stateOk ? entryDigests(state) : undefined;
  const intents = sideFile(r, 'intents', (bytes) => parseIntents(bytes, rolloutId, paths.intents));
  const markers = sideFile(r, 'incomplete', parseIncompleteMarkers);
  const j = present.has('jsonl') ? await jsonlFacts(r, idx, digests) : noJsonl();
  const mtime = newestMtime(r);

  const refusals = stateOk ? refusalCallIds(state) : [];
  const reportedIndexedSize = !state.exists && stateReadable ? 0 : stateOk ? (idx ?? null) : null;
  return {
    files: FILE_ORDER.filter((k) => present.has(k)).map((k) => SUFFIX[k]),
    frozen: stateOk && isFrozen(state),
    retired: stateOk && isRetired(state),
    incomplete_flag: stateOk && isIncompleteFlag(state),
    incomplete_marker_calls: markers,
    intents,
    dangling_intents: danglingIntents(intents, j.callIds, refusals),
    version,
    snapshot_id: stateOk ? (snapshotId(state) ?? '') : '',
    entries: j.entries,
    indexed_size: reportedIndexedSize,
    file_size: j.size,
    refusals,
    entries_source: j.source,
    torn_tail: j.torn,
    missing_final_newline: j.missingNewline,
    unindexed_bytes: reportedIndexedSize !== null && reportedIndexedSize <= j.size ? j.size - reportedIndexedSize : 0,
    bad_lines: j.badLines,
    mtime_ms: mtime,
    errors,
  };
}

/** The state file read: whether it could be (`stateReadable`), and is there and read (`stateOk`). */
function stateFacts(r: FactsRead): { state: RolloutState; stateReadable: boolean; stateOk: boolean; version: number } {
  let state: RolloutState = { exists: false, data: defaultStateData() };
  let stateReadable = true;
  if (r.present.has('state')) {
    try {
      const bytes = readSmall(r, 'state');
      if (bytes !== undefined) state = parseStateBytes(bytes, r.paths.state, r.rolloutId, r.options.jsonReader);
    } catch (e) {
      stateReadable = false;
      r.note(r.paths.state, e);
    }
  }
  const stateOk = stateReadable && state.exists;
  let version = 0;
  if (stateOk) {
    try {
      version = stateVersion(state, r.rolloutId);
    } catch (e) {
      r.note(r.paths.state, e);
    }
  }
  return { state, stateReadable, stateOk, version };
}

/** The call ids of a side file (intents, incomplete markers): none when absent or unreadable (noted). */
function sideFile(r: FactsRead, kind: 'intents' | 'incomplete', parse: (bytes: Buffer) => string[]): string[] {
  if (!r.present.has(kind)) return [];
  try {
    const bytes = readSmall(r, kind);
    return bytes === undefined ? [] : parse(bytes);
  } catch (e) {
    r.note(r.paths[kind], e);
    return [];
  }
}

/** What J's lines say (or its index, for the indexed prefix). */
interface JsonlFacts {
  size: number;
  entries: number;
  callIds: Set<string>;
  torn: boolean;
  missingNewline: boolean;
  badLines: number;
  source: 'scan' | 'index';
}

function noJsonl(): JsonlFacts {
  return { size: 0, entries: 0, callIds: new Set(), torn: false, missingNewline: false, badLines: 0, source: 'scan' };
}

/** J's facts; a failure to read it is noted, and what was counted before it stays. */
async function jsonlFacts(
  r: FactsRead,
  idx: number | undefined,
  digests: Record<string, unknown> | undefined,
): Promise<JsonlFacts> {
  const j = noJsonl();
  const { paths, rolloutId, store, files } = r;
  const fromIndex = () => {
    j.source = 'index';
    for (const k of Object.keys(digests!)) j.callIds.add(k);
    j.entries = j.callIds.size;
  };
  // Fast path only with a readable, non-legacy index: the indexed prefix is counted from the
  // index, only the tail past it is read.
  const fast = !r.options.deep && digests !== undefined && idx !== undefined && idx > 0;
  try {
    const tail = fast ? files.jsonlEnd() : undefined;
    if (tail) r.mtimes.set('jsonl', tail.mtimeMs);
    if (tail && tail.size === idx) {
      // Everything is indexed: no line to read and no lock to take. The indexed prefix never
      // changes (J is append-only; only an unindexed torn tail is ever truncated).
      j.size = tail.size;
      fromIndex();
      j.missingNewline = tail.lastByte !== 0x0a;
      return j;
    }
    let read = await files.readJsonl(paths, rolloutId, { waitMs: lockWaitOf(store), from: fast ? idx : 0 });
    if (read && read.from < (fast ? idx! : 0)) {
      // indexed_size is past the end: count every line instead.
      read.release?.();
      read = await files.readJsonl(paths, rolloutId, { waitMs: lockWaitOf(store), from: 0 });
    }
    if (!read) return j;
    j.size = read.size;
    if (read.from > 0) fromIndex();
    countLines(r, read, j);
    j.missingNewline = read.size > 0 && read.lastByte !== 0x0a;
    // Nothing above keeps a view of the bytes (call ids are strings): their memory is reused.
    read.release?.();
  } catch (e) {
    r.note(paths.jsonl, e);
  }
  return j;
}

/** Counts the entries, bad lines and a torn tail of J's bytes `read` into `j`. */
function countLines(r: FactsRead, read: JsonlBytes, j: JsonlFacts): void {
  let pendingBad = false;
  const jsonReader = r.options.jsonReader ?? new JsonBytesReader();
  const where = { rolloutId: r.rolloutId, file: r.paths.jsonl };
  scanBufferLines(
    read.bytes,
    (line) => {
      if (line.stripped.length === 0) return;
      if (pendingBad) {
        j.badLines++;
        pendingBad = false;
      }
      const v = classifyLine(line.stripped, where, jsonReader);
      if (v.kind === 'entry') {
        j.entries++;
        j.callIds.add(v.entry.model_call_id);
      } else if (v.kind === 'bad_json') pendingBad = true;
      else j.badLines++;
    },
    { baseOffset: read.from },
  );
  j.torn = pendingBad;
}

/** The newest mtime of the rollout's files (those not opened are lstat'ed). */
function newestMtime(r: FactsRead): number {
  let mtime = 0;
  for (const kind of FILE_ORDER) {
    if (!r.present.has(kind)) continue;
    const known = r.mtimes.get(kind) ?? r.files.mtime?.(kind);
    if (known !== undefined) {
      mtime = Math.max(mtime, known);
      continue;
    }
    try {
      // Synchronous: a stat is microseconds, a thread-pool round trip per file is not.
      mtime = Math.max(mtime, lstatSync(r.paths[kind]).mtimeMs);
    } catch {
      /* vanished since the listing */
    }
  }
  return mtime;
}

async function presentFiles(paths: ReturnType<typeof rolloutPaths>): Promise<Set<FileKind>> {
  const out = new Set<FileKind>();
  for (const kind of FILE_ORDER) {
    try {
      lstatSync(paths[kind]);
      out.add(kind);
    } catch {
      /* absent */
    }
  }
  return out;
}
