/**
 * tokcap build — see COMMANDS['build'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): ids are NOT validated by the program: an invalid id is that rollout's
 * failed build ("error": "ValueError: Invalid rollout id: ...", "metrics": {"n_calls": 0}) and
 * the others are built. Without --freeze: read-only preview, no _capture_snapshot,
 * "preview": true. With --freeze: freeze, then build, exactly the reference dictionary.
 * --fail-on-mask: raise 1 when a rollout is masked. --json: array of build results.
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'build'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
