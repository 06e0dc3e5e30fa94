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

export async function rolloutFacts(
  store: StoreOptions,
  rolloutId: string,
  options: FactsOptions = {},
): Promise<RolloutFacts> {
  const paths = rolloutPaths(store.dir, rolloutId);
  const errors: RolloutFacts['errors'] = [];
  const note = (file: string, e: unknown) => {
    const err: TokcapError = toTokcapError(e, { rolloutId, file });
    errors.push({ file, ...err.facts() });
  };
  const present = options.files ?? (await presentFiles(paths));
  const files = options.copy
    ? copiedFiles(paths, rolloutId, options.copy)
    : diskFiles(paths, rolloutId, options.readJsonl);
  const readJ = files.readJsonl;
  // mtimes come from the fstat of each file opened anyway; only files not opened are lstat'ed.
  const mtimes = new Map<FileKind, number>();
  const readSmall = (kind: FileKind): Buffer | undefined => {
    const r = files.small(kind);
    if (r === undefined) return undefined;
    mtimes.set(kind, r.mtimeMs);
    return r.bytes;
  };

  let state: RolloutState = { exists: false, data: defaultStateData() };
  let stateReadable = true;
  if (present.has('state')) {
    try {
      const bytes = readSmall('state');
      if (bytes !== undefined) state = parseStateBytes(bytes, paths.state, rolloutId, options.jsonReader);
    } catch (e) {
      stateReadable = false;
      note(paths.state, e);
    }
  }
  const stateOk = stateReadable && state.exists;
  let version = 0;
  if (stateOk) {
    try {
      version = stateVersion(state, rolloutId);
    } catch (e) {
      note(paths.state, e);
    }
  }
  const idx = stateOk ? indexedSize(state, false) : undefined;
  const digests = stateOk ? entryDigests(state) : undefined;

  let intents: string[] = [];
  if (present.has('intents')) {
    try {
      const bytes = readSmall('intents');
      intents = bytes === undefined ? [] : parseIntents(bytes, rolloutId, paths.intents);
    } catch (e) {
      note(paths.intents, e);
    }
  }
  let markers: string[] = [];
  if (present.has('incomplete')) {
    try {
      const bytes = readSmall('incomplete');
      markers = bytes === undefined ? [] : parseIncompleteMarkers(bytes);
    } catch (e) {
      note(paths.incomplete, e);
    }
  }

  const j = {
    size: 0,
    entries: 0,
    callIds: new Set<string>(),
    torn: false,
    missingNewline: false,
    badLines: 0,
    source: 'scan' as 'scan' | 'index',
  };
  if (present.has('jsonl')) {
    // Fast path only with a readable, non-legacy index: the indexed prefix is counted from the
    // index, only the tail past it is read.
    const fast = !options.deep && digests !== undefined && idx !== undefined && idx > 0;
    try {
      const tail = fast ? files.jsonlEnd() : undefined;
      if (tail) mtimes.set('jsonl', tail.mtimeMs);
      const quick = tail && tail.size === idx ? tail : undefined;
      if (quick) {
        // Everything is indexed: no line to read and no lock to take. The indexed prefix never
        // changes (J is append-only; only an unindexed torn tail is ever truncated).
        j.size = quick.size;
        j.source = 'index';
        for (const k of Object.keys(digests!)) j.callIds.add(k);
        j.entries = j.callIds.size;
        j.missingNewline = quick.lastByte !== 0x0a;
      } else {
        let read = await readJ(paths, rolloutId, { waitMs: lockWaitOf(store), from: fast ? idx : 0 });
        if (read && read.from < (fast ? idx! : 0)) {
          // indexed_size is past the end: count every line instead.
          read.release?.();
          read = await readJ(paths, rolloutId, { waitMs: lockWaitOf(store), from: 0 });
        }
        if (read) {
          j.size = read.size;
          if (read.from > 0) {
            j.source = 'index';
            for (const k of Object.keys(digests!)) j.callIds.add(k);
            j.entries = j.callIds.size;
          }
          let pendingBad = false;
          const jsonReader = options.jsonReader ?? new JsonBytesReader();
          scanBufferLines(
            read.bytes,
            (line) => {
              if (line.stripped.length === 0) return;
              if (pendingBad) {
                j.badLines++;
                pendingBad = false;
              }
              const v = classifyLine(line.stripped, { rolloutId, file: paths.jsonl }, jsonReader);
              if (v.kind === 'entry') {
                j.entries++;
                j.callIds.add(v.entry.model_call_id);
              } else if (v.kind === 'bad_json') pendingBad = true;
              else j.badLines++;
            },
            { baseOffset: read.from },
          );
          j.torn = pendingBad;
          j.missingNewline = read.size > 0 && read.lastByte !== 0x0a;
          // Nothing above keeps a view of the bytes (call ids are strings): their memory is reused.
          read.release?.();
        }
      }
    } catch (e) {
      note(paths.jsonl, e);
    }
  }

  let mtime = 0;
  for (const kind of FILE_ORDER) {
    if (!present.has(kind)) continue;
    const known = mtimes.get(kind) ?? files.mtime?.(kind);
    if (known !== undefined) {
      mtime = Math.max(mtime, known);
      continue;
    }
    try {
      // Synchronous: a stat is microseconds, a thread-pool round trip per file is not.
      mtime = Math.max(mtime, lstatSync(paths[kind]).mtimeMs);
    } catch {
      /* vanished since the listing */
    }
  }

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
