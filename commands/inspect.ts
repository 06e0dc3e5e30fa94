/**
 * tokcap inspect DIR [ID...] — what is in a capture directory.
 *
 * Without ids: counts by state and a table of rollouts, from the state index plus the unindexed
 * tail (no token arrays are read unless --deep). With ids: per rollout, its state, one row per
 * call (parent resolution, lengths, delta or full, digest check, intent, marker), the chain tree
 * and the build verdict. Read-only: no lock file is created, nothing is repaired.
 */
import { buildChains, type ChainBuild } from '../src/build/chain-builder.js';
import { assemble, finishConsumerResult } from '../src/build/consumer-result.js';
import { describeReason, maskCauses } from '../src/build/mask-causes.js';
import { directoryFacts, forEachRolloutFacts } from '../src/facts/directory-facts.js';
import type { RolloutFacts } from '../src/facts/rollout-facts.js';
import { rolloutFacts } from '../src/facts/rollout-facts.js';
import { orderedJsonMembers, RawJsonText } from '../src/json/canonical-json.js';
import { scanDirectory, type DirectoryListing } from '../src/layout/scan-directory.js';
import { noCaptureFilesError } from '../src/errors.js';
import { readSnapshotReadOnly, type ReadOnlySnapshot } from '../src/ops/read-snapshot.js';
import { verifyRollout } from '../src/verify/verify-rollout.js';
import type { CommandContext } from './context.js';
import type { SortKey, StatusFilter } from './options.js';
import { formatAge, formatBytes, plural, requireCaptureFiles, showId, storeOf } from './shared.js';
import type { RolloutState as Badge } from './styles.js';

/** The one state word shown for a rollout, most telling first. */
export function primaryState(f: RolloutFacts): Badge {
  if (f.retired) return 'retired';
  if (f.torn_tail) return 'torn';
  if (f.frozen) return 'frozen';
  return 'live';
}

export function matchesStatus(f: RolloutFacts, status: StatusFilter): boolean {
  switch (status) {
    case 'all':
      return true;
    case 'incomplete':
      return f.incomplete_flag || f.incomplete_marker_calls.length > 0;
    case 'dangling':
      return f.dangling_intents.length > 0;
    case 'torn':
      return f.torn_tail;
    default:
      return primaryState(f) === status;
  }
}

const STATE_ORDER: Badge[] = ['live', 'frozen', 'torn', 'incomplete', 'dangling', 'retired', 'masked'];

function compareBy(sort: SortKey, now: number): (a: [string, RolloutFacts], b: [string, RolloutFacts]) => number {
  switch (sort) {
    case 'state':
      return ([ia, a], [ib, b]) => STATE_ORDER.indexOf(primaryState(a)) - STATE_ORDER.indexOf(primaryState(b)) || (ia < ib ? -1 : 1);
    case 'calls':
      return ([ia, a], [ib, b]) => b.entries - a.entries || (ia < ib ? -1 : 1);
    case 'version':
      return ([ia, a], [ib, b]) => b.version - a.version || (ia < ib ? -1 : 1);
    case 'size':
      return ([ia, a], [ib, b]) => b.file_size - a.file_size || (ia < ib ? -1 : 1);
    case 'age':
      return ([ia, a], [ib, b]) => now - b.mtime_ms - (now - a.mtime_ms) || (ia < ib ? -1 : 1);
    default:
      return ([ia], [ib]) => (ia < ib ? -1 : ia > ib ? 1 : 0);
  }
}

function isSorted<T>(xs: readonly T[], order: (a: T, b: T) => number): boolean {
  for (let i = 1; i < xs.length; i++) if (order(xs[i - 1], xs[i]) > 0) return false;
  return true;
}

export async function run(ctx: CommandContext<'inspect'>): Promise<void> {
  const store = storeOf(ctx);
  requireCaptureFiles(ctx);
  const listing = await scanDirectory(ctx.dir, { shard: ctx.shard });
  if (ctx.idsGiven) return inspectRollouts(ctx, listing);
  const bar = listing.rollouts.size > 500 ? ctx.progress({ title: 'reading', total: listing.rollouts.size }) : undefined;
  if (ctx.options.json && ctx.options.sort === 'id') {
    // In id order the rows are written as they come, never held: memory stays that of the
    // rollouts in flight however many the directory has.
    const out = ctx.jsonMap({ dir: ctx.dir }, 'rollouts');
    let shown = 0;
    await forEachRolloutFacts(store, { deep: ctx.options.deep, listing, threads: ctx.threads, onProgress: (d) => bar?.update(d) }, (id, f) => {
      if (matchesStatus(f, ctx.options.status) && (ctx.options.limit === undefined || shown < ctx.options.limit)) {
        out.entry(id, f);
        shown++;
      }
      for (const e of f.errors) ctx.warn(`${id}: ${e.file}: ${e.message}`);
    });
    bar?.done();
    out.end({ invalid_names: listing.invalidNames, temp_state_files: listing.tempStateFiles });
    return;
  }
  const facts = await directoryFacts(store, { deep: ctx.options.deep, listing, threads: ctx.threads, onProgress: (d) => bar?.update(d) });
  bar?.done();
  const now = Date.now();
  let rows = [...facts.rollouts].filter(([, f]) => matchesStatus(f, ctx.options.status));
  const order = compareBy(ctx.options.sort, now);
  // The facts come in id order: sorting 100,000 rows by id again is not free.
  if (!isSorted(rows, order)) rows.sort(order);
  if (ctx.options.limit !== undefined) rows = rows.slice(0, ctx.options.limit);
  if (ctx.options.json) {
    // Written as bytes member by member: no document-sized object, no string per rollout (the
    // same bytes as serialising `Object.fromEntries(rows)`, with the rows' order kept).
    const rollouts = new RawJsonText(orderedJsonMembers(rows));
    ctx.json({ dir: ctx.dir, rollouts, invalid_names: facts.invalidNames, temp_state_files: facts.tempStateFiles });
  }
  for (const [id, f] of facts.rollouts) for (const e of f.errors) ctx.warn(`${id}: ${e.file}: ${e.message}`);
  // The rest is human output only (ctx.out prints nothing under --json): skip building it.
  if (ctx.options.json) return;

  const all = [...facts.rollouts.values()];
  const count = (p: (f: RolloutFacts) => boolean) => all.filter(p).length;
  const s = ctx.styles;
  ctx.out(`${s.heading(ctx.dir)}: ${plural(all.length, 'rollout')}`);
  ctx.out(
    [
      `${s.badge('live')} ${count((f) => primaryState(f) === 'live')}`,
      `${s.badge('frozen')} ${count((f) => primaryState(f) === 'frozen')}`,
      `${s.badge('retired')} ${count((f) => f.retired)}`,
      `${s.badge('incomplete')} ${count((f) => f.incomplete_flag)}`,
      `${s.badge('dangling')} ${count((f) => f.dangling_intents.length > 0)}`,
      `${s.badge('torn')} ${count((f) => f.torn_tail)}`,
      `invalid names ${facts.invalidNames.length}`,
    ].join('  '),
  );
  if (facts.tempStateFiles.length) ctx.out(s.dim(`temporary state files: ${facts.tempStateFiles.join(', ')} (a write in progress, or orphans of a crash)`));
  if (facts.invalidNames.length) ctx.out(s.dim(`invalid names (ignored): ${facts.invalidNames.map((n) => JSON.stringify(n)).join(', ')}`));
  if (rows.length === 0) {
    ctx.out(s.dim(all.length ? `no rollout matches --status ${ctx.options.status}` : 'no rollouts'));
    return;
  }
  ctx.out(
    ctx.table(
      [
        { header: 'rollout' },
        { header: 'state' },
        { header: 'calls', align: 'right' },
        { header: 'dangling', align: 'right' },
        { header: 'markers', align: 'right' },
        { header: 'version', align: 'right' },
        { header: 'size', align: 'right' },
        { header: 'age', align: 'right' },
      ],
      rows.map(([id, f]) => {
        const flags = [f.incomplete_flag ? s.badge('incomplete') : '', f.errors.length ? s.error('unreadable') : ''].filter(Boolean).join(' ');
        return [
          s.id(id),
          `${s.badge(primaryState(f))}${flags ? ' ' + flags : ''}`,
          String(f.entries),
          f.dangling_intents.length ? s.warn(String(f.dangling_intents.length)) : '0',
          f.incomplete_marker_calls.length ? s.warn(String(f.incomplete_marker_calls.length)) : '0',
          String(f.version),
          formatBytes(f.file_size),
          f.mtime_ms ? formatAge((now - f.mtime_ms) / 1000) : '-',
        ];
      }),
    ),
  );
  if (rows.length < facts.rollouts.size) ctx.out(s.dim(`showing ${rows.length} of ${facts.rollouts.size}`));
  if (!ctx.options.deep && all.some((f) => f.entries_source === 'index')) ctx.out(s.dim('calls counted from the state index plus the unindexed tail; --deep reads every line'));
}

async function inspectRollouts(ctx: CommandContext<'inspect'>, listing: DirectoryListing): Promise<void> {
  const store = storeOf(ctx);
  const doc: Record<string, unknown> = {};
  const blocks: string[][] = [];
  for (const id of ctx.ids) {
    // A named rollout without any capture file is an error (CLI.md v2), never empty facts.
    if (!listing.rollouts.has(id)) {
      doc[id] = ctx.fail(noCaptureFilesError({ rolloutId: id }), id);
      continue;
    }
    let facts: RolloutFacts;
    try {
      facts = await rolloutFacts(store, id, { deep: true });
    } catch (e) {
      doc[id] = ctx.fail(e, id);
      continue;
    }
    doc[id] = facts;
    for (const e of facts.errors) ctx.warn(`${id}: ${e.file}: ${e.message}`);
    if (!ctx.options.json) blocks.push(await describeRollout(ctx, id, facts));
  }
  ctx.json({ dir: ctx.dir, rollouts: doc, invalid_names: listing.invalidNames });
  for (const b of blocks) for (const l of b) ctx.out(l);
}

async function describeRollout(ctx: CommandContext<'inspect'>, id: string, f: RolloutFacts): Promise<string[]> {
  const s = ctx.styles;
  const out: string[] = [];
  if (f.files.length === 0) {
    out.push(`${s.id(id)}: ${s.dim('absent (no capture files)')}`);
    return out;
  }
  const flags = [f.incomplete_flag ? s.badge('incomplete') : '', f.dangling_intents.length ? s.badge('dangling') : ''].filter(Boolean).join(' ');
  out.push(`${s.id(id)}  ${s.badge(primaryState(f))}${flags ? ' ' + flags : ''}  version ${f.version}${f.snapshot_id ? `  snapshot ${f.snapshot_id}` : ''}`);
  out.push(
    s.dim(
      `  files ${f.files.join(' ')}; JSONL ${formatBytes(f.file_size)}, indexed ${f.indexed_size ?? 'n/a (legacy or unreadable state)'}` +
        (f.unindexed_bytes ? `, ${formatBytes(f.unindexed_bytes)} unindexed (pending reconciliation)` : ''),
    ),
  );
  if (f.torn_tail) out.push(`  ${s.badge('torn')} the last line is torn (never acknowledged); freeze will truncate it`);
  if (f.missing_final_newline && !f.torn_tail) out.push(`  ${s.warn('!')} the JSONL does not end with a newline: the next writer append would corrupt it`);
  if (f.refusals.length) out.push(s.dim(`  refused calls: ${f.refusals.map(showId).join(', ')}`));
  if (f.retired) {
    out.push(s.dim('  retired tombstone: every later write fails; `tokcap sweep` removes it once old enough'));
    return out;
  }
  let snap: ReadOnlySnapshot | undefined;
  try {
    snap = await readSnapshotReadOnly(storeOf(ctx), id);
  } catch (e) {
    out.push(`  ${s.error('cannot read the entries')}: ${(e as Error).message}`);
  }
  if (!snap) return out;
  const chains = snap.entries.length ? buildChains(snap.entries) : null;
  const digestCheck = new Map<string, string>();
  try {
    for (const finding of await verifyRollout(storeOf(ctx), id)) {
      if (finding.call_id === undefined) continue;
      if (['token_digest_mismatch', 'delta_digest_mismatch', 'cum_len_mismatch', 'parent_link_mismatch', 'delta_unreconstructable'].includes(finding.code)) {
        digestCheck.set(finding.call_id, 'bad');
      } else if (finding.code === 'missing_digest' && !digestCheck.has(finding.call_id)) digestCheck.set(finding.call_id, 'missing');
    }
  } catch {
    /* shown as '?' */
  }
  const markers = new Set(f.incomplete_marker_calls);
  const rows: string[][] = [];
  for (const c of chains?.calls ?? []) {
    const parent =
      c.parentResolution === 'root'
        ? 'root'
        : `${c.parentResolution ?? 'none'}${c.claimedParentId !== null ? ' → ' + showId(c.claimedParentId) : ''}`;
    const check = digestCheck.get(c.id) ?? 'ok';
    const notes = [
      c.quarantined ? s.warn('quarantined') : '',
      chains?.notes.unresolved_retries.includes(c.id) ? s.warn('retry') : '',
      c.emptyGeneration ? s.dim('empty generation') : '',
      c.unresolvedBoundary && c.reason ? s.warn(c.reason) : c.outcome === 'recovered' ? s.dim('recovered by prefix') : '',
      c.status === 'unreconstructable' ? s.error('unreconstructable') : '',
      markers.has(c.id) ? s.warn('marked incomplete') : '',
    ].filter(Boolean);
    rows.push([
      showId(c.id),
      parent,
      c.promptLength === null ? '?' : String(c.promptLength),
      String(c.generationLength),
      c.storedAsDelta ? 'delta' : 'full',
      check === 'ok' ? s.ok('ok') : check === 'missing' ? s.dim('missing') : s.error('mismatch'),
      notes.join(' '),
    ]);
  }
  for (const d of new Set(snap.danglingIntents)) rows.push([showId(d), s.dim('-'), '-', '-', '-', '-', `${s.warn('intent without entry')}${markers.has(d) ? ' ' + s.warn('marked incomplete') : ''}`]);
  for (const m of markers) {
    if (!(chains?.calls.some((c) => c.id === m) ?? false) && !snap.danglingIntents.includes(m)) rows.push([showId(m), '-', '-', '-', '-', '-', s.warn('marked incomplete')]);
  }
  if (rows.length) {
    out.push(
      ctx.table(
        [{ header: 'call' }, { header: 'parent' }, { header: 'prompt', align: 'right' }, { header: 'gen', align: 'right' }, { header: 'stored' }, { header: 'digest' }, { header: 'notes' }],
        rows,
      ),
    );
  }
  if (chains) out.push(...chainTree(ctx, chains));
  const result = finishConsumerResult(snap.entries.length ? assemble(id, snap.entries) : { rollout_id: id, builder: 'prefix_merging', rebuilt_response: null, mask_sample: true, error: 'capture contains no token records', metrics: { n_calls: 0 } }, { incomplete: snap.incomplete });
  const causes = maskCauses(result, { danglingIntents: snap.danglingIntents, incompleteMarkers: f.incomplete_marker_calls, incompleteFlag: f.incomplete_flag, chains });
  out.push(result.mask_sample ? `  build: ${s.badge('masked')}` : `  build: ${s.ok('trainable')}`);
  for (const c of causes) out.push(`    ${s.warn('•')} ${c.message}`);
  return out;
}

/** The chain tree: every placed call under its parent; the main chain marked with ★. */
function chainTree(ctx: CommandContext<'inspect'>, chains: ChainBuild): string[] {
  const s = ctx.styles;
  const byId = new Map(chains.calls.map((c) => [c.id, c]));
  const main = new Set(chains.mainChain?.callIds ?? []);
  const lines: string[] = ['  chain tree:'];
  const roots = chains.placementOrder.filter((id) => byId.get(id)?.parentId === null);
  const walk = (id: string, prefix: string, last: boolean, depth: number) => {
    const c = byId.get(id)!;
    const mark = main.has(id) ? s.ok('★ ') : '  ';
    const how =
      c.outcome === 'root'
        ? 'root'
        : c.outcome === 'recovered'
          ? 'recovered'
          : c.outcome === 'boundary'
            ? s.warn(`boundary: ${describeReason(c.reason ?? '')}`)
            : '';
    const tags = [c.quarantined ? s.warn('quarantined') : '', chains.notes.unresolved_retries.includes(id) ? s.warn('retry') : ''].filter(Boolean).join(' ');
    const label = `${mark}${showId(id)} ${s.dim(`(${c.promptLength}+${c.generationLength}${c.storedAsDelta ? ', delta' : ''})`)}${how ? ' ' + how : ''}${tags ? ' ' + tags : ''}`;
    lines.push(`  ${prefix}${depth === 0 ? '' : last ? '└─ ' : '├─ '}${label}`);
    const kids = c.children;
    kids.forEach((k, i) => walk(k, depth === 0 ? prefix : prefix + (last ? '   ' : '│  '), i === kids.length - 1, depth + 1));
  };
  for (const r of roots) walk(r, '', true, 0);
  const dropped = chains.calls.filter((c) => c.status !== 'placed');
  if (dropped.length) lines.push(s.dim(`  not in any chain: ${dropped.map((c) => `${showId(c.id)} (${c.status === 'empty_generation' ? 'empty generation' : 'unreconstructable delta'})`).join(', ')}`));
  if (chains.chains.length > 1) lines.push(s.dim(`  chains: ${chains.chains.map((c) => `${c.name} = ${c.callIds.map(showId).join(' → ')}`).join('; ')}`));
  return lines;
}
