/**
 * tokcap inspect DIR [ID...] — what is in a capture directory.
 *
 * Without ids: the summary counts (src/status/summary.ts) and a table of rollouts with their
 * status and conditions (src/status/rollout-status.ts), from the state index plus the unindexed
 * tail (no token arrays are read unless --deep). With ids: each rollout's detail
 * (src/rollout-read/rollout-detail.ts), rendered as the watch renders it, or with --json its facts
 * and first divergences. Read-only: no lock file is
 * created, nothing is repaired. This module only renders the library's answers: when --deep or
 * an id could not read a rollout's lines, its status is still the summary's
 * (src/rollout-read/read-status.ts) and the failure is reported beside it.
 */
import { corruptLinesError, errorFromFacts, type ErrorFacts } from '../../src/errors.js';
import { SUFFIX } from '../../src/layout/file-names.js';
import { directoryFacts, forEachRolloutFacts } from '../../src/facts/directory-facts.js';
import type { RolloutFacts } from '../../src/facts/rollout-facts.js';
import type { FileKind } from '../../src/layout/file-names.js';
import type { StoreOptions } from '../../src/ops/store.js';
import { orderedJsonMembers, RawJsonText } from '../../src/json/canonical-json.js';
import { scanDirectory, type DirectoryListing } from '../../src/layout/scan-directory.js';
import { noSuchRolloutError } from '../../src/errors.js';
import { statusOfFullRead } from '../../src/rollout-read/read-status.js';
import { detailOf, loadRolloutDetail, type RolloutDetail } from '../../src/rollout-read/rollout-detail.js';
import { readRollout } from '../../src/rollout-read/read-rollout.js';
import { divergenceJson } from '../../src/divergence/divergence-json.js';
import {
  ROLLOUT_STATUSES,
  knownVersion,
  rolloutStatus,
  type RolloutStatusAnswer,
} from '../../src/status/rollout-status.js';
import { countRollout, emptySummary } from '../../src/status/summary.js';
import type { CommandContext } from '../cli/context.js';
import type { SortKey, StatusFilter } from '../cli/options.js';
import { formatAgeSince, formatBytes, requireCaptureFiles, requireSelection, shardMember } from '../cli/shared.js';
import type { Progress } from '../render/progress.js';
import { summaryLines } from '../render/summary-text.js';
import { detailLines } from '../watch/rollout-lines.js';
import { callTokens } from '../../src/call-text/call-tokens.js';
import { TokcapError } from '../../src/errors.js';
import { callTextLines } from '../render/call-text-lines.js';
import { CommandTokenizers, textsByModel, tokenizerNote, tokenizerSource } from '../cli/tokenizers.js';
import { showId } from '../cli/shared.js';

export function matchesStatus(a: RolloutStatusAnswer, filter: StatusFilter): boolean {
  if (filter === 'all') return true;
  return a.status === filter || (a.conditions as string[]).includes(filter);
}

/**
 * What `--json` prints for a rollout: its facts with `status` and `conditions`, or, when it could
 * not be read, only `{"status": "unavailable", "conditions": [], "error": {kind, message}}`. When
 * its status was answered but its lines could not be read (`recordsError`), the facts are the
 * summary's (`entries_source` "index") and `error` says why.
 */
function factsJson(f: RolloutFacts | undefined, a: RolloutStatusAnswer, recordsError?: ErrorFacts): object {
  // Errors as the contract shows them: kind and message (their system facts are for the lines).
  const shown = (e: ErrorFacts | undefined) => e && { kind: e.kind, message: e.message };
  if (a.status === 'unavailable' || f === undefined)
    return { status: a.status, conditions: a.conditions, error: shown(a.error) };
  const json = {
    ...f,
    errors: f.errors.map((e) => ({ file: e.file, kind: e.kind, message: e.message })),
    status: a.status,
    conditions: a.conditions,
  };
  return recordsError ? { ...json, error: shown(recordsError) } : json;
}

/**
 * A named rollout's JSON: its FACTS and, for a masked rollout whose chain broke, the
 * `divergences` member `build --json` gives (docs/cli.md#divergences), decoded when a tokenizer is found.
 */
async function detailJson(detail: RolloutDetail, decoders: () => CommandTokenizers): Promise<object> {
  const json = factsJson(detail.facts ?? undefined, detail.status, detail.recordsError);
  if (detail.divergences.length === 0) return json;
  const texts = await textsByModel(
    decoders(),
    detail.divergences.map((d) => d.model),
  );
  return { ...json, divergences: detail.divergences.map((d) => divergenceJson(d, texts.get(d.model))) };
}

/** A rollout (or its lines) that could not be read: one error line on stderr, exit 3 (docs/cli.md#unavailable). */
function reportUnread(ctx: CommandContext<'inspect'>, id: string, error: ErrorFacts | undefined): void {
  if (error) ctx.fail(errorFromFacts(error, { rolloutId: id }), id);
}

/**
 * The problems met reading a rollout that still could be read: a file that did not parse (the
 * `corrupt` condition) is an error line and exit 3, as every command gives it (docs/cli.md#exit-codes).
 */
function warnFacts(ctx: CommandContext<'inspect'>, row: Row): void {
  const [id, f, a, recordsError] = row;
  if (a.status === 'unavailable') return reportUnread(ctx, id, a.error);
  for (const e of f.errors) ctx.fail(errorFromFacts(e, { rolloutId: id, file: e.file }), id);
  if (f.bad_lines > 0 && !f.errors.some((e) => e.file.endsWith(SUFFIX.jsonl)))
    ctx.fail(corruptLinesError(id, `${id}${SUFFIX.jsonl}`), id);
  reportUnread(ctx, id, recordsError);
}

/** Id, facts, status, and why its lines could not be read when its status was still answered. */
type Row = [string, RolloutFacts, RolloutStatusAnswer, ErrorFacts?];

/**
 * A rollout's row from facts read with --deep: when its lines could not be read, the facts are
 * the summary's (src/rollout-read/read-status.ts), so the status is the one every command gives.
 */
async function deepRow(
  store: StoreOptions,
  id: string,
  f: RolloutFacts,
  files: ReadonlySet<FileKind> | undefined,
): Promise<Row> {
  const read = await statusOfFullRead(store, id, f, { files });
  return [id, read.facts ?? f, read.status, read.recordsError];
}

function compareBy(sort: SortKey, now: number): (a: Row, b: Row) => number {
  const byId = (ia: string, ib: string) => (ia < ib ? -1 : ia > ib ? 1 : 0);
  switch (sort) {
    case 'state':
      return ([ia, , a], [ib, , b]) =>
        ROLLOUT_STATUSES.indexOf(a.status) - ROLLOUT_STATUSES.indexOf(b.status) ||
        b.conditions.length - a.conditions.length ||
        byId(ia, ib);
    case 'calls':
      return ([ia, a], [ib, b]) => b.entries - a.entries || byId(ia, ib);
    case 'version':
      return ([ia, a], [ib, b]) => b.version - a.version || byId(ia, ib);
    case 'size':
      return ([ia, a], [ib, b]) => b.file_size - a.file_size || byId(ia, ib);
    case 'age':
      return ([ia, a], [ib, b]) => now - b.mtime_ms - (now - a.mtime_ms) || byId(ia, ib);
    default:
      return ([ia], [ib]) => byId(ia, ib);
  }
}

function isSorted<T>(xs: readonly T[], order: (a: T, b: T) => number): boolean {
  for (let i = 1; i < xs.length; i++) if (order(xs[i - 1], xs[i]) > 0) return false;
  return true;
}

/**
 * `--json` in id order: the rows are written as they come, never held: memory stays that of the
 * rollouts in flight however many the directory has.
 */
async function writeJsonInIdOrder(
  ctx: CommandContext<'inspect'>,
  listing: DirectoryListing,
  bar: Progress | undefined,
): Promise<void> {
  const store = ctx.store;
  const out = ctx.jsonMap({ dir: ctx.dir, ...shardMember(ctx, listing.rollouts.size) }, 'rollouts');
  let shown = 0;
  const write = (row: Row) => {
    const [id, f, a, recordsError] = row;
    let written: Promise<void> | undefined;
    if (matchesStatus(a, ctx.options.status) && (ctx.options.limit === undefined || shown < ctx.options.limit)) {
      written = out.entry(id, factsJson(f, a, recordsError));
      shown++;
    }
    warnFacts(ctx, row);
    // A slower reader of stdout holds the next rollouts back instead of the rows piling up.
    return written;
  };
  await forEachRolloutFacts(
    store,
    { deep: ctx.options.deep, listing, threads: ctx.threads, onProgress: (d) => bar?.update(d) },
    (id, f) =>
      ctx.options.deep ? deepRow(store, id, f, listing.rollouts.get(id)).then(write) : write([id, f, rolloutStatus(f)]),
  );
  bar?.done();
  out.end({ invalid_names: listing.invalidNames, temp_state_files: listing.tempStateFiles });
}

export async function run(ctx: CommandContext<'inspect'>): Promise<void> {
  const store = ctx.store;
  requireCaptureFiles(ctx);
  const listing = await scanDirectory(ctx.dir, { shard: ctx.shard });
  requireSelection(ctx, ctx.idsGiven ? ctx.ids.length : listing.rollouts.size);
  if (ctx.idsGiven) return inspectRollouts(ctx, listing);
  const bar =
    listing.rollouts.size > 500 ? ctx.progress({ title: 'reading', total: listing.rollouts.size }) : undefined;
  if (ctx.options.json && ctx.options.sort === 'id') return writeJsonInIdOrder(ctx, listing, bar);
  const facts = await directoryFacts(store, {
    deep: ctx.options.deep,
    listing,
    threads: ctx.threads,
    onProgress: (d) => bar?.update(d),
  });
  bar?.done();
  const now = Date.now();
  const all: Row[] = [];
  for (const [id, f] of facts.rollouts)
    all.push(ctx.options.deep ? await deepRow(store, id, f, listing.rollouts.get(id)) : [id, f, rolloutStatus(f)]);
  let rows = all.filter(([, , a]) => matchesStatus(a, ctx.options.status));
  const order = compareBy(ctx.options.sort, now);
  // The facts come in id order: sorting 100,000 rows by id again is not free.
  if (!isSorted(rows, order)) rows.sort(order);
  if (ctx.options.limit !== undefined) rows = rows.slice(0, ctx.options.limit);
  if (ctx.options.json) {
    // Written as bytes member by member: no document-sized object, no string per rollout (the
    // same bytes as serialising `Object.fromEntries(rows)`, with the rows' order kept).
    const rollouts = new RawJsonText(
      orderedJsonMembers(rows.map(([id, f, a, recordsError]) => [id, factsJson(f, a, recordsError)])),
    );
    ctx.json({
      dir: ctx.dir,
      ...shardMember(ctx, listing.rollouts.size),
      rollouts,
      invalid_names: facts.invalidNames,
      temp_state_files: facts.tempStateFiles,
    });
  }
  for (const row of all) warnFacts(ctx, row);
  // The rest is human output only (ctx.out prints nothing under --json): skip building it.
  if (ctx.options.json) return;

  const summary = emptySummary();
  for (const [, , a] of all) countRollout(summary, a);
  const s = ctx.styles;
  ctx.out(s.heading(ctx.dir));
  for (const line of summaryLines(summary, s, { verdicts: false })) ctx.out(line);
  ctx.out(`invalid names ${facts.invalidNames.length}`);
  if (facts.tempStateFiles.length)
    ctx.out(
      s.dim(`temporary state files: ${facts.tempStateFiles.join(', ')} (a write in progress, or orphans of a crash)`),
    );
  if (facts.invalidNames.length)
    ctx.out(s.dim(`invalid names (ignored): ${facts.invalidNames.map((n) => JSON.stringify(n)).join(', ')}`));
  if (rows.length === 0) {
    ctx.out(s.dim(all.length ? `no rollout matches --status ${ctx.options.status}` : 'no rollouts'));
    return;
  }
  ctx.out(
    ctx.table(
      [
        { header: 'rollout' },
        { header: 'status' },
        { header: 'conditions' },
        { header: 'calls', align: 'right' },
        { header: 'dangling', align: 'right' },
        { header: 'markers', align: 'right' },
        { header: 'version', align: 'right' },
        { header: 'size', align: 'right' },
        { header: 'age', align: 'right' },
      ],
      rows.map(([id, f, a]) => {
        const known = a.status !== 'unavailable';
        return [
          s.id(id),
          s.badge(a.status),
          a.conditions.map((c) => s.badge(c)).join(' '),
          known ? String(f.entries) : '-',
          !known ? '-' : f.dangling_intents.length ? s.warn(String(f.dangling_intents.length)) : '0',
          !known ? '-' : f.incomplete_marker_calls.length ? s.warn(String(f.incomplete_marker_calls.length)) : '0',
          (known && knownVersion(f)?.toString()) || '-',
          known ? formatBytes(f.file_size) : '-',
          formatAgeSince(now, f.mtime_ms),
        ];
      }),
    ),
  );
  if (rows.length < facts.rollouts.size) ctx.out(s.dim(`showing ${rows.length} of ${facts.rollouts.size}`));
  if (!ctx.options.deep && all.some(([, f]) => f.entries_source === 'index'))
    ctx.out(s.dim('calls counted from the state index plus the unindexed tail; --deep reads every line'));
  const unread = all.filter(([, , , recordsError]) => recordsError !== undefined).length;
  if (unread > 0) ctx.out(s.error(`${unread} could not be read line by line: calls counted from the state index`));
}

async function inspectRollouts(ctx: CommandContext<'inspect'>, listing: DirectoryListing): Promise<void> {
  const store = ctx.store;
  const doc: Record<string, unknown> = {};
  const blocks: string[][] = [];
  // A terminal's own width; in a pipe or a log nothing is cut (COLUMNS does not make a terminal).
  const width = ctx.tty.stdout ? Math.max(60, ctx.terminal.columns ?? 100) : Infinity;
  // Nothing is read for decoding until a divergence or a call's text is shown.
  let tokenizers: CommandTokenizers | undefined;
  const note = tokenizerNote(
    ctx.options.tokenizer,
    ctx.env,
    (l) => ctx.warn(l),
    (l) => blocks.push([ctx.styles.dim(l)]),
  );
  const decoders = () => (tokenizers ??= new CommandTokenizers(tokenizerSource(ctx.options.tokenizer, ctx.env), note));
  if (ctx.options.call !== undefined && ctx.ids.length !== 1)
    throw new TokcapError('usage', 'inspect: --call needs exactly one rollout ID');
  for (const id of ctx.ids) {
    // A named rollout without any capture file is an error (docs/cli.md#unavailable), never empty facts.
    if (!listing.rollouts.has(id)) {
      doc[id] = ctx.fail(noSuchRolloutError(id, ctx.dir), id);
      continue;
    }
    // The JSON is the view's reading without the digest check: its FACTS do not show digests.
    const detail = ctx.options.json
      ? detailOf(await readRollout(store, id, { deep: true }))
      : await loadRolloutDetail(store, id, {}, { deep: true });
    if (detail.status.status === 'unavailable' || !detail.facts) reportUnread(ctx, id, detail.status.error);
    else warnFacts(ctx, [id, detail.facts, detail.status, detail.recordsError]);
    if (ctx.options.json) {
      doc[id] = await detailJson(detail, decoders);
      continue;
    }
    if (ctx.options.call !== undefined) {
      const t = detail.build ? callTokens(detail.build, ctx.options.call, detail.divergences) : undefined;
      if (t === undefined) {
        const why = detail.build ? `it has no call ${showId(ctx.options.call)}` : 'it could not be built';
        ctx.fail(new TokcapError('not_found', `rollout ${id}: ${why}`, { rolloutId: id }), id);
        continue;
      }
      blocks.push(callTextLines(t, await decoders().textFor(t.model), width, ctx.styles));
      continue;
    }
    const texts =
      detail.divergences.length > 0
        ? await textsByModel(
            decoders(),
            detail.divergences.map((d) => d.model),
          )
        : undefined;
    blocks.push(detailLines(detail, width, Date.now(), ctx.styles, texts));
  }
  ctx.json({ dir: ctx.dir, ...shardMember(ctx, ctx.ids.length), rollouts: doc, invalid_names: listing.invalidNames });
  for (const b of blocks) for (const l of b) ctx.out(l);
}
