/**
 * tokcap freeze — see COMMANDS['freeze'] in ./options.ts for its arguments, options and help text.
 *
 * Contract (CLI.md): ids (or --ids-from / --all) are required (program.ts enforces it).
 * Without --json the batch is already validated (exit 2 on an invalid id). With --json it is
 * NOT: validate here, print the array with an inline invalid_rollout_id error per invalid id
 * (use errorJson from ./errors.ts), change nothing, and raise 2.
 * --json: [{"rollout_id", "entries", "entry_call_ids", "incomplete", "snapshot_id", "version",
 * "dangling_intents"} | inline error], one element per id in argument order.
 */
import type { CommandContext } from './context.js';
import { notImplemented } from './errors.js';

export async function run(ctx: CommandContext<'freeze'>): Promise<void> {
  // TODO(lead): implement against the library (src/). ctx.dir, ctx.ids and ctx.options are
  // resolved and validated as described in ./context.ts; report per-rollout failures with
  // ctx.fail(e, id) and outcomes with ctx.raise(code).
  void ctx;
  throw notImplemented();
}
