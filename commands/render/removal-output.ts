/** Output shared by `retire` and `delete`: {removed, absent} plus per-rollout failures. */
import type { RemovalResult } from '../../src/ops/retire.js';
import type { CommandContext } from '../cli/context.js';
import { plural } from '../cli/shared.js';

export function reportRemoval(
  ctx: CommandContext<'retire' | 'delete'>,
  result: RemovalResult,
  verb: string,
  absentVerb: string,
): void {
  const errors = result.failed.map(({ rolloutId, error }) => ctx.fail(error, rolloutId));
  const doc: Record<string, unknown> = { removed: result.removed, absent: result.absent };
  if (errors.length > 0) doc.errors = errors;
  ctx.json(doc);
  if (ctx.options.quiet) return;
  for (const id of result.removed) ctx.out(`${ctx.styles.ok(verb)} ${ctx.styles.id(id)}`);
  for (const id of result.absent)
    ctx.out(`${ctx.styles.dim(absentVerb)} ${ctx.styles.id(id)} ${ctx.styles.dim('(no record files)')}`);
  ctx.out(
    ctx.styles.dim(
      `${plural(result.removed.length, 'rollout')} ${verb}, ${result.absent.length} without records${result.failed.length ? `, ${result.failed.length} failed` : ''}`,
    ),
  );
}
