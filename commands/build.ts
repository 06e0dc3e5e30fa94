/**
 * tokcap build DIR [ID...] [--freeze] [--all] [--model NAME] [--fail-on-mask]
 *
 * Without --freeze: a read-only preview of what the reference consumer would return for a
 * frozen copy of each rollout (`preview: true`, no `_capture_snapshot`); every rollout when no
 * ids are given. With --freeze: exactly the reference consumer (freeze, then build). An invalid
 * id is that rollout's failed build, as in the reference. The human output explains each mask.
 */
import { buildRolloutDetailed, type DetailedBuild } from '../src/build/build-rollout.js';
import { failedBuild, type ConsumerResult } from '../src/build/consumer-result.js';
import { TokcapError } from '../src/errors.js';
import { scanDirectory } from '../src/layout/scan-directory.js';
import { isValidRolloutId } from '../src/layout/rollout-id.js';
import { RawJsonText } from '../src/json/canonical-json.js';
import type { CommandContext } from './context.js';
import { stringifyJson } from './json-out.js';
import { EXIT_FAILURE, EXIT_NEGATIVE } from './errors.js';
import { assertListableDir, plural, storeOf } from './shared.js';

/** A failed build whose cause is the store (freeze/read failure), not the capture's content. */
export function isStoreFailure(r: ConsumerResult): boolean {
  return r.rebuilt_response === null && 'error' in r && r.metrics.n_calls === 0 && r.error !== 'capture contains no token records';
}

export async function run(ctx: CommandContext<'build'>): Promise<void> {
  const store = storeOf(ctx);
  // A preview of given ids reads no listing: check DIR first, or a mistyped DIR builds as empty rollouts.
  if (ctx.idsGiven && !ctx.options.all && !ctx.options.freeze) await assertListableDir(ctx.dir);
  const ids = ctx.idsGiven && !ctx.options.all ? [...ctx.ids] : [...(await scanDirectory(ctx.dir)).rollouts.keys()].sort();
  const bar = ids.length > 20 ? ctx.progress({ title: ctx.options.freeze ? 'freezing and building' : 'building', total: ids.length }) : undefined;
  const results: unknown[] = [];
  let masked = 0;
  let failed = 0;
  const human: string[] = [];
  for (const id of ids) {
    bar?.tick(1, id);
    const d = await buildRolloutDetailed(store, id, { freeze: ctx.options.freeze, model: ctx.options.model });
    if (d.error) {
      results.push(ctx.fail(d.error, id));
      failed++;
      continue;
    }
    const r = d.result;
    results.push(r);
    if (r.mask_sample) masked++;
    if (isStoreFailure(r)) {
      failed++;
      // A tombstone in a directory-wide preview is expected, not a store failure.
      const tombstone = !ctx.options.freeze && !ctx.idsGiven && 'error' in r && r.error.endsWith(' is retired');
      if (!tombstone) {
        // The result carries the reference's error string; stderr still gets its one line.
        // An invalid id is quoted inside the error (Python repr, control characters escaped).
        const subject = isValidRolloutId(id) ? `${id}: ` : '';
        ctx.err(`tokcap: ${subject}${'error' in r ? r.error : 'build failed'}`);
        ctx.raise(EXIT_FAILURE);
      }
    }
    if (!ctx.options.json && !ctx.options.quiet) human.push(...explain(ctx, id, d));
  }
  bar?.done();
  if (ctx.options.failOnMask && masked > 0) ctx.raise(EXIT_NEGATIVE);
  try {
    ctx.json(results);
  } catch (e) {
    // A result that cannot be written as JSON (a token id past 2^64 in a root record, which no
    // digest check rejects) must not cost the other rollouts their results: report it as that
    // rollout's failed build (exit 3) and print the rest.
    if (!ctx.options.json) throw e;
    ctx.json(results.map((r, i) => jsonSafeResult(ctx, ids[i], r)));
  }
  for (const line of human) ctx.out(line);
  if (!ctx.options.quiet) {
    const ok = ids.length - masked;
    const summary = `${plural(ids.length, 'rollout')}: ${ok} trainable, ${masked} masked${failed ? ` (${failed} could not be built)` : ''}${ctx.options.freeze ? '' : ' — preview, nothing frozen'}`;
    ctx.out(masked ? ctx.styles.warn(summary) : ctx.styles.ok(summary));
  }
}

function jsonSafeResult(ctx: CommandContext<'build'>, id: string, r: unknown): unknown {
  try {
    stringifyJson(r);
    return r;
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const err = new TokcapError('corrupt', `the build result cannot be written as JSON: ${reason}`, { rolloutId: id, cause: e });
    ctx.fail(err, id);
    const built = r as ConsumerResult;
    const failed: ConsumerResult = failedBuild(id, `${err.pythonString()}`, built.metrics?.n_calls ?? 0);
    if (built._capture_snapshot) failed._capture_snapshot = built._capture_snapshot;
    return failed;
  }
}

function explain(ctx: CommandContext<'build'>, id: string, d: DetailedBuild): string[] {
  const s = ctx.styles;
  const r = d.result;
  const lines = [`${s.id(id)}  ${r.mask_sample ? s.badge('masked') : s.ok('trainable')}`];
  for (const c of d.causes) lines.push(`  ${s.warn('•')} ${c.message}`);
  if (d.tornTailAt !== undefined) lines.push(`  ${s.warn('•')} the JSONL ends with a torn line (never acknowledged); a freeze truncates it`);
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
