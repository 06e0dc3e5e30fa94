/**
 * export's usage checks on the filesystem (`checkFiles` in ./options.ts): `--out` outside the
 * store and absent or replaceable, the format and the options it takes, `--fields` well formed;
 * made by the program before --ids-from is read, so a usage error never waits for standard input.
 */
import { parseFieldSelection } from '../../src/export/index.js';
import { checkExportTarget } from '../../src/export/export-store.js';
import type { ExportCommandOptions, FilesCheckInput } from '../cli/option-types.js';

/** `--out -`: the lines go to standard output. */
export const STDOUT_TARGET = '-';

export async function checkOut({ dir, options: o, shard }: FilesCheckInput<ExportCommandOptions>): Promise<void> {
  const fields = o.fields === undefined ? undefined : parseFieldSelection(o.fields);
  await checkExportTarget({ ...o, dir, shard, fields, streamed: o.out === STDOUT_TARGET });
}
