/**
 * tokcap delete DIR ID... — removes records AND fences (docs/format.md#delete), so the ids can be
 * reused. Removing a fence lets a late writer of the old attempt start a fresh capture: use it
 * only for ids whose writers are gone. The lock file stays.
 */
import { deleteRollouts } from '../../src/ops/delete.js';
import type { CommandContext } from '../cli/context.js';
import { reportRemoval } from '../render/removal-output.js';
import { assertListableDir } from '../cli/shared.js';

export async function run(ctx: CommandContext<'delete'>): Promise<void> {
  // A missing DIR is one error about DIR (as for every command), not a removal failing per id.
  await assertListableDir(ctx.dir);
  const result = await deleteRollouts(ctx.store, ctx.ids);
  reportRemoval(ctx, result, 'deleted', 'cleared');
}
