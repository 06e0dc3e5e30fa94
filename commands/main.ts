/**
 * The binary's entry (bin/tokcap.js): loads either the program (commands/run.ts) or, for the
 * hidden `tokcap __complete` that shells run on every Tab, only the completer
 * (commands/complete.ts), which needs neither commander nor any renderer.
 */
export async function main(argv: readonly string[]): Promise<number> {
  // The live view's listing starts before the command line is parsed (./watch/early.ts).
  if (argv[2] === 'watch') (await import('./watch/early.js')).startEarly(argv.slice(3), process.env, process.stdout.isTTY === true);
  // verify-digests' and build's worker thread starts now, while this thread loads the command (./early-job.ts).
  if (argv[2] === 'verify-digests' || argv[2] === 'build') (await import('./early-job.js')).startEarlyJob(argv[2], argv.slice(3), process.env);
  if (argv[2] !== '__complete') return (await import('./run.js')).run(argv);
  // A shell that stops reading gets no stack trace on its prompt.
  process.stdout.on('error', () => process.exit(0));
  return (await import('./complete.js')).runComplete(argv.slice(3), process.stdout, process.env);
}
