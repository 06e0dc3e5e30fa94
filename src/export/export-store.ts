import { tokcapVersion } from '../version.js';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { errorFromFacts, TokcapError, ioError, systemErrorOf, toTokcapError } from '../errors.js';
import { orderedJson } from '../json/canonical-json.js';
import { reviveError } from '../jsonl/remote-jsonl.js';
import {
  AtomicOutput,
  checkOutputTarget,
  fsyncDirectory,
  isTokcapExportDirectory,
  refuseTargetInStore,
  type OutputTargetOptions,
} from './atomic-output.js';
import { type ExportedRollout, type ExportItem, type ExportItemOptions } from './export-item.js';
import { ALL_FIELDS } from './fields.js';
import { lineWithStatus } from './line-status.js';
import { LineSink } from './line-sink.js';
import { checkDatasetTarget } from './parquet/dataset-target.js';
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
import {
  abortError,
  exportIds,
  forEachExportItem,
  summaryOf,
  type ExportHooks,
  type ExportOptions,
  type ExportStream,
  type ExportSummary,
} from './export-run.js';

export { tokcapVersion } from '../version.js';
export { exportedCauses, jsonlRecord } from './export-item.js';

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

/** `--out -` with a format that is a directory. */
function streamRefused(format: string): TokcapError {
  return new TokcapError(
    'usage',
    `--out - (standard output) takes --format jsonl only: --format ${format} writes a directory; name it with --out DIR`,
  );
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

/** What `checkExportTarget` looks at: where and how an export writes. */
export interface ExportTarget extends Pick<
  ExportOptions,
  'dir' | 'out' | 'format' | 'force' | 'freeze' | 'shard' | 'fields'
> {
  /** The lines go to a stream (`ExportOptions.stream`), not to `out`. */
  streamed: boolean;
}

/**
 * The usage checks of an export's options and target, made before anything is read or written:
 * the format and the options it takes, `--out` outside the store, and the target absent or
 * replaceable (`force`). Throws usage errors naming `--out`. `exportStore` makes them first; a
 * caller may make them sooner, before it has the ids (the CLI, before it reads them from
 * standard input).
 */
export async function checkExportTarget(target: ExportTarget): Promise<void> {
  const { streamed, format } = target;
  if (streamed && format === 'parquet') throw streamRefused(format);
  // Before any format's own checks: no format writes into the store it reads.
  if (!streamed) await refuseTargetInStore(target.out, [target.dir]);
  if (target.fields && format !== 'jsonl') throw new TokcapError('usage', '--fields applies to --format jsonl only');
  if (format === 'parquet') return checkDatasetTarget(target);
  if (streamed && format !== 'jsonl') throw streamRefused(format);
  if (format === 'store' && target.freeze) {
    throw new TokcapError(
      'usage',
      '--freeze does not apply to --format store: the copy is read-only (freeze the copy with `tokcap freeze COPY --all`)',
    );
  }
  // Refuse an existing target before reading anything.
  if (format === 'store') await checkStoreTarget(target.out, target.dir, target.force);
  else if (!streamed) await checkOutputTarget(target.out, targetOptionsOf(target));
}

/** How a jsonl file or tinker directory target is checked and replaced. */
function targetOptionsOf(options: Pick<ExportOptions, 'format' | 'force' | 'dir'>): OutputTargetOptions {
  return {
    kind: options.format === 'tinker' ? 'directory' : 'file',
    force: options.force,
    protect: [options.dir],
    replaceableDirectory: isTokcapExportDirectory,
  };
}

async function exportTo(options: ExportOptions, hooks: ExportHooks): Promise<ExportSummary> {
  await checkExportTarget({ ...options, streamed: options.stream !== undefined });
  // Arrow and the Parquet writer load only for this format.
  if (options.format === 'parquet') return (await import('./parquet/export-parquet.js')).exportParquet(options, hooks);

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

  const output = options.stream ? undefined : await AtomicOutput.create(options.out, targetOptionsOf(options));
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
