/**
 * tokcap verify-digests DIR [ID...] [--strict] — the findings of docs/conformance.md#verify-findings: index
 * vs raw line bytes, token digests and cum_len, delta reconstruction, parent links. Read-only.
 * Exit 1 on any error finding (or any warning with --strict); damage is a finding, not exit 3.
 * A rollout it could not read (lock timeout, I/O error) or a named id without capture files is
 * not verified: listed in `unchecked`, `ok` false, exit 3 (docs/cli.md#unavailable).
 */
import { verifyDirectory } from '../../src/verify/verify-directory.js';
import type { Finding } from '../../src/verify/findings.js';
import { FindingSpool } from './finding-spool.js';
import type { CommandContext } from '../cli/context.js';
import { EXIT_NEGATIVE } from '../cli/errors.js';
import { plural, requireCaptureFiles, requireSelection, shardMember, showId } from '../cli/shared.js';
import { noSuchRolloutError } from '../../src/errors.js';
import { compareCodePoints } from '../../src/json/canonical-json.js';

export async function run(ctx: CommandContext<'verify-digests'>): Promise<void> {
  requireCaptureFiles(ctx);
  // --json: the findings are serialised as they come, not held as objects (a damaged 2 GB store has many).
  const spool = ctx.options.json ? new FindingSpool() : undefined;
  try {
    await verify(ctx, spool);
  } finally {
    spool?.close();
  }
}

async function verify(ctx: CommandContext<'verify-digests'>, spool: FindingSpool | undefined): Promise<void> {
  const ids = ctx.idsGiven ? [...ctx.ids] : undefined;
  if (ids) requireSelection(ctx, ids.length);
  // The library lists DIR once for the job and says how many rollouts it found (the bar's total).
  let bar: ReturnType<typeof ctx.progress> | undefined;
  const result = await verifyDirectory(ctx.store, {
    ids,
    shard: ctx.shard,
    threads: ctx.threads,
    onStart: (total) => (bar = total > 50 ? ctx.progress({ title: 'verifying', total }) : undefined),
    onProgress: (done) => bar?.update(done),
    ...(spool ? { onFindings: (f: Finding[]) => spool.add(f) } : {}),
  });
  bar?.done();
  // A shard with nothing in it: known once DIR is listed.
  requireSelection(ctx, result.rollouts + result.missing.length);
  // A named rollout without any capture file was not verified: an error (docs/cli.md#unavailable), not a warning.
  const missing = result.missing;
  const errors = [
    ...missing.map((id) => ctx.fail(noSuchRolloutError(id, ctx.dir), id)),
    ...result.failed.map(({ rolloutId, error }) => ctx.fail(error, rolloutId)),
  ];
  // Checked by nobody: never counted as verified, and `ok` is false (a `jq -e .ok` gate fails).
  const unchecked = [...missing, ...result.unchecked].sort(compareCodePoints);
  const nErrors = spool ? spool.errors : result.findings.filter((f) => f.severity === 'error').length;
  const nWarnings = spool ? spool.count - spool.errors : result.findings.length - nErrors;
  if (nErrors > 0 || (ctx.options.strict && nWarnings > 0)) ctx.raise(EXIT_NEGATIVE);

  const doc: Record<string, unknown> = {
    ok: result.ok && unchecked.length === 0,
    findings: result.findings,
    unchecked,
    ...shardMember(ctx, result.rollouts + missing.length),
  };
  if (errors.length) doc.errors = errors;
  if (spool) return spool.writeDocument(ctx.stdoutStream(), doc);
  ctx.json(doc);

  const byRollout = new Map<string, Finding[]>();
  for (const f of result.findings) {
    let list = byRollout.get(f.rollout_id);
    if (!list) byRollout.set(f.rollout_id, (list = []));
    list.push(f);
  }
  if (!ctx.options.quiet || nErrors > 0) {
    for (const [id, list] of byRollout) {
      if (ctx.options.quiet && !list.some((f) => f.severity === 'error')) continue;
      const e = list.filter((f) => f.severity === 'error').length;
      ctx.out(
        `${ctx.styles.id(id)}  ${e ? ctx.styles.error(plural(e, 'error')) : ''}${e && list.length - e ? ', ' : ''}${list.length - e ? ctx.styles.warn(plural(list.length - e, 'warning')) : ''}`,
      );
      for (const f of list) {
        const sev = f.severity === 'error' ? ctx.styles.error('error  ') : ctx.styles.warn('warning');
        const where = [
          f.line !== undefined ? `line ${f.line}` : '',
          f.call_id !== undefined ? `call ${showId(f.call_id)}` : '',
          f.parent_call_id !== undefined ? `parent ${showId(f.parent_call_id)}` : '',
        ]
          .filter(Boolean)
          .join(', ');
        ctx.out(`  ${sev} ${f.code}${where ? ctx.styles.dim(` (${where})`) : ''}: ${f.message}`);
      }
    }
  }
  if (!ctx.options.quiet) {
    const verified = result.rollouts - result.unchecked.length;
    // A named id without files is not found, not "could not be read": each says what it is.
    const unread = [...result.unchecked].sort(compareCodePoints);
    const notFound = missing.length
      ? `; ${plural(missing.length, 'rollout')} not found (no capture files, not verified): ${missing.map(showId).join(', ')}`
      : '';
    const notRead =
      (unread.length
        ? `; ${plural(unread.length, 'rollout')} could not be read (not verified): ${unread.map(showId).join(', ')}`
        : '') + notFound;
    const summary = `${plural(verified, 'rollout')} verified: ${plural(nErrors, 'error')}, ${plural(nWarnings, 'warning')} in ${plural(byRollout.size, 'rollout')}${notRead}`;
    ctx.out(
      nErrors || unchecked.length
        ? ctx.styles.error(summary)
        : nWarnings
          ? ctx.styles.warn(summary)
          : ctx.styles.ok(summary),
    );
  }
}
