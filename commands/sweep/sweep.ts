/**
 * tokcap sweep DIR --older-than DUR [--dry-run] — removes retired tombstones whose state file is
 * at least DUR old (docs/format.md#sweep plus tokcap's safety rule: a tombstone whose JSONL still
 * exists is skipped and reported). Quiet when there is nothing to do, for cron.
 */
import { sweepRetired, type SweepCandidate } from '../../src/ops/sweep.js';
import type { CommandContext } from '../cli/context.js';
import { formatDuration } from '../cli/duration.js';
import { EXIT_NEGATIVE } from '../cli/errors.js';
import { formatAge, plural, shellWord, showId } from '../cli/shared.js';

export async function run(ctx: CommandContext<'sweep'>): Promise<void> {
  // The cutoff exactly as asked (2d0.5h is 2d30m), not rounded like an age.
  const threshold = formatDuration(ctx.options.olderThan);
  // A line per rollout as it is removed, not at the end: an interrupted sweep leaves its log.
  const onRemoved = (r: SweepCandidate) => {
    const why = ctx.styles.dim(`retired tombstone, state unchanged for ${formatAge(r.ageSeconds)} (>= ${threshold})`);
    ctx.out(`${ctx.options.dryRun ? 'would remove' : ctx.styles.ok('removed')} ${ctx.styles.id(r.rolloutId)}  ${why}`);
  };
  const result = await sweepRetired(ctx.store, {
    olderThanSeconds: ctx.options.olderThan,
    dryRun: ctx.options.dryRun,
    onRemoved,
  });
  const errors = result.failed.map(({ rolloutId, error }) => ctx.fail(error, rolloutId));
  // An interrupted retire needs a person: a line -q keeps, and exit 1 (docs/cli.md#exit-codes).
  for (const id of result.skippedWithRecords) {
    ctx.err(
      `tokcap: ${showId(id)}: retired but its records are still there (an interrupted retire); run 'tokcap retire ${shellWord(ctx.dir)} ${shellWord(id)}' to finish it, then sweep again`,
    );
  }
  if (result.skippedWithRecords.length > 0) ctx.raise(EXIT_NEGATIVE);
  const doc: Record<string, unknown> = {
    removed: result.removed.map((r) => r.rolloutId),
    count: result.removed.length,
    dry_run: result.dryRun,
  };
  if (result.skippedWithRecords.length) doc.skipped_with_records = result.skippedWithRecords;
  if (errors.length) doc.errors = errors;
  ctx.json(doc);
  if (result.dryRun)
    ctx.out(ctx.styles.dim(`dry run: ${plural(result.removed.length, 'tombstone')} would be swept; nothing changed`));
  else if (result.removed.length > 0) ctx.out(ctx.styles.dim(`swept ${plural(result.removed.length, 'tombstone')}`));
}
