import { tokcapVersion } from '../version.js';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { errorFromFacts, TokcapError, ioError, systemErrorOf, toTokcapError } from '../errors.js';
import { serveSnapshotRequest, type SnapshotRequest } from '../rollout-read/build-many.js';
import { compareCodePoints, JsonWriter, orderedJson } from '../json/canonical-json.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { reviveError } from '../jsonl/remote-jsonl.js';
import { scanDirectory, sortedRolloutIds } from '../layout/scan-directory.js';
import { filterShard, type Shard } from '../layout/shard.js';
import { giveBackCopyBuffer } from '../jsonl/copy-buffers.js';
import { estimateJsonlBytes } from '../layout/estimate-size.js';
import { mapRolloutsParallel, type ThreadOptions } from '../threads/parallel-rollouts.js';
import {
  AtomicOutput,
  checkOutputTarget,
  fsyncDirectory,
  isTokcapExportDirectory,
  refuseTargetInStore,
} from './atomic-output.js';
import { exportItem, type ExportedRollout, type ExportItem, type ExportItemOptions } from './export-item.js';
import type { ExportWorkerShared } from './export-worker.js';
import { ALL_FIELDS, type FieldSelection } from './fields.js';
import { lineWithStatus } from './line-status.js';
import { LineSink } from './line-sink.js';
import { checkStoreTarget } from './store-copy.js';
import { exportAsStore } from './store-export.js';
import {
  ExportTotals,
  GroupIndexer,
  TINKER_CONFIG,
  TINKER_ITERATION_DIR,
  TINKER_METRICS,
  TINKER_ROLLOUT_SUMMARIES,
  prettyJson,
  tinkerConfig,
  tinkerMetricsRecord,
  tinkerRolloutOrder,
  tinkerSummaryLine,
} from './tinker.js';
import type { ExportFormatName } from './formats.js';

export interface ExportOptions {
  /** The capture directory. */
  dir: string;
  lockWaitMs?: number;
  /**
   * Rollouts to export (valid ids; exported in code-point order, duplicates dropped). Undefined:
   * every rollout of the directory.
   */
  ids?: readonly string[];
  /** Only the rollouts (of the directory, or of `ids`) in this shard. */
  shard?: Shard;
  /** Freeze each rollout first (the reference consumer path); otherwise read-only. */
  freeze: boolean;
  model?: string;
  format: ExportFormatName;
  /** Output file (jsonl) or directory (tinker, store); with `stream`, only the name reported. */
  out: string;
  /**
   * jsonl only: write the lines to this stream as they are produced instead of a file (the
   * CLI's `--out -`). No atomic rename is possible: an interrupted export leaves a partial
   * stream, and `force` does not apply.
   */
  stream?: ExportStream;
  /** Replace an existing output. */
  force: boolean;
  /** Leave masked rollouts out of the output (they are still counted). */
  trainableOnly: boolean;
  /** jsonl only: which keys each line keeps (default: all). */
  fields?: FieldSelection;
  /** tokcap's version for config.json (default: read from tokcap's package.json). */
  version?: string;
  /** Clock for config.json's `created_at` (tests). */
  now?: () => Date;
  /** Checked between rollouts: an aborted export removes its temporary output and throws. */
  signal?: AbortSignal;
  /** How many threads the job may use (default: decided by its size). */
  threads?: ThreadOptions;
  /**
   * Called with the number of rollouts selected, before any output exists: a throw refuses the
   * export with nothing written (the CLI's "no rollouts selected").
   */
  checkSelection?: (selected: number) => void;
}

export interface ExportHooks {
  /** The rollouts are known (before the first is built). */
  onStart?(total: number): void;
  /** One rollout is done (written, or left out by --trainable-only). */
  onRollout?(done: number, total: number, rolloutId: string, rollout: ExportedRollout): void;
  /**
   * A rollout could not be read for a reason of tokcap's own (a lock timeout): it is exported as
   * a failed build; the caller reports the error (the CLI exits 3).
   */
  onRolloutError?(error: TokcapError, rolloutId: string): void;
  /**
   * The temporary output exists: `discardSync` removes it (for signal handlers). It does nothing
   * once the export has been committed or discarded.
   */
  onTemporary?(tempPath: string, discardSync: () => void): void;
}

export interface ExportSummary {
  out: string;
  format: ExportFormatName;
  /** Rollouts built. */
  rollouts: number;
  /** Rollouts written (rollouts minus the masked ones under --trainable-only). */
  exported: number;
  trainable: number;
  masked: number;
  /** Failed builds (the failed-build result; included in masked). */
  failed: number;
  /**
   * Rollouts tokcap could not read (lock timeouts): jsonl and tinker export them as failed builds
   * (included in failed); store leaves them out (in neither trainable nor masked).
   */
  errors: number;
  generated_tokens_captured: number;
  generated_tokens_delivered: number;
  /**
   * Writing the output failed (a full disk, a read-only target): nothing was left at `out`, and
   * the counts are those of the rollouts read until then. Its `file` is the target.
   */
  output_error?: TokcapError;
}

export { tokcapVersion } from '../version.js';
export { exportedCauses, jsonlRecord } from './export-item.js';

/** Where `--out -` lines go: `write` resolves when the stream can take more. */
export interface ExportStream {
  write(bytes: Uint8Array): Promise<void>;
}

interface FormatWriter {
  /** Writes one kept rollout's text (see `ExportItem.text`). */
  add(item: ExportItem): Promise<void>;
  /** Completes the output (files closed and fsynced). */
  finish(totals: ExportTotals): Promise<void>;
  abandon(): Promise<void>;
}

async function jsonlWriter(path: string): Promise<FormatWriter> {
  const sink = await LineSink.open(path);
  return {
    add: (item) => sink.writeBytes(item.line!),
    finish: () => sink.close(),
    abandon: () => sink.abandon(),
  };
}

function streamWriter(stream: ExportStream): FormatWriter {
  return {
    add: (item) => stream.write(item.line!),
    finish: async () => undefined,
    abandon: async () => undefined,
  };
}

async function tinkerWriter(
  root: string,
  info: Omit<Parameters<typeof tinkerConfig>[0], 'totals' | 'groups'>,
): Promise<FormatWriter> {
  const iterationDir = join(root, TINKER_ITERATION_DIR);
  try {
    await mkdir(iterationDir, { mode: 0o777 });
  } catch (e) {
    throw ioError(e, iterationDir);
  }
  const summaries = await LineSink.open(join(iterationDir, TINKER_ROLLOUT_SUMMARIES));
  // Groups are numbered in output order, over the rollouts written.
  const groups = new GroupIndexer();
  return {
    add: (item) => summaries.writeLine(tinkerSummaryLine(item.tail!, groups.assign(item.rollout.rolloutId))),
    async finish(totals) {
      await summaries.close();
      await fsyncDirectory(iterationDir);
      const metrics = await LineSink.open(join(root, TINKER_METRICS));
      await metrics.writeLine(orderedJson(tinkerMetricsRecord(totals)));
      await metrics.close();
      // config.json last: a directory without it (an export killed half-way) is no run.
      const config = await LineSink.open(join(root, TINKER_CONFIG));
      await config.writeLine(prettyJson(tinkerConfig({ ...info, totals, groups: groups.groupCount })));
      await config.close();
      await fsyncDirectory(root);
    },
    abandon: () => summaries.abandon(),
  };
}

export function abortError(streaming: boolean): TokcapError {
  return new TokcapError(
    'other',
    streaming ? 'export interrupted; the stream is partial' : 'export interrupted; nothing was written at the target',
  );
}

/** `--out -` with a format that is a directory. */
function streamRefused(format: string): TokcapError {
  return new TokcapError(
    'usage',
    `--out - (standard output) takes --format jsonl only: --format ${format} writes a directory; name it with --out DIR`,
  );
}

/** The rollouts an export covers, in code-point order: the ids given, else the listing's; both narrowed to the shard. */
export async function exportIds(options: Pick<ExportOptions, 'dir' | 'ids' | 'shard'>): Promise<string[]> {
  // Listed even when ids are given: a DIR that cannot be listed is an error (exit 3) either way.
  const listing = await scanDirectory(options.dir, { shard: options.shard });
  return options.ids === undefined
    ? sortedRolloutIds(listing)
    : filterShard([...new Set(options.ids)], options.shard).sort(compareCodePoints);
}

/**
 * Builds each rollout's export item (on every core, see mapRolloutsParallel) and hands them to
 * `emit` in the order of `ids`, one at a time. `options.signal` aborts between rollouts.
 */
export async function forEachExportItem(
  options: ExportOptions,
  ids: readonly string[],
  itemOptions: ExportItemOptions,
  emit: (item: ExportItem) => Promise<void>,
  streaming = false,
): Promise<void> {
  const store = { dir: options.dir, lockWaitMs: options.lockWaitMs };
  const stop = new AbortController();
  const onAbort = () => stop.abort(abortError(streaming));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const shared: ExportWorkerShared = { store, item: itemOptions };
  // This thread's JSON reader and writer for the export (each worker has its own).
  const own = { writer: new JsonWriter(), jsonReader: new JsonBytesReader() };
  try {
    await mapRolloutsParallel<ExportItem, SnapshotRequest>([...ids], {
      workerUrl: new URL('./export-worker.js', import.meta.url),
      shared,
      minItems: 8,
      estimatedBytes: estimateJsonlBytes(options.dir, ids),
      chunkSize: 4,
      // In this thread (no workers): one rollout at a time, memory bounded by the largest.
      concurrency: 1,
      threads: options.threads,
      local: (id) => exportItem(store, id, itemOptions, undefined, own),
      serve: serveSnapshotRequest(store),
      recycle: giveBackCopyBuffer,
      signal: stop.signal,
      emit,
    });
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Exports rollouts of a capture directory (docs/format.md#commands `export`), one rollout at a
 * time: build, write, drop, so memory is bounded by the largest rollout, not the directory.
 * Output is atomic (see atomic-output.ts). Rollouts that fail to build are exported as failed
 * builds (masked). Throws usage errors (target exists without force, bad --out) before reading
 * the store, and `io` errors when the store cannot be listed. When writing the output fails, the
 * temporary output is removed and the summary says so (`output_error`), with the counts so far.
 */
export async function exportStore(options: ExportOptions, hooks: ExportHooks = {}): Promise<ExportSummary> {
  const tally = new RolloutTally();
  try {
    return await exportTo(options, tally.watch(hooks));
  } catch (e) {
    if (options.stream || !isOutputError(e, options.out)) throw e;
    return { ...summaryOf(options, tally.totals()), exported: 0, output_error: outputError(e, options.out) };
  }
}

/** What the hooks were told of each rollout: the counts of an export that could not be written. */
class RolloutTally {
  private readonly seen = new Map<string, ExportedRollout | undefined>();

  watch(hooks: ExportHooks): ExportHooks {
    return {
      ...hooks,
      onRollout: (done, total, id, r) => {
        this.seen.set(id, r);
        hooks.onRollout?.(done, total, id, r);
      },
      onRolloutError: (e, id) => {
        if (!this.seen.has(id)) this.seen.set(id, undefined);
        hooks.onRolloutError?.(e, id);
      },
    };
  }

  totals(): ExportTotals {
    const t = new ExportTotals();
    for (const r of this.seen.values()) {
      if (r === undefined || r.verdict.verdict === 'unavailable') t.addUnavailable();
      else t.add(r, false);
    }
    return t;
  }
}

/** A path the export writes: the target, inside it, or a temporary sibling of it. */
function isOutputError(e: unknown, out: string): boolean {
  const path =
    e instanceof TokcapError
      ? e.kind === 'io'
        ? (e.file ?? e.system?.path)
        : undefined
      : (e as NodeJS.ErrnoException)?.path;
  if (path === undefined) return false;
  const target = resolve(out);
  const p = resolve(path);
  const sibling = join(dirname(target), `.${basename(target)}`);
  return p === target || p.startsWith(target + sep) || p.startsWith(sibling);
}

/** The failure named after the target (never a rollout the export read), kind `io`. */
function outputError(e: unknown, out: string): TokcapError {
  const system = systemErrorOf(e) ?? (e instanceof TokcapError ? e.system : undefined);
  const message = e instanceof Error ? e.message : String(e);
  return new TokcapError('io', `could not write the output: ${message}; nothing partial was kept at ${out}`, {
    file: out,
    cause: e,
    ...(system ? { system: { code: system.code, ...(system.syscall ? { syscall: system.syscall } : {}) } } : {}),
  });
}

async function exportTo(options: ExportOptions, hooks: ExportHooks): Promise<ExportSummary> {
  if (options.stream && options.format === 'parquet') throw streamRefused(options.format);
  // Before any format's own checks: no format writes into the store it reads.
  if (!options.stream) await refuseTargetInStore(options.out, [options.dir]);
  // Arrow and the Parquet writer load only for this format.
  if (options.format === 'parquet') return (await import('./parquet/export-parquet.js')).exportParquet(options, hooks);
  const kind = options.format === 'tinker' ? 'directory' : 'file';
  if (options.fields && options.format !== 'jsonl')
    throw new TokcapError('usage', '--fields applies to --format jsonl only');
  if (options.stream && options.format !== 'jsonl') throw streamRefused(options.format);
  if (options.format === 'store' && options.freeze) {
    throw new TokcapError(
      'usage',
      '--freeze does not apply to --format store: the copy is read-only (freeze the copy with `tokcap freeze COPY --all`)',
    );
  }
  const targetOptions = {
    kind,
    force: options.force,
    protect: [options.dir],
    replaceableDirectory: isTokcapExportDirectory,
  } as const;
  // Refuse an existing target before reading anything.
  if (options.format === 'store') await checkStoreTarget(options.out, options.dir, options.force);
  else if (!options.stream) await checkOutputTarget(options.out, targetOptions);

  const sorted = await exportIds(options);
  options.checkSelection?.(sorted.length);
  const ids = options.format === 'tinker' ? tinkerRolloutOrder(sorted) : sorted;
  const total = ids.length;
  hooks.onStart?.(total);
  const store = { dir: options.dir, lockWaitMs: options.lockWaitMs };
  const totals = new ExportTotals();
  if (options.format === 'store') {
    const storeOptions = {
      store,
      ids,
      out: options.out,
      model: options.model,
      trainableOnly: options.trainableOnly,
      signal: options.signal,
    };
    await exportAsStore(storeOptions, totals, hooks, () => abortError(false));
    return summaryOf(options, totals);
  }

  const output = options.stream ? undefined : await AtomicOutput.create(options.out, targetOptions);
  if (output) hooks.onTemporary?.(output.tempPath, () => output.discardSync());
  let writer: FormatWriter | undefined;
  try {
    writer = !output
      ? streamWriter(options.stream!)
      : options.format === 'tinker'
        ? await tinkerWriter(output.tempPath, {
            version: options.version ?? tokcapVersion(),
            createdAt: (options.now ?? (() => new Date()))(),
            sourceDir: resolve(options.dir),
            ids: options.ids === undefined ? undefined : ids,
            freeze: options.freeze,
            trainableOnly: options.trainableOnly,
            model: options.model ?? '',
          })
        : await jsonlWriter(output.tempPath);
    const active = writer;
    // jsonl lines end with the rollout's status and conditions, read here, in the main thread;
    // every line carries them, whatever --fields says (docs/cli.md#status).
    const fields = options.fields ?? ALL_FIELDS;
    const withStatus = options.format === 'jsonl';
    let done = 0;
    // Rollouts are built on every core and arrive here in order, one write at a time.
    const write = async (item: ExportItem) => {
      if (output?.finished) throw abortError(!output);
      const r = item.rollout;
      // A rollout that could not be read is left out and named (docs/cli.md#unavailable), never a masked line.
      if (r.verdict.verdict === 'unavailable') {
        const v = r.verdict;
        hooks.onRolloutError?.(
          errorFromFacts(v.error ?? { kind: 'other', message: 'could not be read' }, { rolloutId: r.rolloutId }),
          r.rolloutId,
        );
        totals.addUnavailable();
        done += 1;
        hooks.onRollout?.(done, total, r.rolloutId, r);
        return;
      }
      if (item.keep)
        await active.add(
          withStatus
            ? { ...item, line: await lineWithStatus(store, r.rolloutId, item.line!, fields, r.verdict) }
            : item,
        );
      if (r.error) hooks.onRolloutError?.(toTokcapError(reviveError(r.error), { rolloutId: r.rolloutId }), r.rolloutId);
      totals.add(r, item.keep);
      done += 1;
      hooks.onRollout?.(done, total, r.rolloutId, r);
    };
    const itemOptions: ExportItemOptions = {
      freeze: options.freeze,
      model: options.model,
      format: options.format,
      fields: options.fields,
      trainableOnly: options.trainableOnly,
    };
    await forEachExportItem(options, ids, itemOptions, write, !output);
    if (options.signal?.aborted || output?.finished) throw abortError(!output);
    await writer.finish(totals);
    writer = undefined;
    await output?.commit();
  } catch (e) {
    await writer?.abandon();
    await output?.discard();
    throw e;
  }
  return summaryOf(options, totals);
}

export function summaryOf(options: ExportOptions, totals: ExportTotals): ExportSummary {
  return {
    out: options.out,
    format: options.format,
    rollouts: totals.rollouts,
    exported: totals.exported,
    trainable: totals.trainable,
    masked: totals.masked,
    failed: totals.failed,
    errors: totals.errors,
    generated_tokens_captured: totals.generatedTokensCaptured,
    generated_tokens_delivered: totals.generatedTokensDelivered,
  };
}
