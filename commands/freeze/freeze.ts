/**
 * tokcap freeze DIR ID... — the reference freeze (docs/format.md#freeze) for each id, one at a time.
 * --json: one element per id in argument order, the snapshot identity or an inline error. With
 * an invalid id nothing is frozen (the batch is validated first); --json still prints the array,
 * marking invalid ids `invalid_rollout_id` and the others as not attempted, and exits 2.
 */
import { freezableRollouts, freezeRollout, snapshotSummary } from '../../src/ops/freeze.js';
import { invalidRolloutIdError, isValidRolloutId } from '../../src/layout/rollout-id.js';
import { TokcapError } from '../../src/errors.js';
import { scanDirectory } from '../../src/layout/scan-directory.js';
import type { CommandContext } from '../cli/context.js';
import { errorJson, EXIT_USAGE } from '../cli/errors.js';
import { plural, shardMember, showId } from '../cli/shared.js';

export async function run(ctx: CommandContext<'freeze'>): Promise<void> {
  let skippedTombstones = 0;
  let ids = [...ctx.ids];
  if (ctx.options.all) {
    // --all means every rollout that can still be frozen: retired tombstones are left out.
    const all = await freezableRollouts(
      ctx.dir,
      [...(await scanDirectory(ctx.dir, { shard: ctx.shard })).rollouts.keys()].sort(),
    );
    ids = all.freezable;
    skippedTombstones = all.tombstones.length;
  }
  const invalid = ids.filter((id) => !isValidRolloutId(id));
  if (invalid.length > 0) {
    for (const id of invalid) ctx.err(`tokcap: ${invalidRolloutIdError(id).message}`);
    ctx.raise(EXIT_USAGE);
    ctx.json(
      ids.map((id) =>
        isValidRolloutId(id)
          ? errorJson(
              new TokcapError('other', 'not frozen: the batch contains an invalid rollout id, so nothing was changed'),
              id,
            )
          : errorJson(invalidRolloutIdError(id), id),
      ),
    );
    return;
  }
  const store = ctx.store;
  const out: unknown[] = [];
  const rows: string[][] = [];
  for (const id of ids) {
    try {
      const s = await freezeRollout(store, id);
      out.push(snapshotSummary(s));
      rows.push([
        ctx.styles.id(id),
        s.snapshotId,
        String(s.version),
        String(s.entries.length),
        s.incomplete ? ctx.styles.warn('yes') : 'no',
        s.danglingIntents.length ? ctx.styles.warn(s.danglingIntents.map(showId).join(', ')) : '-',
      ]);
    } catch (e) {
      out.push(ctx.fail(e, id));
    }
  }
  // A sharded run's report says which shard it covers (docs/cli.md#sharded-runs): the array is then its `results`.
  ctx.json(ctx.shard ? { ...shardMember(ctx, ids.length), results: out } : out);
  if (rows.length > 0) {
    ctx.out(
      ctx.table(
        [
          { header: 'rollout' },
          { header: 'snapshot id' },
          { header: 'version', align: 'right' },
          { header: 'entries', align: 'right' },
          { header: 'incomplete' },
          { header: 'dangling intents' },
        ],
        rows,
      ),
    );
  }
  if (!ctx.options.quiet) {
    const extra = [
      rows.length < ids.length ? `${ids.length - rows.length} failed` : '',
      skippedTombstones ? `${plural(skippedTombstones, 'retired tombstone')} left alone` : '',
    ]
      .filter(Boolean)
      .join(', ');
    ctx.out(ctx.styles.dim(`froze ${plural(rows.length, 'rollout')}${extra ? `, ${extra}` : ''}`));
  }
}
