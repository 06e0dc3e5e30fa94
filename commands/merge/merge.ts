/**
 * tokcap merge REPORT... — see ./options.ts. The reports of one sharded run
 * combined (src/merge/merge-reports.ts), or a Parquet dataset checked whole
 * (src/export/parquet/dataset-manifest.ts). Read-only.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TokcapError, ioError } from '../../src/errors.js';
import {
  datasetState,
  DATASET_TABLES,
  isParquetDataset,
  type DatasetState,
} from '../../src/export/parquet/dataset-manifest.js';
import {
  isWhole,
  mergeReports,
  problemLines,
  shardProblems,
  type MergedReport,
  type ShardReport,
} from '../../src/merge/merge-reports.js';
import { compareCodePoints } from '../../src/json/canonical-json.js';
import type { CommandContext } from '../cli/context.js';
import { EXIT_FAILURE } from '../cli/errors.js';
import { plural } from '../cli/shared.js';

export async function run(ctx: CommandContext<'merge'>): Promise<void> {
  const paths = [...ctx.positionals];
  const datasets: string[] = [];
  for (const p of paths) if ((await isDirectory(p)) && (await isParquetDataset(p))) datasets.push(p);
  if (datasets.length > 0) {
    if (paths.length > 1)
      throw new TokcapError('usage', 'merge: give one Parquet dataset directory, or report files; not both');
    return checkDataset(ctx, datasets[0]);
  }
  const reports = await readReports(paths);
  const problems = shardProblems(reports);
  if (!isWhole(problems)) {
    for (const line of problemLines(problems)) ctx.err(`tokcap: merge: ${line}`);
    ctx.raise(EXIT_FAILURE);
    ctx.json({
      complete: false,
      count: problems.count ?? null,
      missing: problems.missing,
      duplicated: problems.duplicated,
      other_count: problems.otherCount,
      not_sharded: problems.unsharded,
    });
    return;
  }
  const merged = mergeReports(reports, {
    strict: ctx.options.strict,
    failOnMask: ctx.options.failOnMask,
    allowEmpty: ctx.options.allowEmpty,
  });
  ctx.raise(merged.exit);
  ctx.json({ command: merged.command, ...merged.doc });
  if (merged.exit === 3 && merged.doc.rollouts === 0 && !ctx.options.allowEmpty)
    ctx.err('tokcap: merge: no rollouts selected in any shard (--allow-empty makes that an answer)');
  for (const line of humanLines(merged)) ctx.out(line);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (e) {
    throw ioError(e, path);
  }
}

/** The reports: each file, or every `*.json` of a directory (in name order). */
async function readReports(paths: readonly string[]): Promise<ShardReport[]> {
  const files: string[] = [];
  for (const p of paths) {
    if (!(await isDirectory(p))) {
      files.push(p);
      continue;
    }
    let names: string[];
    try {
      names = await readdir(p);
    } catch (e) {
      throw ioError(e, p);
    }
    const json = names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort(compareCodePoints);
    if (json.length === 0) throw new TokcapError('not_found', `${p}: no *.json reports`, { file: p });
    files.push(...json.map((n) => join(p, n)));
  }
  const reports: ShardReport[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw ioError(e, file);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new TokcapError('corrupt', `not a JSON document (${(e as Error).message})`, { file });
    }
    // An array is an unsharded build or freeze report: it carries no shard.
    reports.push({
      source: file,
      doc: doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {},
    });
  }
  return reports;
}

function humanLines(m: MergedReport): string[] {
  // The fields of the merged document of each command (src/merge/merge-reports.ts).
  const d = m.doc as {
    findings: { rollout_id: string; code: string; severity: string; message: string }[];
    unchecked: string[];
    unavailable: string[] | number;
    invalid_names: string[];
    status: Record<string, number>;
    failed: string[];
    ok: boolean;
    rollouts: number;
    trainable: number;
    masked: number;
    exported: number;
    frozen: number;
    format: string;
    out: string | string[];
  };
  const head = `${m.command}, ${plural(m.count, 'shard')}:`;
  switch (m.command) {
    case 'verify-digests': {
      const lines = d.findings.map((f) => `${f.rollout_id}  ${f.severity} ${f.code}: ${f.message}`);
      const errors = d.findings.filter((f) => f.severity === 'error').length;
      const unread = d.unchecked.length
        ? `; ${plural(d.unchecked.length, 'rollout')} could not be read (not verified)`
        : '';
      lines.push(
        `${head} ${plural(d.rollouts - d.unchecked.length, 'rollout')} verified: ${plural(errors, 'error')}, ${plural(d.findings.length - errors, 'warning')}${unread}; ok: ${d.ok}`,
      );
      return lines;
    }
    case 'inspect': {
      const status = Object.entries(d.status)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ');
      const unavailable = d.unavailable as string[];
      const unread = unavailable.length ? `; could not be read: ${unavailable.join(', ')}` : '';
      return [
        `${head} ${plural(d.rollouts, 'rollout')}${status ? ` (${status})` : ''}, ${plural(d.invalid_names.length, 'invalid name')}${unread}`,
      ];
    }
    case 'build':
      return [
        `${head} ${plural(d.rollouts, 'rollout')}: ${d.trainable} trainable, ${d.masked} masked, ${d.unavailable} could not be read${d.failed.length ? `; failed: ${d.failed.join(', ')}` : ''}`,
      ];
    case 'export':
      return [
        `${head} exported ${d.exported} of ${plural(d.rollouts, 'rollout')} to ${Array.isArray(d.out) ? d.out.join(', ') : d.out} (${d.format}): ${d.trainable} trainable, ${d.masked} masked`,
      ];
    case 'freeze':
      return [
        `${head} froze ${plural(d.frozen, 'rollout')} of ${d.rollouts}${d.failed.length ? `; failed: ${d.failed.join(', ')}` : ''}`,
      ];
  }
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  } catch (e) {
    throw ioError(e, path);
  }
  return hash.digest('hex');
}

async function checkDataset(ctx: CommandContext<'merge'>, dataset: string): Promise<void> {
  const state = await datasetState(dataset, sha256);
  if (!state.complete) ctx.raise(EXIT_FAILURE);
  ctx.json(datasetJson(state));
  for (const line of datasetLines(state)) {
    if (state.complete) ctx.out(line);
    else ctx.err(`tokcap: ${dataset}: ${line}`);
  }
}

function datasetJson(s: DatasetState): Record<string, unknown> {
  const tables: Record<string, unknown> = {};
  for (const t of DATASET_TABLES) {
    const x = s.tables[t];
    tables[t] = {
      parts: x.complete.length,
      missing: x.missing,
      mismatched: x.mismatched,
      other_count: x.foreign,
      rows: x.rows,
      bytes: x.bytes,
      success: x.success,
    };
  }
  return { dataset: s.dataset, complete: s.complete, count: s.count ?? null, success: s.success, tables };
}

function datasetLines(s: DatasetState): string[] {
  const n = s.count ?? 0;
  if (s.complete) {
    const rows = DATASET_TABLES.map((t) => `${s.tables[t].rows} in ${t}`).join(', ');
    return [
      `complete: ${n} of ${n} parts in ${DATASET_TABLES.join(' and ')} (rows: ${rows})${s.success ? ', _SUCCESS present' : ', but _SUCCESS is missing (its last task stopped before writing it)'}`,
    ];
  }
  const lines: string[] = [];
  if (s.count === undefined) lines.push('incomplete: no parts');
  for (const t of DATASET_TABLES) {
    const x = s.tables[t];
    if (x.missing.length)
      lines.push(
        `incomplete: ${t}: part${x.missing.length > 1 ? 's' : ''} ${x.missing.join(', ')} of ${n} missing (no part file or no manifest)`,
      );
    for (const f of x.mismatched) lines.push(`incomplete: ${f}: does not match its manifest (size or SHA-256)`);
    for (const f of x.foreign) lines.push(`incomplete: ${f}: a part of another shard count than ${n}`);
  }
  return lines;
}
