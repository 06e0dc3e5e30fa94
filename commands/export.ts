/**
 * tokcap export — see COMMANDS['export'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): --json: {"out": PATH, "format", "rollouts": n, "trainable": n, "masked": n}.
 * Without --freeze nothing in the store changes; refuse to overwrite --out unless --force
 * (which error kind/exit code for an existing --out is not in CLI.md: usage (2) suggested).
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'export'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
