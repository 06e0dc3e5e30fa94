/**
 * tokcap sweep — see COMMANDS['sweep'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): ctx.options.olderThan is in seconds (0 = any age). Skips a retired rollout
 * whose record file still exists, and reports it (ctx.warn). --dry-run changes nothing.
 * --json: {"removed": [ids, sorted], "count": n, "dry_run": bool}.
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'sweep'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
