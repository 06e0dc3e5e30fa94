/**
 * tokcap delete — see COMMANDS['delete'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): removes records and fences; the lock file stays.
 * --json: {"removed": [...], "absent": [...]}.
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'delete'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
