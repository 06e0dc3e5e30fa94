/**
 * `export --format parquet --out DATASET/` (docs/cli.md#export-formats): this process's
 * shard of the store as two part files, `DATASET/calls/part-K-of-N.parquet` and
 * `DATASET/rollouts/part-K-of-N.parquet`. Several shards write into one dataset at once: each
 * part file is written under a temporary name beside its target and linked into place when
 * complete (atomic-output.ts), and an existing part is refused without --force. Rollouts are
 * built one at a time (or on every core) and their rows streamed into row groups: memory is
 * bounded by a row group and the largest rollout, never by a part file.
 *
 * Token ids are written as uint32 when every id of the part fits; the first id that does not
 * restarts the part with int64 columns (rare: real vocabularies are far below 2^32).
 */
import { mkdir } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { errorFromFacts, ioError, toTokcapError } from '../../errors.js';
import { reviveError } from '../../jsonl/remote-jsonl.js';
import { readRolloutStatus } from '../../rollout-read/read-status.js';
import { AtomicOutput } from '../atomic-output.js';
import type { ExportItem, ExportItemOptions } from '../export-item.js';
import {
  abortError,
  exportIds,
  forEachExportItem,
  summaryOf,
  type ExportHooks,
  type ExportOptions,
  type ExportSummary,
} from '../export-run.js';
import { ExportTotals } from '../tinker.js';
import { tokcapVersion } from '../../version.js';
import { PartWriter } from './part-writer.js';
import { claimDatasetCount, markIfComplete, writeManifests, type PartManifest } from './dataset-manifest.js';
import { partPaths } from './dataset-target.js';
import {
  CALL_COLUMNS,
  ROLLOUT_COLUMNS,
  type ParquetTableName,
  type ParquetRolloutRow,
  type TokenIdType,
} from './schema.js';

/** Thrown inside a uint32 pass when a token id needs int64: the part is written again. */
class NeedsInt64 extends Error {}

/** The part files of this shard: `DATASET/<table>/part-K-of-N.parquet`. */
/** The export into a dataset whose target `checkExportTarget` (../export-store.ts) has checked. */
export async function exportParquet(options: ExportOptions, hooks: ExportHooks = {}): Promise<ExportSummary> {
  const paths = partPaths(options.out, options.shard);
  // One count per dataset (docs/cli.md#sharded-runs): refused, or with --force replaced, before anything is read.
  await claimDatasetCount(options.out, (options.shard ?? { count: 1 }).count, options.force);
  const ids = await exportIds(options);
  options.checkSelection?.(ids.length);
  hooks.onStart?.(ids.length);
  for (const path of Object.values(paths)) {
    try {
      await mkdir(resolve(path, '..'), { recursive: true, mode: 0o777 });
    } catch (e) {
      throw ioError(e, resolve(path, '..'));
    }
  }
  let written: WrittenParts;
  try {
    written = await writeParts(options, hooks, ids, paths, 'uint32');
  } catch (e) {
    if (!(e instanceof NeedsInt64)) throw e;
    written = await writeParts(options, hooks, ids, paths, 'int64');
  }
  // The parts are in place: their manifests, then the markers if this was the last part.
  const shard = options.shard ?? { index: 0, count: 1 };
  const version = options.version ?? tokcapVersion();
  const manifests: PartManifest[] = written.parts.map((p) => ({
    table: p.table,
    part: basename(paths[p.table]),
    shard: { index: shard.index, count: shard.count },
    rows: p.rows,
    bytes: p.bytes,
    sha256: p.sha256,
    token_type: written.tokenType,
    tokcap: version,
    store: resolve(options.dir),
    selection: {
      ids: options.ids === undefined ? 'all' : 'given',
      rollouts: ids.length,
      freeze: options.freeze,
      trainable_only: options.trainableOnly,
    },
    written_at: (options.now?.() ?? new Date()).toISOString(),
  }));
  await writeManifests(options.out, manifests);
  await markIfComplete(options.out, shard.count, version);
  return summaryOf(options, written.totals);
}

interface WrittenParts {
  totals: ExportTotals;
  tokenType: TokenIdType;
  parts: { table: ParquetTableName; rows: number; bytes: number; sha256: string }[];
}

async function writeParts(
  options: ExportOptions,
  hooks: ExportHooks,
  ids: readonly string[],
  paths: Record<ParquetTableName, string>,
  tokenType: TokenIdType,
): Promise<WrittenParts> {
  const store = { dir: options.dir, lockWaitMs: options.lockWaitMs };
  const createdBy = `tokcap ${options.version ?? tokcapVersion()}`;
  const outputs: AtomicOutput[] = [];
  const writers: PartWriter[] = [];
  const discardAll = () => {
    for (const o of outputs) o.discardSync();
  };
  const totals = new ExportTotals();
  try {
    for (const table of ['calls', 'rollouts'] as const) {
      const output = await AtomicOutput.create(paths[table], {
        kind: 'file',
        force: options.force,
        protect: [options.dir],
      });
      outputs.push(output);
      hooks.onTemporary?.(output.tempPath, discardAll);
      writers.push(
        await PartWriter.open(
          output.tempPath,
          table === 'calls' ? CALL_COLUMNS : ROLLOUT_COLUMNS,
          tokenType,
          createdBy,
        ),
      );
    }
    const [calls, rollouts] = writers;
    let done = 0;
    const itemOptions: ExportItemOptions = {
      freeze: options.freeze,
      model: options.model,
      format: 'parquet',
      trainableOnly: options.trainableOnly,
    };
    // One thread unless the caller asks for more: this thread's Parquet writer sets the pace, and
    // a worker's builds cost more to copy across (token lists as arrays) than they save. Measured
    // on 600 rollouts of 12 calls: with a worker 1.26x the CPU, 1.15x the time, +45 MB peak RSS.
    const threads = { ...options.threads, threads: options.threads?.threads ?? 1 };
    await forEachExportItem({ ...options, threads }, ids, itemOptions, async (item: ExportItem) => {
      if (outputs.some((o) => o.finished)) throw abortError(false);
      const r = item.rollout;
      const rows = item.parquet!;
      if (rows.tokenType === 'int64' && tokenType === 'uint32') throw new NeedsInt64();
      // The rollout's status and conditions: read now, after its build (and freeze), by the library's
      // one model; when the build could not read the rollout, without waiting for its lock again.
      const recordsError = r.verdict.verdict === 'unavailable' ? r.verdict.error : undefined;
      const { facts, status } = await readRolloutStatus(store, r.rolloutId, { recordsError });
      const unavailable = status.status === 'unavailable' || rows.verdict === 'unavailable';
      if (r.error) hooks.onRolloutError?.(toTokcapError(reviveError(r.error), { rolloutId: r.rolloutId }), r.rolloutId);
      else if (unavailable) {
        // Named on stderr (and exit 3) whether the status or only the records could not be read.
        const why = status.error ?? r.verdict.error ?? { kind: 'other' as const, message: 'could not be read' };
        hooks.onRolloutError?.(errorFromFacts(why, { rolloutId: r.rolloutId }), r.rolloutId);
      }
      // docs/cli.md#unavailable: a rollout that could not be read is left out of the output (and named on stderr).
      const keep = item.keep && !unavailable;
      if (keep) {
        const row: ParquetRolloutRow = {
          ...rows.rollout,
          status: status.status,
          conditions: status.conditions,
          snapshot_id: rows.rollout.snapshot_id ?? (facts?.snapshot_id || null),
          version: rows.rollout.version ?? (facts && facts.files.length > 0 ? facts.version : null),
        };
        if (rows.tokenType === null) {
          row.error ??= 'a token id does not fit a signed 64-bit integer: the calls are not exported';
          row.error_kind ??= 'corrupt';
        }
        await rollouts.add(row);
        for (const call of rows.calls) await calls.add(call);
      }
      // Counted as could not be read (neither trainable nor masked), as the other formats count it.
      if (unavailable) totals.addUnavailable();
      else totals.add(r, keep);
      done += 1;
      hooks.onRollout?.(done, ids.length, r.rolloutId, r);
    });
    if (options.signal?.aborted || outputs.some((o) => o.finished)) throw abortError(false);
    const closed = writers.splice(0);
    for (const w of closed) await w.close();
    for (const o of outputs) await o.commit();
    const tables = ['calls', 'rollouts'] as const;
    return { totals, tokenType, parts: closed.map((w, k) => ({ table: tables[k], rows: w.rowCount, ...w.digest() })) };
  } catch (e) {
    for (const w of writers) await w.abandon();
    for (const o of outputs) await o.discard();
    throw e;
  }
}
