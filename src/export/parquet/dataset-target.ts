/**
 * The target of `export --format parquet`: where this shard's part files go, and the checks made
 * before anything is read (an existing part refused without --force). Cheap to load: nothing of
 * Arrow or the Parquet writer, so the checks come before the writer loads.
 */
import { lstat, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { TokcapError } from '../../errors.js';
import { partName } from '../../layout/shard.js';
import { checkOutputTarget } from '../atomic-output.js';
import type { ExportOptions } from '../export-run.js';
import type { ParquetTableName } from './schema.js';

function usage(message: string): TokcapError {
  return new TokcapError('usage', message);
}

export function partPaths(dataset: string, shard: ExportOptions['shard']): Record<ParquetTableName, string> {
  const file = `${partName(shard)}.parquet`;
  return { calls: join(dataset, 'calls', file), rollouts: join(dataset, 'rollouts', file) };
}

/**
 * The dataset directory is absent or a directory (or a link to one), and neither of this shard's
 * part files exists unless `force`. Throws usage errors.
 */
export async function checkDatasetTarget(
  options: Pick<ExportOptions, 'out' | 'shard' | 'force' | 'dir'>,
): Promise<void> {
  const dataset = options.out;
  try {
    const st = await lstat(dataset);
    if (st.isSymbolicLink() || !st.isDirectory()) {
      // A link to a directory is fine to write into (nothing is renamed onto it); anything else is not.
      const real = await stat(dataset);
      if (!real.isDirectory()) throw usage(`--out ${dataset}: not a directory (a Parquet dataset is a directory)`);
    }
  } catch (e) {
    if (e instanceof TokcapError) throw e;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw usage(`--out ${dataset}: cannot be checked (${(e as Error).message})`);
  }
  for (const path of Object.values(partPaths(dataset, options.shard))) {
    try {
      await lstat(resolve(path, '..'));
    } catch {
      continue; // the table directory does not exist yet: nor does the part
    }
    await checkOutputTarget(path, { kind: 'file', force: options.force, protect: [options.dir] });
  }
}
