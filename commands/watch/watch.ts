/**
 * tokcap watch — see ./options.ts for its arguments, options and help text.
 *
 * Contract (docs/cli.md#json-commands): the live view needs a TTY; program.ts already rejects a non-TTY stdout
 * without --once (exit 2, suggests inspect). --once --json prints one snapshot (rollouts with
 * their state, dangling intents, incomplete markers, would-mask causes) and exits; --once alone
 * prints the same snapshot as text, the lines the live view draws, every row. On a terminal,
 * --json alone also prints the snapshot (there is no live JSON view).
 *
 * Read-only in every way: the model (src/watch/) reads with short shared locks on existing lock
 * files only, creates nothing and writes nothing. React and Ink are loaded only for the live
 * view (./live.js, imported dynamically, from its bundle when there is one: ./view-loader.ts).
 */
import type { CommandContext } from '../cli/context.js';
import { corruptLinesError, errorFromFacts, TokcapError } from '../../src/errors.js';
import { endLockWaits } from '../../src/lock/rollout-lock.js';
import { DirectoryModel } from '../../src/watch/directory-model.js';
import { visibleRows, NO_FILTER } from '../../src/watch/rows.js';
import { rowJson, rowsById, watchSnapshotHead } from '../../src/watch/snapshot-json.js';
import { createWorkerReaders } from '../../src/watch/worker-readers.js';
import { readWorkerUrl } from './read-worker-url.js';
import { requireCaptureFiles } from '../cli/shared.js';
import { columnHeading, columnsFor, rowLine } from './list-rows.js';
import { headerLines, viewHeights } from './list-header.js';
import { takeEarlyView, takeEarlyWorkers } from './early.js';
import { loadLiveView } from './view-loader.js';
import { settleLoadMemory, settleOnceMemory } from './once-memory.js';
import { traceFromEnv, type Trace } from './trace.js';
import { CommandTokenizers, textsByModel, tokenizerSource } from '../cli/tokenizers.js';
import type { DetailLoader } from './hooks/use-rollout-detail.js';

/**
 * The live view's detail loader: the library's detail, with the decoders of its models when a
 * call's text is shown (`text`) or the rollout has a divergence to show (only a masked rollout
 * with a broken boundary); otherwise exactly the library's detail, nothing decoded.
 */
function decodingDetailLoader(model: DirectoryModel, tokenizers: CommandTokenizers): DetailLoader {
  return async (id, options) => {
    const { loadRolloutDetail } = await import('../../src/rollout-read/rollout-detail.js');
    const detail = await loadRolloutDetail(model.storeOptions, id);
    const models = options?.text
      ? (detail.build?.calls.map((c) => c.entry.model) ?? [])
      : detail.divergences.map((d) => d.model);
    if (models.length === 0) return detail;
    return { ...detail, texts: await textsByModel(tokenizers, models) };
  };
}

export async function run(ctx: CommandContext<'watch'>): Promise<void> {
  // --json is a snapshot even on a terminal (a live view cannot be JSON).
  if (!ctx.options.once && !ctx.options.json) return runLive(ctx);
  return runOnce(ctx);
}

/** The live view, until it is quit. */
async function runLive(ctx: CommandContext<'watch'>): Promise<void> {
  const { lockWaitMs } = ctx.store;
  // React's development build keeps debug data for every element it creates (several times
  // the heap, and much slower renders): the live view runs the production build unless the
  // caller asked otherwise. React reads it from the process's environment (the context's, in a
  // real run) when it is first loaded, just below.
  ctx.env.NODE_ENV ??= 'production';
  const trace = traceFromEnv(ctx.env);
  trace?.('watch: start');
  // Decoders are looked up when a detail shows text, never before; nothing goes to stderr under the view.
  const tokenizers = new CommandTokenizers(tokenizerSource(ctx.options.tokenizer, ctx.env), () => undefined);
  // Rows are computed in a worker thread from copies this thread takes: keys and drawing never
  // wait behind parsing a big rollout.
  const workers = rowWorkers(ctx, trace);
  // The first batch of the load is the first screen's rows, no more: the screen shows once
  // they are read (the model's default, 48, when the terminal's height is not known).
  const firstBatch = ctx.terminal.rows ? viewHeights(ctx.terminal.rows).page : undefined;
  const live = new DirectoryModel({ dir: ctx.dir, lockWaitMs, readers: workers?.readers, trace, firstBatch });
  // Its load's garbage is collected as it goes, as --once's (see once-memory.ts).
  settleLoadMemory(live);
  try {
    // The load starts before the renderer is loaded (~0.6 s): the worker lists the directory
    // and stats it meanwhile (shared-stat.ts), and the view shows what the model has so far.
    void live.rescan();
    const { view, source } = await (takeEarlyView() ?? loadLiveView());
    trace?.(`watch: ink and react loaded (${source})`);
    await view.runLive({
      model: live,
      styles: ctx.styles,
      trace,
      initialScan: false,
      loadDetail: decodingDetailLoader(live, tokenizers),
    });
  } finally {
    // Also when the renderer could not be loaded: the load started above stops, its waits for
    // locks end, and the reads in flight are dropped (a quit waits for no read).
    live.dispose();
    // Nor does the detail's read, or any other: the process ends now, whatever is held.
    endLockWaits(new Error('the live view was closed'));
    await workers?.close(0);
  }
}

/** `--once` and `--json`: one snapshot of the directory, as JSON or as the view's text. */
async function runOnce(ctx: CommandContext<'watch'>): Promise<void> {
  const { lockWaitMs } = ctx.store;
  // The one-shot forms answer a question; the live view may wait for a run to start writing.
  requireCaptureFiles(ctx);
  // Before the load: its garbage is collected as it goes (see once-memory.ts).
  settleOnceMemory();
  // The live view's load, without a screen: the same batches on both cores, in id order (no stat
  // pass: nothing to show first; no row marked as changed: one snapshot has nothing to compare with).
  const workers = rowWorkers(ctx);
  const model = new DirectoryModel({
    dir: ctx.dir,
    lockWaitMs,
    readers: workers?.readers,
    statUnread: false,
    markChanges: false,
  });
  let snapshot;
  try {
    await model.rescan();
    await model.idle();
    snapshot = model.snapshot();
  } finally {
    model.dispose();
    await workers?.close();
  }
  if (snapshot.scanError !== undefined) {
    throw new TokcapError('io', `cannot list the directory: ${snapshot.scanError.message}`, { file: ctx.dir });
  }
  // An unreadable rollout is reported (stderr, exit code by kind) and stays in the snapshot.
  for (const r of snapshot.rows) {
    if (r.error) ctx.fail(errorFromFacts(r.error, { rolloutId: r.id }), r.id);
    // A corrupt file is exit 3 for every command (docs/cli.md#exit-codes), lines of J included.
    else if (r.conditions.includes('corrupt')) ctx.fail(corruptLinesError(r.id, `${r.id}.tokens.jsonl`), r.id);
  }
  if (ctx.options.json) {
    // Row by row: the document of 100,000 rollouts is never held whole (same bytes as
    // `ctx.json(watchSnapshotJson(snapshot))`).
    const out = ctx.jsonMap(watchSnapshotHead(snapshot), 'rollouts');
    for (const r of rowsById(snapshot)) {
      // A slower reader of stdout: wait for it, or the whole document queues in memory.
      const written = out.entry(r.id, rowJson(r));
      if (written) await written;
    }
    out.end({});
    return;
  }
  const width = ctx.terminal.columns ?? 120;
  const rows = visibleRows(snapshot.rows, NO_FILTER, 'recent');
  const now = Date.now();
  const header = headerLines(
    {
      dir: snapshot.dir,
      totals: snapshot.totals,
      pending: snapshot.pending,
      ready: snapshot.ready,
      scanError: snapshot.scanError,
      sort: 'recent',
      filter: NO_FILTER,
      shown: rows.length,
      first: rows.length === 0 ? 0 : 1,
      last: rows.length,
    },
    width,
    ctx.styles,
  );
  for (const line of header) ctx.out(line);
  // What --json counts, the text says too (as inspect does).
  if (snapshot.tempStateFiles.length) {
    ctx.out(
      ctx.styles.dim(
        `temporary state files: ${snapshot.tempStateFiles.join(', ')} (a write in progress, or orphans of a crash)`,
      ),
    );
  }
  const cols = columnsFor(
    width,
    rows.reduce((m, r) => Math.max(m, r.id.length), 0),
  );
  ctx.out(ctx.styles.dim(columnHeading(cols)).trimEnd());
  for (const r of rows) ctx.out(rowLine(r, { now, selected: false, cols, styles: ctx.styles }).trimEnd());
  if (rows.length === 0) ctx.out('no rollouts in this directory');
}

/** The read worker, unless TOKCAP_WORKERS=1 keeps everything in this thread. */
function rowWorkers(ctx: CommandContext<'watch'>, trace?: Trace) {
  // Started before the command line was parsed, listing DIR already (./early.ts).
  const early = takeEarlyWorkers(ctx.dir, trace);
  if (ctx.settings.threads === 1) {
    void early?.close(0);
    return undefined;
  }
  const workers = early ?? createWorkerReaders(readWorkerUrl());
  // Its start (a thread, its modules) overlaps the directory listing, or the live view's renderer.
  workers.start();
  return {
    readers: { readBatch: workers.readBatch, scanForLoad: workers.scanForLoad, rescanListing: workers.rescanListing },
    close: (timeoutMs?: number) => workers.close(timeoutMs),
  };
}
