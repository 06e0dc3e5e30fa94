/**
 * The one reading of a rollout. Its files are copied ONCE under one short shared lock
 * (src/ops/rollout-copy.ts); the facts come from that copy (src/facts/rollout-facts.ts), the
 * status from the facts (src/status), the read-only preview build from the same copy, and, when
 * asked, the digest check too. Every view of a rollout is derived from the `RolloutRead` this
 * returns: a build or export result (build-outcome.ts), a live-view row (row-read.ts), the
 * rollout view of `inspect DIR ID` and of the live view (rollout-detail.ts).
 *
 * Nothing waits twice for one lock. A lock not granted in time leaves nothing copied: the facts
 * read the files that need no lock (the status is the summary's answer, rollout-status.ts), and
 * the build and the digest check fail with that same error. Where the copy cannot answer (an
 * invalid id; a file the copy missed: a marker that is a symbolic link to nowhere, a file created
 * since), the facts and the build read the files themselves, and a build after a failed read
 * fails with that failure instead of waiting again.
 */
import { lstatSync } from 'node:fs';
import { errorFromFacts, toTokcapError, type ErrorFacts } from '../errors.js';
import { rolloutFacts, type RolloutFacts } from '../facts/rollout-facts.js';
import type { IdArrayTexts } from '../json/id-texts.js';
import type { JsonBytesReader } from '../json/parse-json.js';
import { rolloutPaths, type FileKind } from '../layout/file-names.js';
import { invalidRolloutIdError, isValidRolloutId } from '../layout/rollout-id.js';
import {
  COPIED_KINDS,
  CopyArena,
  copyError,
  copyRollout,
  snapshotCopyOf,
  spanBytes,
  type RolloutCopyRecord,
} from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import {
  buildRolloutDetailed,
  localSnapshotSource,
  type DetailedBuild,
  type SnapshotSource,
} from '../chains/build-rollout.js';
import {
  isUnavailableKind,
  rolloutStatus,
  unavailableStatus,
  type RolloutStatusAnswer,
} from '../status/rollout-status.js';
import { unavailableVerdict, verdictOf, type VerdictAnswer } from '../status/verdict.js';
import type { Finding } from '../verify/findings.js';
import { verifyRollout } from '../verify/verify-rollout.js';
import { recordsFailure } from './read-status.js';

/** A rollout read once: what every view of it is derived from. */
export interface RolloutRead {
  readonly id: string;
  /** The facts behind the status; absent when they could not be gathered (`status` says why). */
  readonly facts?: RolloutFacts;
  readonly status: RolloutStatusAnswer;
  /**
   * The read-only preview build (exactly `build` without --freeze); absent only when it threw
   * (`crash`). A rollout that could not be read is built too, from what was copied, never read
   * again: its build fails with the reason, as `build` prints it.
   */
  readonly build?: DetailedBuild;
  /** What the build threw: a failure no store condition explains (the reference would crash). */
  readonly crash?: unknown;
  readonly verdict: VerdictAnswer;
  /**
   * Why the records could not be read although the status was answered (a lock timeout or an
   * I/O error: `--deep`'s count of every line, or the build); absent when the status is
   * `unavailable` (its `error` says why).
   */
  readonly recordsError?: ErrorFacts;
  /** With `digests`: the digest check's findings, null when it did not run (`digestError` says why). */
  readonly findings?: Finding[] | null;
  readonly digestError?: string;
  /**
   * Gives back the memory of copies that `idTexts` still view (only when the files were read
   * without the one copy); call it once the result is written.
   */
  readonly release?: () => void;
}

export interface ReadRolloutOptions {
  /** Count every line of J (`inspect DIR ID`); otherwise the index plus the unindexed tail. */
  deep?: boolean;
  /** Run the digest check (`verify-digests`) on the same copy. */
  digests?: boolean;
  /** Model name put in the rebuilt response. */
  model?: string;
  /** The calling thread's JSON reader for its job (default: one per rollout). */
  jsonReader?: JsonBytesReader;
  /**
   * Keep the texts of the result's id arrays as J's copy has them (src/json/id-texts.ts), for
   * writing the result: the copy (`arena`) is then kept unchanged until the result is written.
   */
  idTexts?: IdArrayTexts;
  /** Memory for the copy (default: new); the caller reuses it once the outcome is rendered. */
  arena?: CopyArena;
  /** Takes the copy under the lock (default `copyRollout`). @internal */
  copy?: typeof copyRollout;
}

/**
 * Why a reading has no preview to show: the build threw (the reference would crash there, an
 * error its consumer does not catch: shown, and the rest goes on), or could not read the
 * rollout. Undefined when it built.
 */
export function previewError(read: RolloutRead): ErrorFacts | undefined {
  if (read.build === undefined) {
    const err = toTokcapError(read.crash, { rolloutId: read.id });
    return { ...err.facts(), message: `build crashed: ${err.message}` };
  }
  return read.verdict.verdict === 'unavailable' ? read.build.readFailure!.facts() : undefined;
}

/** A rollout's copy taken under its lock, with the memory it is in. */
export interface RolloutCopy {
  arena: Uint8Array;
  record: RolloutCopyRecord;
}

/** Reads a rollout once: one copy under one lock, and everything from it. */
export async function readRollout(
  store: StoreOptions,
  rolloutId: string,
  options: ReadRolloutOptions = {},
): Promise<RolloutRead> {
  if (!isValidRolloutId(rolloutId)) return readApart(store, rolloutId, options);
  const arena = options.arena ?? new CopyArena();
  arena.used = 0;
  const record = await (options.copy ?? copyRollout)(store, rolloutId, arena);
  const files = filesOfCopy(store.dir, rolloutId, record);
  if (files === undefined && record.failure === undefined) return readApart(store, rolloutId, options);
  return readCopy(store, { arena: arena.bytes, record }, files, options);
}

/**
 * `readRollout` from a copy taken already, possibly by another thread (the live view's main
 * thread copies, its read worker parses): no file is opened and no lock is taken, unless the
 * copy failed as a whole (the facts then read the files that need no lock). `files`: those the
 * copy holds (undefined when it failed).
 */
export async function readCopy(
  store: StoreOptions,
  copy: RolloutCopy,
  files: ReadonlySet<FileKind> | undefined,
  options: ReadRolloutOptions = {},
): Promise<RolloutRead> {
  const { record } = copy;
  const id = record.rolloutId;
  const { jsonReader, deep } = options;
  const factsOf = (deep?: boolean) =>
    rolloutFacts(store, id, { copy, files: files && new Set(files), jsonReader, deep });
  const answer = await statusOf(id, factsOf, deep);
  const source: SnapshotSource = {
    frozen: () => Promise.reject(new Error('internal: a preview does not freeze')),
    // The refusals of `copyReadOnlySnapshot`, in its order (the lock, the state, retired, J, intents).
    readOnly: async () => snapshotCopyOf(copy.arena, record, answer.facts?.retired ?? false),
  };
  const read = await withBuild(store, id, answer, source, options);
  if (!options.digests) return read;
  return { ...read, ...(await digestsOf(read, () => verifyCopy(store, copy))) };
}

/** The facts and their status, and why `--deep` could not read J's lines when it could not. */
interface StatusAnswer {
  facts?: RolloutFacts;
  status: RolloutStatusAnswer;
  recordsError?: ErrorFacts;
}

/**
 * The facts and their status. When `--deep` could not read J's lines, the status is the
 * summary's read instead (rollout-status.ts): `factsOf(false, failure)`, whose J fails with that
 * failure again, never read twice (a copy fails with its own failure again).
 */
async function statusOf(
  id: string,
  factsOf: (deep?: boolean, recordsError?: ErrorFacts) => Promise<RolloutFacts>,
  deep: boolean | undefined,
): Promise<StatusAnswer> {
  try {
    let facts = await factsOf(deep);
    const recordsError = deep ? recordsFailure(facts) : undefined;
    if (recordsError) facts = await factsOf(false, recordsError);
    const status = rolloutStatus(facts);
    return recordsError && status.status !== 'unavailable' ? { facts, status, recordsError } : { facts, status };
  } catch (e) {
    return { status: unavailableStatus(toTokcapError(e, { rolloutId: id }).facts()) };
  }
}

/** The preview build from `source`, and the verdict and records failure it gives. */
async function withBuild(
  store: StoreOptions,
  id: string,
  answer: StatusAnswer,
  source: SnapshotSource,
  options: ReadRolloutOptions,
): Promise<RolloutRead> {
  const { facts, status } = answer;
  const { jsonReader, idTexts } = options;
  const incompleteContext = facts && {
    incompleteFlag: facts.incomplete_flag,
    incompleteMarkers: facts.incomplete_marker_calls,
  };
  if (idTexts && jsonReader) jsonReader.idTexts = idTexts;
  let built: Pick<RolloutRead, 'build' | 'crash' | 'verdict'>;
  try {
    const build = await buildRolloutDetailed(store, id, {
      freeze: false,
      model: options.model,
      source,
      incompleteContext,
      jsonReader,
    });
    built = { build, verdict: verdictOf(build) };
  } catch (e) {
    built = { crash: e, verdict: unavailableVerdict(toTokcapError(e, { rolloutId: id }).facts()) };
  } finally {
    if (jsonReader) jsonReader.idTexts = undefined;
  }
  // A build that could not read the records (the status answered without them): the parts that
  // need them are unavailable with that failure.
  const failure = built.verdict.verdict === 'unavailable' ? built.verdict.error : undefined;
  const recordsError =
    answer.recordsError ??
    (status.status !== 'unavailable' && failure && isUnavailableKind(failure.kind) ? failure : undefined);
  return { id, facts, status, ...built, ...(recordsError ? { recordsError } : {}) };
}

/**
 * The digest check, unless the records could not be read (it would wait for the same lock again)
 * or the rollout is unavailable (nothing is claimed about it).
 */
async function digestsOf(
  read: RolloutRead,
  verify: () => Promise<Finding[]>,
): Promise<Pick<RolloutRead, 'findings' | 'digestError'>> {
  if (read.status.status === 'unavailable') return { findings: null };
  if (read.recordsError) return { findings: null, digestError: read.recordsError.message };
  try {
    return { findings: await verify() };
  } catch (e) {
    return { findings: null, digestError: toTokcapError(e, { rolloutId: read.id }).message };
  }
}

/**
 * `verify-digests` on the copy: its state and J, the intents and markers opened as regular files.
 * A copy that failed, or holds a file it could not read, is not verified (that failure).
 */
function verifyCopy(store: StoreOptions, { arena, record }: RolloutCopy): Promise<Finding[]> {
  const failed =
    copyError(record, record.failure) ?? copyError(record, COPIED_KINDS.map((k) => record.errors?.[k]).find(Boolean));
  if (failed) return Promise.reject(failed);
  const state = spanBytes(arena, record.spans.state);
  return verifyRollout(store, record.rolloutId, {
    copiedState: { bytes: state },
    readJsonl: async () => {
      const bytes = spanBytes(arena, record.spans.jsonl);
      if (bytes === undefined) return undefined;
      return { bytes, from: 0, size: bytes.length, lastByte: bytes.length > 0 ? bytes[bytes.length - 1] : undefined };
    },
  });
}

/**
 * The reads one at a time, each of the files themselves (no copy answers them): the facts, then
 * the build, then the digest check. After a read of the records that failed (the status is then
 * `unavailable`, or `--deep` could not count J's lines), the build fails with that failure and
 * the digests stay unchecked: no second wait for the same lock.
 */
async function readApart(store: StoreOptions, id: string, options: ReadRolloutOptions): Promise<RolloutRead> {
  const valid = isValidRolloutId(id);
  const answer: StatusAnswer = valid
    ? await statusOf(
        id,
        (deep, recordsError) =>
          rolloutFacts(store, id, {
            deep,
            jsonReader: options.jsonReader,
            ...(recordsError
              ? { readJsonl: () => Promise.reject(errorFromFacts(recordsError, { rolloutId: id })) }
              : {}),
          }),
        options.deep,
      )
    : // `build` takes invalid ids as failed builds (docs/cli.md#invocation): there is no rollout to read.
      { status: unavailableStatus(invalidRolloutIdError(id)) };
  const failure = answer.status.error ?? answer.recordsError;
  const held = options.idTexts ? new HeldCopies() : undefined;
  const local = localSnapshotSource(store);
  const source: SnapshotSource =
    failure && valid
      ? { ...local, readOnly: () => Promise.reject(errorFromFacts(failure, { rolloutId: id })) }
      : (held?.of(local) ?? local);
  const read = await withBuild(store, id, answer, source, options);
  const out = held ? { ...read, release: () => held.release() } : read;
  if (!options.digests) return out;
  return { ...out, ...(await digestsOf(read, () => verifyRollout(store, id))) };
}

/** A snapshot source whose copies' memory is given back by `release`, not once parsed. */
export class HeldCopies {
  private releases: (() => void)[] = [];

  of(source: SnapshotSource): SnapshotSource {
    const hold = <C extends { release?: () => void }>(copy: C): C => {
      if (copy.release) this.releases.push(copy.release);
      return { ...copy, release: undefined };
    };
    return {
      frozen: async (id) => hold(await source.frozen(id)),
      readOnly: async (id) => hold(await source.readOnly(id)),
    };
  }

  release(): void {
    for (const release of this.releases) release();
    this.releases = [];
  }
}

/**
 * The files the facts would find by `lstat` (src/facts/rollout-facts.ts), when the copy holds all
 * of them (copied, or failed to read as the facts' own read would fail); undefined when the lock
 * was not granted (nothing was copied) or `lstat` finds one the copy did not (a symbolic link to
 * nowhere, a file created since). Usually one `lstat`: the absent marker file.
 */
function filesOfCopy(dir: string, rolloutId: string, record: RolloutCopyRecord): Set<FileKind> | undefined {
  if (record.failure !== undefined) return undefined;
  const present = new Set<FileKind>();
  let paths: ReturnType<typeof rolloutPaths> | undefined;
  for (const kind of COPIED_KINDS) {
    if (record.spans[kind] !== undefined || record.errors?.[kind] !== undefined) {
      present.add(kind);
      continue;
    }
    paths ??= rolloutPaths(dir, rolloutId);
    try {
      lstatSync(paths[kind]);
    } catch {
      continue;
    }
    return undefined;
  }
  return present;
}
