/**
 * tokcap export — see ./options.ts for its arguments, options and help text,
 * and docs/export.md for the formats.
 *
 * Contract (docs/cli.md#json-commands): --json: {"out": PATH, "format", "rollouts": n, "trainable": n, "masked": n}
 * plus "failed" (failed builds, counted in masked) and "exported" (lines/records written).
 * Without --freeze nothing in the store changes. An existing --out is refused (usage, exit 2)
 * unless --force. Failed builds are exported (masked), not errors; exit 3 only when the store
 * cannot be listed (DIR missing, not a directory, unreadable) or a rollout's lock cannot be had.
 * SIGINT/SIGTERM/SIGHUP remove the temporary output before the process dies.
 * --out - (jsonl only) streams the lines to stdout as they are produced: no temporary output, an
 * interrupted run leaves a partial stream and dies of the signal; the summary goes to stderr.
 */
import type { CommandContext } from '../cli/context.js';
import { exportStore, parseFieldSelection, type ExportSummary } from '../../src/export/index.js';
import type { Progress } from '../render/progress.js';
import { plural, requireCaptureFiles, requireSelection, shardMember } from '../cli/shared.js';
import { settleParquetMemory } from './parquet-memory.js';
import { STDOUT_TARGET } from './check-out.js';
import { orderedJson } from '../../src/json/canonical-json.js';

const CLEANUP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export async function run(ctx: CommandContext<'export'>): Promise<void> {
  const o = ctx.options;
  // Usage problems first (./check-out.ts made them already; the library makes them again):
  // nothing is read before they are settled.
  const fields = o.fields === undefined ? undefined : parseFieldSelection(o.fields);
  const toStdout = o.out === STDOUT_TARGET;
  if (!o.freeze) requireCaptureFiles(ctx);

  let discard: (() => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    discard?.();
    removeHandlers();
    // Die of the signal as if we had not caught it (exit status 128 + n for the parent).
    process.kill(process.pid, signal);
  };
  const removeHandlers = () => {
    for (const s of CLEANUP_SIGNALS) process.removeListener(s, onSignal);
  };
  for (const s of CLEANUP_SIGNALS) process.on(s, onSignal);

  // Before the Parquet writer is loaded: see parquet-memory.ts.
  if (o.format === 'parquet') settleParquetMemory();

  let progress: Progress | undefined;
  let summary: ExportSummary;
  try {
    summary = await exportStore(
      {
        ...ctx.store,
        ids: ctx.idsGiven ? ctx.ids : undefined,
        shard: ctx.shard,
        freeze: o.freeze,
        model: o.model,
        format: o.format,
        out: o.out,
        stream: toStdout ? ctx.stdoutStream() : undefined,
        force: o.force,
        trainableOnly: o.trainableOnly,
        fields,
        threads: ctx.threads,
        checkSelection: (selected) => requireSelection(ctx, selected),
      },
      {
        onStart: (total) => {
          progress = ctx.progress({ title: 'exporting', total });
        },
        onRollout: (_done, _total, id) => progress?.tick(1, id),
        onRolloutError: (e, id) => {
          ctx.fail(e, id);
        },
        onTemporary: (_path, discardSync) => {
          discard = discardSync;
        },
      },
    );
  } finally {
    progress?.done();
    removeHandlers();
  }

  // Writing the output failed: named after the target (exit 3); the summary and document still print.
  const outputError = summary.output_error ? ctx.fail(summary.output_error) : undefined;
  const document = {
    out: summary.out,
    format: summary.format,
    rollouts: summary.rollouts,
    trainable: summary.trainable,
    masked: summary.masked,
    failed: summary.failed,
    exported: summary.exported,
    ...shardMember(ctx, summary.rollouts),
    ...(outputError ? { error: outputError.error } : {}),
  };
  // With --out -, stdout is the data: the summary (text or JSON) goes to stderr.
  if (toStdout) {
    if (o.json) ctx.err(orderedJson(document));
    else if (!o.quiet) ctx.err(summaryLine(summary, o.trainableOnly));
    return;
  }
  if (o.json) {
    ctx.json(document);
    return;
  }
  if (o.quiet) return;
  ctx.out(summaryLine(summary, o.trainableOnly));
}

export function summaryLine(s: ExportSummary, trainableOnly: boolean): string {
  const to = s.out === STDOUT_TARGET ? 'standard output' : s.out;
  // The verdict words and the "could not be built" / "could not be read" of every summary.
  const failed = s.failed > 0 ? ` (${s.failed} could not be built)` : '';
  const unread =
    s.trainable + s.masked < s.rollouts ? `, ${s.rollouts - s.trainable - s.masked} could not be read (left out)` : '';
  if (s.output_error) {
    return `nothing exported to ${to} (${s.format}): the output could not be written; ${plural(s.rollouts, 'rollout')} read: ${s.trainable} trainable, ${s.masked} masked${failed}${unread}`;
  }
  if (trainableOnly) {
    return `exported ${s.exported} of ${plural(s.rollouts, 'rollout')} to ${to} (${s.format}): ${s.trainable} trainable; ${s.masked} masked left out${failed}${unread}`;
  }
  // A rollout that could not be read is not written: the count says what was (docs/cli.md#unavailable).
  const count =
    s.exported < s.rollouts ? `${s.exported} of ${plural(s.rollouts, 'rollout')}` : plural(s.rollouts, 'rollout');
  return `exported ${count} to ${to} (${s.format}): ${s.trainable} trainable, ${s.masked} masked${failed}${unread}`;
}
