/**
 * The binary's entry (bin/tokcap.js): loads either the program (commands/run.ts) or, for the
 * hidden `tokcap __complete` that shells run on every Tab, only the completer
 * (commands/complete.ts), which needs neither commander nor any renderer.
 */
import { commandIndex } from './command-word.js';

export async function main(argv: readonly string[]): Promise<number> {
  const at = commandIndex(argv);
  const command = at === -1 ? undefined : argv[at];
  // Its options: the words after the command and the global ones before it (which an early start
  // does not read as plain: it then leaves the work to the command).
  const args = at === -1 ? [] : [...argv.slice(2, at), ...argv.slice(at + 1)];
  // The live view's listing starts before the command line is parsed (./watch/early.ts).
  if (command === 'watch') (await import('./watch/early.js')).startEarly(args, process.env, process.stdout.isTTY === true);
  // verify-digests' and build's worker thread starts now, while this thread loads the command (./early-job.ts).
  if (command === 'verify-digests' || command === 'build') (await import('./early-job.js')).startEarlyJob(command, args, process.env);
  if (argv[2] !== '__complete') return (await import('./run.js')).run(argv);
  // A shell that stops reading gets no stack trace on its prompt.
  process.stdout.on('error', () => process.exit(0));
  return (await import('./complete.js')).runComplete(argv.slice(3), process.stdout, process.env);
}
