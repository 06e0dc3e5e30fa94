/**
 * tokcap retire DIR ID...                       batch retirement with a fence (docs/format.md#retire)
 * tokcap retire DIR ID --snapshot-id S --version N   conditional drop of a consumed snapshot (docs/format.md#drop)
 *
 * The batch is validated before anything changes. A drop that is refused exits 1 and says why
 * (not frozen, another snapshot, another version); the rollout is left as it was.
 */
import { dropRollout } from '../src/ops/drop.js';
import { retireRollouts } from '../src/ops/retire.js';
import { readState } from '../src/state/read-state.js';
import { isFrozen, snapshotId, stateVersion } from '../src/state/rollout-state.js';
import { rolloutPaths } from '../src/layout/file-names.js';
import type { CommandContext } from './context.js';
import { EXIT_NEGATIVE } from './errors.js';
import { reportRemoval } from './removal-output.js';
import { storeOf } from './shared.js';

export async function run(ctx: CommandContext<'retire'>): Promise<void> {
  const store = storeOf(ctx);
  const { snapshotId: sid, version } = ctx.options;
  if (sid !== undefined && version !== undefined) {
    const out: unknown[] = [];
    for (const id of ctx.ids) {
      try {
        const dropped = await dropRollout(store, id, sid, version);
        out.push({ rollout_id: id, dropped });
        if (dropped) {
          ctx.out(`${ctx.styles.ok('dropped')} ${ctx.styles.id(id)} (snapshot ${sid}, version ${version}): records removed, fence kept`);
        } else {
          ctx.raise(EXIT_NEGATIVE);
          const why = await refusalReason(ctx.dir, id, sid, version);
          out[out.length - 1] = { rollout_id: id, dropped, reason: why };
          if (!ctx.options.json) ctx.err(`tokcap: ${id}: not dropped: ${why}`);
        }
      } catch (e) {
        out.push(ctx.fail(e, id));
      }
    }
    ctx.json(out);
    return;
  }
  const result = await retireRollouts(store, ctx.ids);
  reportRemoval(ctx, result, 'retired', 'fenced');
}

/** Why a conditional drop was refused, read back from the state (no lock: display only). */
async function refusalReason(dir: string, id: string, sid: string, version: number): Promise<string> {
  try {
    const state = await readState(rolloutPaths(dir, id).state, id);
    if (!state.exists) return 'the rollout has no state (never frozen)';
    if (!isFrozen(state)) return 'the rollout is not frozen';
    const have = snapshotId(state) ?? '';
    if (have !== sid) return `its snapshot id is ${have || '(none)'}, not ${sid}`;
    const v = stateVersion(state, id);
    if (v !== version) return `its version is ${v}, not ${version} (changed since that snapshot was consumed)`;
    return 'the state changed while dropping';
  } catch (e) {
    return `its state cannot be read (${(e as Error).message})`;
  }
}
