/**
 * tokcap retire — see COMMANDS['retire'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): unconditional: {"removed": [...], "absent": [...]} (fence, then records).
 * With --snapshot-id and --version (both present, program.ts checks): conditional drop per id,
 * --json [{"rollout_id", "dropped": bool}], raise 1 when any is not dropped.
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'retire'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
