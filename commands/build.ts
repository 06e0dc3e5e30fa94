/**
 * tokcap build DIR [ID...] [--freeze] [--all] [--model NAME] [--fail-on-mask]
 *
 * Without --freeze: a read-only preview of what the reference consumer would return for a
 * frozen copy of each rollout (`preview: true`, no `_capture_snapshot`); every rollout when no
 * ids are given. With --freeze: exactly the reference consumer (freeze, then build). An invalid
 * id is that rollout's failed build, as in the reference. The human output explains each mask.
 */
import { buildChains } from '../src/build/chain-builder.js';
import { buildRollout } from '../src/build/build-rollout.js';
import type { ConsumerResult } from '../src/build/consumer-result.js';
import { maskCauses } from '../src/build/mask-causes.js';
import { scanDirectory } from '../src/layout/scan-directory.js';
import { isValidRolloutId } from '../src/layout/rollout-id.js';
import { readSnapshotReadOnly } from '../src/ops/read-snapshot.js';
import { readIncompleteMarkers } from '../src/sidefiles/incomplete-markers.js';
import { rolloutPaths } from '../src/layout/file-names.js';
import type { CommandContext } from './context.js';
import { EXIT_FAILURE, EXIT_NEGATIVE } from './errors.js';
import { plural, storeOf } from './shared.js';

/** A failed build whose cause is the store (freeze/read failure), not the capture's content. */
export function isStoreFailure(r: ConsumerResult): boolean {
  return r.rebuilt_response === null && 'error' in r && r.metrics.n_calls === 0 && r.error !== 'capture contains no token records';
}

export async function run(ctx: CommandContext<'build'>): Promise<void> {
  const store = storeOf(ctx);
  const ids = ctx.idsGiven && !ctx.options.all ? [...ctx.ids] : [...(await scanDirectory(ctx.dir)).rollouts.keys()].sort();
  const bar = ids.length > 20 ? ctx.progress({ title: ctx.options.freeze ? 'freezing and building' : 'building', total: ids.length }) : undefined;
  const results: unknown[] = [];
  let masked = 0;
  let failed = 0;
  const human: string[] = [];
  for (const id of ids) {
    bar?.tick(1, id);
    let r: ConsumerResult;
    try {
      r = await buildRollout(store, id, { freeze: ctx.options.freeze, model: ctx.options.model });
    } catch (e) {
      results.push(ctx.fail(e, id));
      failed++;
      continue;
    }
    results.push(r);
    if (r.mask_sample) masked++;
    if (isStoreFailure(r)) {
      failed++;
      // A tombstone in a directory-wide preview is expected, not a store failure.
      const tombstone = !ctx.options.freeze && !ctx.idsGiven && 'error' in r && r.error.endsWith(' is retired');
      if (!tombstone) ctx.raise(EXIT_FAILURE);
    }
    if (!ctx.options.json && !ctx.options.quiet) human.push(...(await explain(ctx, id, r)));
  }
  bar?.done();
  if (ctx.options.failOnMask && masked > 0) ctx.raise(EXIT_NEGATIVE);
  ctx.json(results);
  for (const line of human) ctx.out(line);
  if (!ctx.options.quiet) {
    const ok = ids.length - masked;
    const summary = `${plural(ids.length, 'rollout')}: ${ok} trainable, ${masked} masked${failed ? ` (${failed} could not be built)` : ''}${ctx.options.freeze ? '' : ' — preview, nothing frozen'}`;
    ctx.out(masked ? ctx.styles.warn(summary) : ctx.styles.ok(summary));
  }
}

async function explain(ctx: CommandContext<'build'>, id: string, r: ConsumerResult): Promise<string[]> {
  const s = ctx.styles;
  const lines: string[] = [];
  const verdict = r.mask_sample ? s.badge('masked') : s.ok('trainable');
  lines.push(`${s.id(id)}  ${verdict}`);
  // Context for the causes (dangling intents, markers, per-call reasons): a read-only look.
  let context = {};
  let torn = false;
  if (isValidRolloutId(id) && r.mask_sample) {
    try {
      const snap = await readSnapshotReadOnly(storeOf(ctx), id);
      const markers = await readIncompleteMarkers(rolloutPaths(ctx.dir, id).incomplete, id);
      torn = snap.tornTailAt !== undefined;
      context = { danglingIntents: snap.danglingIntents, incompleteMarkers: markers, incompleteFlag: snap.incompleteFlag, chains: snap.entries.length ? buildChains(snap.entries) : null };
    } catch {
      /* the result's own error says it */
    }
  }
  for (const c of maskCauses(r, context)) lines.push(`  ${s.warn('•')} ${c.message}`);
  if (torn) lines.push(`  ${s.warn('•')} the JSONL ends with a torn line (never acknowledged); a freeze truncates it`);
  if (r.rebuilt_response !== null) {
    const m = r.metrics;
    const failures = Object.entries(m.parent_link_failures).map(([k, v]) => `${k}=${v}`).join(' ');
    lines.push(
      s.dim(
        `  calls ${m.n_calls}, chains ${m.chains}, roots ${m.roots}, quarantined ${m.quarantined_calls}, ` +
          `tokens delivered ${m.generated_tokens_delivered}/${m.generated_tokens_captured} (${fraction(m.delivered_fraction)})` +
          (failures ? `, link failures: ${failures}` : ''),
      ),
    );
  }
  return lines;
}

function fraction(v: unknown): string {
  const x = typeof v === 'number' ? v : (v as { value: number }).value;
  return `${(x * 100).toFixed(1)}%`;
}
