/**
 * tokcap build DIR [ID...] [--freeze] [--all] [--model NAME] [--fail-on-mask]
 *
 * Without --freeze: a read-only preview of what the reference consumer would return for a
 * frozen copy of each rollout (`preview: true`, no `_capture_snapshot`); every rollout when no
 * ids are given. With --freeze: exactly the reference consumer (freeze, then build). An invalid
 * id is that rollout's failed build, as in the reference. The human output explains each mask.
 */
import { buildMany } from '../../src/rollout-read/build-many.js';
import type { BuildOutcome } from '../../src/rollout-read/build-outcome.js';
import { failedBuild, type ConsumerResult } from '../../src/chains/consumer-result.js';
import { errorFromFacts, TokcapError } from '../../src/errors.js';
import { scanDirectory } from '../../src/layout/scan-directory.js';
import { RawJsonText } from '../../src/json/canonical-json.js';
import { statusMembers } from '../../src/rollout-read/result-status.js';
import { countRollout, emptySummary } from '../../src/status/summary.js';
import type { CommandContext } from '../cli/context.js';
import { couldNotBeRead, EXIT_FAILURE, EXIT_NEGATIVE } from '../cli/errors.js';
import { terminalSafe } from '../../src/text/terminal-safe.js';
import { assertListableDir, requireCaptureFiles, requireSelection, shardMember } from '../cli/shared.js';
import { summaryLines } from '../render/summary-text.js';
import { divergenceJson } from '../../src/divergence/divergence-json.js';
import { divergenceLine } from '../render/divergence-lines.js';
import { CommandTokenizers, tokenizerNote, tokenizerSource } from '../cli/tokenizers.js';
import type { TokenText } from '../../src/tokenizer/token-text.js';

export async function run(ctx: CommandContext<'build'>): Promise<void> {
  const store = ctx.store;
  // A preview of given ids reads no listing: check DIR first, or a mistyped DIR builds as empty
  // rollouts. A named id without files keeps the reference's "no records" answer.
  if (!ctx.options.freeze) requireCaptureFiles(ctx);
  if (ctx.idsGiven && !ctx.options.all && !ctx.options.freeze) await assertListableDir(ctx.dir);
  const ids =
    ctx.idsGiven && !ctx.options.all
      ? [...ctx.ids]
      : [...(await scanDirectory(ctx.dir, { shard: ctx.shard })).rollouts.keys()].sort();
  requireSelection(ctx, ids.length);
  const bar =
    ids.length > 20
      ? ctx.progress({ title: ctx.options.freeze ? 'freezing and building' : 'building', total: ids.length })
      : undefined;
  // Results are written as they come, in id order: the document is never held whole.
  // A sharded run's report says which shard it covers (docs/cli.md#sharded-runs): the results are then its `results`.
  const out = ctx.jsonArray(ctx.shard ? { head: shardMember(ctx, ids.length), key: 'results' } : undefined);
  const summary = emptySummary();
  const human: string[] = [];
  // Read nothing until a masked rollout has a divergence to show.
  const note = tokenizerNote(
    ctx.options.tokenizer,
    ctx.env,
    (l) => ctx.warn(l),
    (l) => {
      if (!ctx.options.json && !ctx.options.quiet) human.push(ctx.styles.dim(l));
    },
  );
  const tokenizers = new CommandTokenizers(tokenizerSource(ctx.options.tokenizer, ctx.env), note);
  const textsOf = async (o: BuildOutcome) => {
    const texts = new Map<string, TokenText | null>();
    for (const d of o.divergences ?? []) if (!texts.has(d.model)) texts.set(d.model, await tokenizers.textFor(d.model));
    return texts;
  };
  await buildMany(store, ids, {
    freeze: ctx.options.freeze,
    threads: ctx.threads,
    model: ctx.options.model,
    serialise: ctx.options.json,
    status: true,
    divergences: true,
    extraMembers: async (o) => {
      if (!ctx.options.json || !o.divergences) return undefined;
      const texts = await textsOf(o);
      return { divergences: o.divergences.map((d) => divergenceJson(d, texts.get(d.model))) };
    },
    onProgress: (done) => bar?.update(done),
    emit: async (o, i) => {
      const id = ids[i];
      // Without --json the results were not serialised: the summary is all the output needs.
      // Waiting for a slow reader of stdout holds the next builds back.
      const written = ctx.options.json
        ? out.push(o.output !== undefined ? new RawJsonText(o.output) : unwritableResult(ctx, id, o), o.release)
        : undefined;
      countRollout(summary, o.status!, o.verdict);
      const kind = o.verdict.error?.kind;
      // A tombstone in a directory-wide preview is expected, not a store failure.
      const tombstone = kind === 'retired' && !ctx.options.freeze && !ctx.idsGiven;
      if (kind !== undefined && !tombstone) {
        if (kind === 'invalid_rollout_id') {
          // The JSON keeps the reference's "ValueError: Invalid rollout id: ..."; the line says it
          // in words, naming the id quoted (an invalid id may hold anything; controls escaped).
          ctx.err(
            `tokcap: ${terminalSafe(`'${id}'`)}: invalid rollout id (see docs/format.md#rollout-ids); nothing was built for it`,
          );
          ctx.raise(EXIT_FAILURE);
        } else ctx.fail(errorFromFacts(o.verdict.error!, { rolloutId: id }), id);
      }
      if (!ctx.options.json && !ctx.options.quiet)
        human.push(...explain(ctx, id, o, o.divergences ? await textsOf(o) : undefined));
      return written;
    },
  });
  bar?.done();
  out.end();
  if (ctx.options.failOnMask && summary.byVerdict.masked > 0) ctx.raise(EXIT_NEGATIVE);
  for (const line of human) ctx.out(line);
  if (!ctx.options.quiet) {
    const lines = summaryLines(summary, ctx.styles, { verdicts: true });
    if (!ctx.options.freeze) lines[lines.length - 1] += ' — preview, nothing frozen';
    for (const line of lines) ctx.out(line);
  }
}

/**
 * A result that cannot be written as JSON (a token id past 2^64 in a root record, which no
 * digest check rejects) must not cost the other rollouts their results: it becomes that
 * rollout's failed build, reported on stderr (exit 3).
 */
function unwritableResult(ctx: CommandContext<'build'>, id: string, o: BuildOutcome): object {
  const err = new TokcapError('corrupt', `the build result cannot be written as JSON: ${o.unwritable}`, {
    rolloutId: id,
  });
  ctx.fail(err, id);
  const failed: ConsumerResult = failedBuild(id, err.pythonString(), o.summary.nCalls);
  if (o.summary.captureSnapshot) failed._capture_snapshot = o.summary.captureSnapshot;
  return o.status
    ? { ...failed, ...statusMembers(o.status, { ...o.verdict, verdict: 'masked', unbuilt: true, error: err.facts() }) }
    : failed;
}

function explain(
  ctx: CommandContext<'build'>,
  id: string,
  o: BuildOutcome,
  texts?: Map<string, TokenText | null>,
): string[] {
  const s = ctx.styles;
  const r = o.summary;
  const lines = [
    `${s.id(id)}  ${s.badge(o.verdict.verdict)}${o.status ? `  ${s.badge(o.status.status)}${o.status.conditions.map((c) => ' ' + s.badge(c)).join('')}` : ''}`,
  ];
  // A rollout that could not be read has no mask causes, only the reason it could not be read.
  const unread = o.verdict.verdict === 'unavailable';
  if (unread)
    lines.push(`  ${s.error('•')} ${couldNotBeRead(o.verdict.error ?? { kind: 'other', message: r.error ?? '' })}`);
  else for (const c of o.causes) lines.push(`  ${s.warn('•')} ${c.message}`);
  for (const d of o.divergences ?? []) lines.push(`  ${s.warn('↳')} ${divergenceLine(d, texts?.get(d.model) ?? null)}`);
  if (o.tornTailAt !== undefined)
    lines.push(`  ${s.warn('•')} the JSONL ends with a torn line (never acknowledged); a freeze truncates it`);
  if (r.built) {
    const failures = Object.entries(r.linkFailures ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    lines.push(
      s.dim(
        `  calls ${r.nCalls}, chains ${r.chains}, roots ${r.roots}, quarantined ${r.quarantinedCalls}, ` +
          `tokens delivered ${r.tokensDelivered}/${r.tokensCaptured} (${fraction(r.deliveredFraction ?? 0)})` +
          (failures ? `, link failures: ${failures}` : ''),
      ),
    );
  }
  return lines;
}

function fraction(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}
