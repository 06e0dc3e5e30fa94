/**
 * tokcap retire DIR ID...                       batch retirement with a fence (docs/format.md#retire)
 * tokcap retire DIR ID --snapshot-id S --version N   conditional drop of a consumed snapshot (docs/format.md#drop)
 *
 * The batch is validated before anything changes. A drop that is refused exits 1 and says why
 * (not frozen, another snapshot, another version); the rollout is left as it was.
 */
import { dropRolloutOutcome, type DropOutcome } from '../../src/ops/drop.js';
import { retireRolloutsOutcome } from '../../src/ops/retire.js';
import type { CommandContext } from '../cli/context.js';
import { EXIT_NEGATIVE } from '../cli/errors.js';
import { reportRemoval } from '../render/removal-output.js';
import { assertListableDir } from '../cli/shared.js';

export async function run(ctx: CommandContext<'retire'>): Promise<void> {
  const store = ctx.store;
  const { snapshotId: sid, version } = ctx.options;
  if (sid !== undefined && version !== undefined) {
    const out: unknown[] = [];
    for (const id of ctx.ids) {
      try {
        const outcome = await dropRolloutOutcome(store, id, sid, version);
        if (outcome.dropped) {
          out.push({ rollout_id: id, dropped: true });
          ctx.out(
            `${ctx.styles.ok('dropped')} ${ctx.styles.id(id)} (snapshot ${sid}, version ${version}): records removed, fence kept`,
          );
        } else {
          ctx.raise(EXIT_NEGATIVE);
          const why = refusalText(outcome, sid, version);
          out.push({ rollout_id: id, dropped: false, reason: why, refusal: outcome.reason });
          if (!ctx.options.json) ctx.err(`tokcap: ${id}: not dropped: ${why}`);
        }
      } catch (e) {
        out.push(ctx.fail(e, id));
      }
    }
    ctx.json(out);
    return;
  }
  // A missing DIR is one error about DIR (as for every command), not a fence write failing per id.
  await assertListableDir(ctx.dir);
  const result = await retireRolloutsOutcome(store, ctx.ids);
  reportRemoval(ctx, result, 'retired', 'fenced');
}

/** The library's refusal in words. */
function refusalText(o: Extract<DropOutcome, { dropped: false }>, sid: string, version: number): string {
  switch (o.reason) {
    case 'absent':
      return 'the rollout has no state (never frozen)';
    case 'retired':
      return 'the rollout is retired and its fence holds no snapshot';
    case 'not_frozen':
      return 'the rollout is not frozen';
    case 'snapshot_differs':
      return `its snapshot id is ${o.actual || '(none)'}, not ${sid}`;
    case 'version_differs':
      return `its version is ${o.actual}, not ${version} (changed since that snapshot was consumed)`;
  }
}
