import { tokcapVersion } from '../version.js';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { TokcapError, ioError } from '../errors.js';
import { compareCodePoints, orderedJson } from '../json/canonical-json.js';
import { scanDirectory, sortedRolloutIds } from '../layout/scan-directory.js';
import { maskCauses, type MaskCause } from '../build/mask-causes.js';
import { failedBuild } from '../build/consumer-result.js';
import { AtomicOutput, checkOutputTarget, fsyncDirectory, isTokcapExportDirectory } from './atomic-output.js';
import { buildForExport, type ExportBuild } from './build-for-export.js';
import { ALL_FIELDS, applyFieldSelection, type FieldSelection } from './fields.js';
import { LineSink } from './line-sink.js';
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
  tinkerRolloutSummary,
} from './tinker.js';

export const EXPORT_FORMATS = ['jsonl', 'tinker'] as const;
export type ExportFormatName = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  /** The capture directory. */
  dir: string;
  lockWaitMs?: number;
  /**
   * Rollouts to export (valid ids; exported in code-point order, duplicates dropped). Undefined:
   * every rollout of the directory.
   */
  ids?: readonly string[];
  /** Freeze each rollout first (the reference consumer path); otherwise read-only. */
  freeze: boolean;
  model?: string;
  format: ExportFormatName;
  /** Output file (jsonl) or directory (tinker). */
  out: string;
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
}

export interface ExportHooks {
  /** The rollouts are known (before the first is built). */
  onStart?(total: number): void;
  /** One rollout is done (written, or left out by --trainable-only). */
  onRollout?(done: number, total: number, rolloutId: string, build: ExportBuild): void;
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
  /** Rollouts tokcap could not read (lock timeouts; included in failed). */
  errors: number;
  generated_tokens_captured: number;
  generated_tokens_delivered: number;
}

export { tokcapVersion } from '../version.js';

/** `mask_causes` as exported: `{code, message, calls?}` (calls only when the cause names calls). */
export function exportedCauses(causes: readonly MaskCause[]): Record<string, unknown>[] {
  return causes.map((c) => (c.calls !== undefined ? { code: c.code, message: c.message, calls: [...c.calls] } : { code: c.code, message: c.message }));
}

/** One jsonl line's object: the build result, then `mask_causes`, with the field selection applied. */
export function jsonlRecord(build: ExportBuild, fields: FieldSelection = ALL_FIELDS): Record<string, unknown> {
  return applyFieldSelection({ ...build.result, mask_causes: exportedCauses(build.causes) }, fields);
}

/**
 * The line for a build, or, when the result cannot be written as JSON (a token id past 2^64 in
 * a root record: no digest check rejects it, and orjson could not write it either), that
 * rollout's failed build instead, with an error for the summary: one bad rollout never costs the
 * export the others.
 */
function writable(build: ExportBuild, line: (b: ExportBuild) => string): [ExportBuild, string] {
  try {
    return [build, line(build)];
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const id = build.result.rollout_id;
    const result = failedBuild(id, `ValueError: the build result cannot be written as JSON: ${reason}`, build.result.metrics.n_calls);
    const replaced: ExportBuild = {
      result: 'preview' in build.result ? { ...result, preview: true } : result,
      causes: maskCauses(result),
      steps: [],
      error: new TokcapError('corrupt', `the build result cannot be written as JSON: ${reason}`, { rolloutId: id, cause: e }),
    };
    return [replaced, line(replaced)];
  }
}

interface FormatWriter {
  /** Writes one rollout; returns what was written (see `writable`). */
  add(build: ExportBuild): Promise<ExportBuild>;
  /** Completes the output (files closed and fsynced). */
  finish(totals: ExportTotals): Promise<void>;
  abandon(): Promise<void>;
}

async function jsonlWriter(path: string, fields: FieldSelection): Promise<FormatWriter> {
  const sink = await LineSink.open(path);
  return {
    async add(build) {
      const [written, line] = writable(build, (b) => orderedJson(jsonlRecord(b, fields)));
      await sink.writeLine(line);
      return written;
    },
    finish: () => sink.close(),
    abandon: () => sink.abandon(),
  };
}

async function tinkerWriter(root: string, info: Omit<Parameters<typeof tinkerConfig>[0], 'totals' | 'groups'>): Promise<FormatWriter> {
  const iterationDir = join(root, TINKER_ITERATION_DIR);
  try {
    await mkdir(iterationDir, { mode: 0o777 });
  } catch (e) {
    throw ioError(e, iterationDir);
  }
  const summaries = await LineSink.open(join(iterationDir, TINKER_ROLLOUT_SUMMARIES));
  const groups = new GroupIndexer();
  return {
    async add(build) {
      const group = groups.assign(build.result.rollout_id);
      const [written, line] = writable(build, (b) => orderedJson(tinkerRolloutSummary(b, group)));
      await summaries.writeLine(line);
      return written;
    },
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

function abortError(): TokcapError {
  return new TokcapError('other', 'export interrupted; nothing was written at the target');
}

/**
 * Exports rollouts of a capture directory (issue 5; FORMAT.md §12 `export`), one rollout at a
 * time: build, write, drop, so memory is bounded by the largest rollout, not the directory.
 * Output is atomic (see atomic-output.ts). Rollouts that fail to build are exported as failed
 * builds (masked). Throws usage errors (target exists without force, bad --out) before reading
 * the store, and `io` errors when the store cannot be listed.
 */
export async function exportStore(options: ExportOptions, hooks: ExportHooks = {}): Promise<ExportSummary> {
  const kind = options.format === 'tinker' ? 'directory' : 'file';
  if (options.fields && options.format !== 'jsonl') throw new TokcapError('usage', '--fields applies to --format jsonl only');
  const targetOptions = {
    kind,
    force: options.force,
    protect: [options.dir],
    replaceableDirectory: isTokcapExportDirectory,
  } as const;
  // Refuse an existing target before reading anything.
  await checkOutputTarget(options.out, targetOptions);

  const listing = await scanDirectory(options.dir);
  const ids = options.ids === undefined ? sortedRolloutIds(listing) : [...new Set(options.ids)].sort(compareCodePoints);
  const total = ids.length;
  hooks.onStart?.(total);

  const output = await AtomicOutput.create(options.out, targetOptions);
  hooks.onTemporary?.(output.tempPath, () => output.discardSync());
  const store = { dir: options.dir, lockWaitMs: options.lockWaitMs };
  const totals = new ExportTotals();
  let writer: FormatWriter | undefined;
  try {
    writer =
      options.format === 'tinker'
        ? await tinkerWriter(output.tempPath, {
            version: options.version ?? tokcapVersion(),
            createdAt: (options.now ?? (() => new Date()))(),
            sourceDir: resolve(options.dir),
            ids: options.ids === undefined ? undefined : ids,
            freeze: options.freeze,
            trainableOnly: options.trainableOnly,
            model: options.model ?? '',
          })
        : await jsonlWriter(output.tempPath, options.fields ?? ALL_FIELDS);
    let done = 0;
    for (const id of ids) {
      if (options.signal?.aborted || output.finished) throw abortError();
      let build = await buildForExport(store, id, { freeze: options.freeze, model: options.model });
      const keep = !(options.trainableOnly && build.result.mask_sample);
      if (keep) build = await writer.add(build);
      if (build.error) hooks.onRolloutError?.(build.error, id);
      totals.add(build, keep);
      done += 1;
      hooks.onRollout?.(done, total, id, build);
    }
    if (options.signal?.aborted || output.finished) throw abortError();
    await writer.finish(totals);
    writer = undefined;
    await output.commit();
  } catch (e) {
    await writer?.abandon();
    await output.discard();
    throw e;
  }
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
