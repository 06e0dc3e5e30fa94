/**
 * tokcap verify-digests — see COMMANDS['verify-digests'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): read-only. --json: {"ok": bool, "findings": [{"rollout_id", "code",
 * "severity", "call_id"?, "line"?, "parent_call_id"?, "message"}]} sorted as in
 * conformance/README.md. Exit 1 on an error finding (or a warning with --strict); damage found
 * is a finding (1), not a failure (3).
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'verify-digests'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
