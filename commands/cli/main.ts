/**
 * The binary's entry (bin/tokcap.js): loads either the program (commands/cli/run.ts) or, for the
 * hidden `tokcap __complete` that shells run on every Tab, only the completer
 * (commands/completion/complete.ts), which needs neither commander nor any renderer.
 */
import { planOf } from './plan.js';
import { readSettings } from './settings.js';

export async function main(argv: readonly string[]): Promise<number> {
  if (argv[2] === '__complete') {
    // A shell that stops reading gets no stack trace on its prompt.
    process.stdout.on('error', () => process.exit(0));
    return (await import('../completion/complete.js')).runComplete(argv.slice(3), process.stdout, process.env);
  }
  // What starts before the command line is fully handled, decided from the option table.
  const plan = planOf(argv);
  const settings = readSettings(process.env);
  // The live view's listing (../watch/early.ts).
  if (plan.command === 'watch')
    (await import('../watch/early.js')).startEarly(plan, settings, process.env, process.stdout.isTTY === true);
  // verify-digests' and build's worker thread, while this thread loads the command (./early-job.ts).
  if (plan.command === 'verify-digests' || plan.command === 'build')
    (await import('./early-job.js')).startEarlyJob(plan, settings);
  return (await import('./run.js')).run(argv);
}
