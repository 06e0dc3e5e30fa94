/**
 * One rollout of an export, computed where its build happens (this thread or a worker thread,
 * src/export/export-worker.ts): the text to write, already serialised, and the few facts the
 * totals and hooks need. Plain data: only this crosses back from a worker.
 */
import type { SnapshotSource } from '../chains/build-rollout.js';
import { failedBuild } from '../chains/consumer-result.js';
import { maskCauses } from '../chains/mask-causes.js';
import { TokcapError } from '../errors.js';
import { orderedJsonLine, type JsonWriter } from '../json/canonical-json.js';
import type { JsonBytesReader } from '../json/parse-json.js';
import type { StoreOptions } from '../ops/store.js';
import { serialiseError } from '../threads/parallel-rollouts.js';
import { buildForExport, type ExportBuild } from './build-for-export.js';
import { ALL_FIELDS, applyFieldSelection, type FieldSelection } from './fields.js';
import { tinkerSummaryTail } from './tinker.js';
import type { ExportedRollout } from './exported-rollout.js';
import { exportedCauses } from './exported-causes.js';
import { parquetRows, type ParquetRows } from './parquet/rows.js';

export { exportedCauses } from './exported-causes.js';

export type { ExportedRollout } from './exported-rollout.js';

export interface ExportItem {
  rollout: ExportedRollout;
  /** Written (false: left out by --trainable-only). */
  keep: boolean;
  /**
   * jsonl: the line, UTF-8 with its LF (encoded where it was built, so a worker hands over
   * bytes without a copy and the writer only writes them); tinker: the summary's text after
   * its group fields (`tinkerSummaryLine`).
   */
  line?: Uint8Array;
  tail?: string;
  /** parquet: the rollout's rows (src/export/parquet/rows.ts). */
  parquet?: ParquetRows;
}

export interface ExportItemOptions {
  freeze: boolean;
  model?: string;
  format: 'jsonl' | 'tinker' | 'parquet';
  fields?: FieldSelection;
  trainableOnly: boolean;
}

/** One jsonl line's object: the build result, then `mask_causes`, with the field selection applied. */
export function jsonlRecord(build: ExportBuild, fields: FieldSelection = ALL_FIELDS): Record<string, unknown> {
  return applyFieldSelection({ ...build.result, mask_causes: exportedCauses(build.causes) }, fields);
}

/**
 * The text for a build, or, when the result cannot be written as JSON (a token id past 2^64 in
 * a root record: no digest check rejects it, and orjson could not write it either), that
 * rollout's failed build instead, with an error for the summary: one bad rollout never costs the
 * export the others.
 */
function writable<T>(build: ExportBuild, text: (b: ExportBuild) => T): [ExportBuild, T] {
  try {
    return [build, text(build)];
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const id = build.result.rollout_id;
    const message = `the build result cannot be written as JSON: ${reason}`;
    const result = failedBuild(id, `ValueError: ${message}`, build.result.metrics.n_calls);
    const replaced: ExportBuild = {
      result: 'preview' in build.result ? { ...result, preview: true } : result,
      causes: maskCauses(result),
      steps: [],
      verdict: { verdict: 'masked', unbuilt: true, causes: maskCauses(result), error: { kind: 'corrupt', message } },
      error: new TokcapError('corrupt', message, { rolloutId: id, cause: e }),
    };
    return [replaced, text(replaced)];
  }
}

/** What the totals and hooks learn of a build. */
export function exportedRollout(build: ExportBuild): ExportedRollout {
  const { result } = build;
  const m = result.metrics as Record<string, unknown>;
  return {
    rolloutId: result.rollout_id,
    maskSample: result.mask_sample,
    failed: 'error' in result,
    ...(build.error ? { error: serialiseError(build.error) } : {}),
    generatedTokensCaptured: typeof m.generated_tokens_captured === 'number' ? m.generated_tokens_captured : 0,
    generatedTokensDelivered: typeof m.generated_tokens_delivered === 'number' ? m.generated_tokens_delivered : 0,
    verdict: { ...build.verdict, causes: [...build.verdict.causes] },
  };
}

/**
 * Builds one rollout for an export and serialises what is to be written, with the calling
 * thread's JSON reader and writer for the whole export when given.
 */
export async function exportItem(
  store: StoreOptions,
  rolloutId: string,
  options: ExportItemOptions,
  source?: SnapshotSource,
  { writer, jsonReader }: { writer?: JsonWriter; jsonReader?: JsonBytesReader } = {},
): Promise<ExportItem> {
  let build = await buildForExport(store, rolloutId, {
    freeze: options.freeze,
    model: options.model,
    source,
    jsonReader,
    keepChains: options.format === 'parquet',
  });
  if (options.format === 'parquet') {
    const rows = parquetRows(build);
    // The result's token arrays are the rows' now: drop the chain view before the item travels.
    delete build.chains;
    return {
      rollout: exportedRollout(build),
      keep: !(options.trainableOnly && build.result.mask_sample),
      parquet: rows,
    };
  }
  const keep = !(options.trainableOnly && build.result.mask_sample);
  const item: ExportItem = { rollout: exportedRollout(build), keep };
  if (keep) {
    if (options.format === 'jsonl') {
      let line: Uint8Array;
      [build, line] = writable(build, (b) => {
        const record = jsonlRecord(b, options.fields ?? ALL_FIELDS);
        return writer ? writer.orderedLine(record) : orderedJsonLine(record);
      });
      item.line = line;
    } else {
      let text: string;
      [build, text] = writable(build, tinkerSummaryTail);
      item.tail = text;
    }
    item.rollout = exportedRollout(build);
  }
  return item;
}

/** The memory a worker moves to the main thread with an item. */
export function exportItemTransfer(item: ExportItem): ArrayBuffer[] {
  return item.line ? [item.line.buffer as ArrayBuffer] : [];
}
