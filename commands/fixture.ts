/**
 * tokcap fixture DIR --rollouts N --calls C [--prompt P] [--gen G] [--turn T] [--delta] [--seed S]
 * [--mix] [--prefix X] [--no-fast] — a deterministic synthetic store with the reference writer's
 * bytes (src/fixture/generate-store.ts), for benchmarks (`npm run bench`) and experiments.
 */
import { existsSync, readdirSync } from 'node:fs';
import { generateStore } from '../src/fixture/generate-store.js';
import type { CommandContext } from './context.js';
import { plural } from './shared.js';

export async function run(ctx: CommandContext<'fixture'>): Promise<void> {
  const o = ctx.options;
  // The fast path is only for a directory nobody else can be using: missing or empty.
  const fresh = !existsSync(ctx.dir) || readdirSync(ctx.dir).length === 0;
  const fast = o.fast && fresh;
  const bar = ctx.progress({ title: 'generating', total: o.rollouts });
  const t0 = performance.now();
  const { rollouts } = await generateStore(
    ctx.store,
    {
      rollouts: o.rollouts,
      calls: o.calls,
      prompt: o.prompt,
      gen: o.gen,
      turn: o.turn,
      delta: o.delta,
      seed: o.seed,
      mix: o.mix,
      prefix: o.prefix,
      fast,
      onProgress: (done) => bar.update(done),
    },
  );
  bar.done();
  const seconds = (performance.now() - t0) / 1000;
  ctx.json({ dir: ctx.dir, rollouts: rollouts.length, calls: o.calls, fast, seconds: Math.round(seconds * 1000) / 1000 });
  if (!ctx.options.quiet) ctx.out(`${plural(rollouts.length, 'rollout')} of ${plural(o.calls, 'call')} written to ${ctx.dir} in ${seconds.toFixed(1)} s${fast ? '' : ' (through the writer)'}`);
}
