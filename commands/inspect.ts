/**
 * tokcap inspect — see COMMANDS['inspect'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): read-only (short shared locks, no lock file created, torn tails reported,
 * never repaired). Without ids: every rollout with at least one of the four capture suffixes.
 * --json: {"dir", "rollouts": {ID: FACTS}, "invalid_names": [...sorted]}; FACTS = the conformance
 * `facts` fields; "entries_source": "index" by default, "scan" with --deep.
 * Human view: ctx.table(...) with ctx.styles.badge(state); --status/--sort/--limit shape it.
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'inspect'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
