/**
 * The binary's entry (bin/tokcap.js), loaded from the command line's bundle (dist/cli/main.js) or,
 * where none was built, from the modules. It reads the command line once, into a plan from the
 * option table (./plan.ts), and decides by it everything that comes before commander: the hidden
 * completer that shells run on every Tab (../completion/complete.ts, which needs neither
 * commander nor any renderer), the work started early, and where the program runs from.
 */
import { planOf } from './plan.js';
import { readSettings } from './settings.js';

type RunModule = typeof import('./run.js');

export async function main(argv: readonly string[]): Promise<number> {
  const plan = planOf(argv);
  if (plan.completing !== undefined) {
    // A shell that stops reading gets no stack trace on its prompt.
    process.stdout.on('error', () => process.exit(0));
    return (await import('../completion/complete.js')).runComplete(plan.completing, process.stdout, process.env);
  }
  const settings = readSettings(process.env);
  // verify-digests' and build's worker thread, while this thread loads the command (./early-job.ts).
  if (plan.command === 'verify-digests' || plan.command === 'build')
    (await import('./early-job.js')).startEarlyJob(plan, settings);
  if (plan.command !== 'watch') return (await import('./run.js')).run(argv);
  // The live view's listing (../watch/early.ts), then the program from the modules, never from
  // the bundle: the view's bundle imports the modules, and the process keeps one instance of each
  // (error classes, the lock's bookkeeping; docs/decisions/0013-bundles-loaded-as-built.md). A
  // URL of this module's own (which the bundle keeps: scripts/bundle-cli.mjs) names the modules'
  // run.js from either.
  (await import('../watch/early.js')).startEarly(plan, settings, process.env, process.stdout.isTTY === true);
  const modules = (await import(new URL('./run.js', import.meta.url).href)) as RunModule;
  return modules.run(argv);
}
