/**
 * A Parquet dataset that knows whether it is whole (docs/cluster.md#datasets-that-know-they-are-whole).
 *
 * - Each part file has its own manifest beside it, `<table>/_part-K-of-N.manifest.json` (rows,
 *   bytes, SHA-256 of the part, tokcap's version, the store and the selection), written after the
 *   part is in place. The `_` prefix is the one Spark, Hadoop and pyarrow skip when they read a
 *   directory; globs of `*.parquet` (DuckDB, ClickHouse) never match it.
 * - A dataset holds parts of one count only: a part of count N where parts of another count exist
 *   is refused before anything is read, unless --force, which removes the other count's parts.
 * - `_SUCCESS` (Spark's marker) is created in each table directory and then in the dataset
 *   directory by whichever task, after writing its manifests, finds all N manifests of both
 *   tables. Each task writes its manifests before it looks, so the last one to finish sees them
 *   all; the marker is created with link(2), which fails if the name exists: several tasks that
 *   find the dataset whole at once create it once.
 */
import { link, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TokcapError, ioError } from '../../errors.js';
import type { Shard } from '../../layout/shard.js';
import { partName } from '../../layout/shard.js';
import { fsyncDirectory, tempPathFor } from '../atomic-output.js';
import type { ParquetTableName } from './schema.js';

export const DATASET_TABLES: readonly ParquetTableName[] = ['calls', 'rollouts'];
export const SUCCESS_MARKER = '_SUCCESS';

const PART = /^part-(\d{5})-of-(\d{5})\.parquet$/;
const MANIFEST = /^_part-(\d{5})-of-(\d{5})\.manifest\.json$/;

export interface PartManifest {
  table: ParquetTableName;
  part: string;
  shard: { index: number; count: number };
  rows: number;
  bytes: number;
  sha256: string;
  token_type: string;
  tokcap: string;
  store: string;
  selection: { ids: 'all' | 'given'; rollouts: number; freeze: boolean; trainable_only: boolean };
  written_at: string;
}

export function manifestName(shard: Shard | undefined): string {
  return `_${partName(shard)}.manifest.json`;
}

interface TableListing {
  parts: { name: string; index: number; count: number }[];
  manifests: { name: string; index: number; count: number }[];
  success: boolean;
}

async function listTable(dataset: string, table: ParquetTableName): Promise<TableListing> {
  let names: string[];
  try {
    names = await readdir(join(dataset, table));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { parts: [], manifests: [], success: false };
    throw ioError(e, join(dataset, table));
  }
  const parts = [];
  const manifests = [];
  for (const name of names) {
    const p = PART.exec(name);
    if (p) parts.push({ name, index: Number(p[1]), count: Number(p[2]) });
    const m = MANIFEST.exec(name);
    if (m) manifests.push({ name, index: Number(m[1]), count: Number(m[2]) });
  }
  return { parts, manifests, success: names.includes(SUCCESS_MARKER) };
}

/**
 * Before a part of count `count` is written: refuses (exit 3) when parts or manifests of another
 * count are in the dataset; with `force`, removes them and every `_SUCCESS` (the dataset is
 * being replaced). Nothing of this shard's own count is touched here.
 */
export async function claimDatasetCount(dataset: string, count: number, force: boolean): Promise<void> {
  const foreign: string[] = [];
  for (const table of DATASET_TABLES) {
    const t = await listTable(dataset, table);
    for (const f of [...t.parts, ...t.manifests]) if (f.count !== count) foreign.push(join(table, f.name));
  }
  if (foreign.length === 0) return;
  // Part files first in the message: they are what a reader would mix.
  foreign.sort((a, b) => Number(a.includes('/_')) - Number(b.includes('/_')) || (a < b ? -1 : 1));
  if (!force) {
    const counts = [...new Set(foreign.map((f) => Number(/-of-(\d{5})/.exec(f)![1])))].sort((a, b) => a - b);
    throw new TokcapError(
      'conflict',
      `holds parts of ${counts.map((c) => `${c} shard${c === 1 ? '' : 's'}`).join(' and ')} (${foreign[0]}${foreign.length > 1 ? `, ...` : ''}): a part of ${count} would mix two runs; name the same count, or --force to replace the dataset`,
      { file: dataset },
    );
  }
  for (const f of foreign)
    await rm(join(dataset, f), { force: true }).catch((e: unknown) => Promise.reject(ioError(e, join(dataset, f))));
  for (const dir of [...DATASET_TABLES.map((t) => join(dataset, t)), dataset])
    await rm(join(dir, SUCCESS_MARKER), { force: true });
}

/** Writes `bytes` at `path` atomically (temporary name, then rename; replaces an older one). */
async function writeAtomically(path: string, bytes: string): Promise<void> {
  const temp = tempPathFor(path);
  try {
    await writeFile(temp, bytes, { mode: 0o666 });
    await rename(temp, path);
  } catch (e) {
    await rm(temp, { force: true });
    throw ioError(e, path);
  }
}

/** Creates `path` with `bytes` unless it exists (link(2) of a complete temporary file). */
async function createOnce(path: string, bytes: string): Promise<void> {
  const temp = tempPathFor(path);
  try {
    await writeFile(temp, bytes, { mode: 0o666 });
    try {
      await link(temp, path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return;
      // Without hard links: a rename (two tasks may both write it, with the same content).
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS')
        await rename(temp, path);
      else throw e;
    }
  } catch (e) {
    throw ioError(e, path);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** The manifests of one shard's parts, written after the parts are in place. */
export async function writeManifests(dataset: string, manifests: readonly PartManifest[]): Promise<void> {
  for (const m of manifests) {
    const dir = join(dataset, m.table);
    await writeAtomically(join(dir, manifestName(m.shard)), `${JSON.stringify(m, null, 2)}\n`);
    await fsyncDirectory(dir);
  }
}

/**
 * Creates the `_SUCCESS` markers when all `count` manifests of every table are in place (true
 * when the dataset is whole, whoever created the markers).
 */
export async function markIfComplete(dataset: string, count: number, tokcap: string): Promise<boolean> {
  for (const table of DATASET_TABLES) {
    const t = await listTable(dataset, table);
    const have = new Set(t.manifests.filter((m) => m.count === count).map((m) => m.index));
    if (have.size < count) return false;
  }
  const body = `${JSON.stringify({ count, tables: DATASET_TABLES, tokcap, written_at: new Date().toISOString() })}\n`;
  for (const table of DATASET_TABLES) await createOnce(join(dataset, table, SUCCESS_MARKER), body);
  await createOnce(join(dataset, SUCCESS_MARKER), body);
  return true;
}

export interface TableState {
  count: number | undefined;
  /** Shard indexes whose part and manifest are present and agree. */
  complete: number[];
  /** Shard indexes (of the count) with nothing, or a part without its manifest, or a manifest without its part. */
  missing: number[];
  /** Parts whose bytes differ from their manifest's (size or SHA-256). */
  mismatched: string[];
  /** Parts or manifests of another count. */
  foreign: string[];
  rows: number;
  bytes: number;
  success: boolean;
}

export interface DatasetState {
  dataset: string;
  count: number | undefined;
  complete: boolean;
  success: boolean;
  tables: Record<ParquetTableName, TableState>;
}

/** True when `dir` looks like a Parquet dataset of tokcap's (a table directory or a manifest). */
export async function isParquetDataset(dir: string): Promise<boolean> {
  for (const table of DATASET_TABLES) {
    const t = await listTable(dir, table).catch(() => undefined);
    if (t && (t.parts.length > 0 || t.manifests.length > 0)) return true;
  }
  return false;
}

/**
 * What a dataset holds: for each table the parts in place with their manifests, what is missing,
 * what disagrees with its manifest (`hash` reads every part: its size is always checked), and
 * parts of another count. The count is the manifests' (or the parts') most common one.
 */
export async function datasetState(dataset: string, hash: (path: string) => Promise<string>): Promise<DatasetState> {
  const listings = {} as Record<ParquetTableName, TableListing>;
  const counts = new Map<number, number>();
  for (const table of DATASET_TABLES) {
    listings[table] = await listTable(dataset, table);
    for (const f of [...listings[table].parts, ...listings[table].manifests])
      counts.set(f.count, (counts.get(f.count) ?? 0) + 1);
  }
  const count = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0];
  const tables = {} as Record<ParquetTableName, TableState>;
  for (const table of DATASET_TABLES) tables[table] = await tableState(dataset, table, listings[table], count, hash);
  const complete =
    count !== undefined &&
    DATASET_TABLES.every(
      (t) => tables[t].complete.length === count && tables[t].mismatched.length === 0 && tables[t].foreign.length === 0,
    );
  const success = await readdir(dataset).then(
    (names) => names.includes(SUCCESS_MARKER),
    () => false,
  );
  return { dataset, count, complete, success, tables };
}

async function tableState(
  dataset: string,
  table: ParquetTableName,
  t: TableListing,
  count: number | undefined,
  hash: (path: string) => Promise<string>,
): Promise<TableState> {
  const state: TableState = {
    count,
    complete: [],
    missing: [],
    mismatched: [],
    foreign: [],
    rows: 0,
    bytes: 0,
    success: t.success,
  };
  for (const f of [...t.parts, ...t.manifests]) if (f.count !== count) state.foreign.push(join(table, f.name));
  state.foreign.sort();
  if (count === undefined) return state;
  const parts = new Map(t.parts.filter((p) => p.count === count).map((p) => [p.index, p.name]));
  const manifests = new Map(t.manifests.filter((m) => m.count === count).map((m) => [m.index, m.name]));
  for (let k = 0; k < count; k++) {
    const part = parts.get(k);
    const manifest = manifests.get(k);
    if (part === undefined || manifest === undefined) {
      state.missing.push(k);
      continue;
    }
    const path = join(dataset, table, part);
    let m: PartManifest;
    try {
      m = JSON.parse(await readFile(join(dataset, table, manifest), 'utf8')) as PartManifest;
    } catch {
      state.mismatched.push(join(table, manifest));
      continue;
    }
    const { size } = await stat(path);
    if (size !== m.bytes || (await hash(path)) !== m.sha256) {
      state.mismatched.push(join(table, part));
      continue;
    }
    state.complete.push(k);
    state.rows += m.rows;
    state.bytes += m.bytes;
  }
  return state;
}
