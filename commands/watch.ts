/**
 * tokcap watch — see COMMANDS['watch'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): the live view needs a TTY; program.ts already rejects a non-TTY stdout
 * without --once (exit 2, suggests inspect). --once --json prints one snapshot (rollouts with
 * their state, dangling intents, incomplete markers, would-mask causes) and exits.
 * Keep React/Ink imports inside this module (or a ./watch-view.tsx it imports dynamically) so
 * other commands never load them.
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'watch'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
