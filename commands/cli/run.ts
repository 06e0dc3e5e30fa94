/**
 * The CLI entry point: `run(argv)` parses, runs one command and returns the exit code. It never
 * calls process.exit and never throws: this is the one top-level error handler.
 *
 * - CommanderError: help and version -> 0; everything else (unknown option or command, missing
 *   argument, bad option value) -> 2; commander has already printed the one-line message.
 * - TokcapError: one line `tokcap: <rollout or file>: <reason>`, exit code by kind.
 * - Anything else: one line `tokcap: unexpected error: ...`, exit 3.
 * The highest code wins over what the command had already raised. TOKCAP_DEBUG=1 adds stacks.
 */
import { CommanderError } from 'commander';
import { buildProgram, type CommandLoaders } from './program.js';
import { ExitCodeAccumulator, processIo, type CliIo } from './context.js';
import { EXIT_OK, EXIT_USAGE, exitCodeFor, formatErrorReport, type ExitCode } from './errors.js';
import { TokcapError } from '../../src/errors.js';
import { asksVersionJson, versionFacts } from './version-facts.js';

export interface RunOptions {
  io?: Partial<CliIo>;
  /** Replaces command modules (tests). */
  loaders?: CommandLoaders;
}

function commanderExitCode(e: CommanderError): ExitCode {
  switch (e.code) {
    case 'commander.helpDisplayed':
    case 'commander.version':
      return EXIT_OK;
    case 'commander.help':
      // `tokcap help ...` exits 0; bare `tokcap` (help shown as an error) exits 2.
      return e.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    default:
      return EXIT_USAGE;
  }
}

/**
 * `--no-color` is `--color=never` (the option table has one colour option; commander cannot pair
 * a `--no-` flag with an option that takes a value). Arguments after `--` are ids: left alone.
 */
export function withNoColorSpelledOut(argv: readonly string[]): string[] {
  const end = argv.indexOf('--', 2);
  return argv.map((a, i) => (a === '--no-color' && (end === -1 || i < end) ? '--color=never' : a));
}

/**
 * Runs the CLI. `argv` is in process.argv form: [node, script, ...args].
 * Returns the exit code; the caller sets process.exitCode.
 */
export async function run(argv: readonly string[] = process.argv, options: RunOptions = {}): Promise<number> {
  const io: CliIo = { ...processIo(), ...options.io };
  const exitCode = new ExitCodeAccumulator();

  // `tokcap inspect | head` closes stdout early: stop quietly instead of crashing on EPIPE.
  // Any other failure to write stdout (a full disk, an I/O error) is an I/O error like any other:
  // its one line and exit 3, never a stack trace or the exit code of a negative answer.
  if (io.stdout === process.stdout) {
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(exitCode.value);
      const e = new TokcapError('io', err.message, { file: 'standard output', cause: err });
      for (const line of formatErrorReport(e, io.env)) io.stderr.write(`${line}\n`);
      exitCode.raise(exitCodeFor(e));
      process.exit(exitCode.value);
    });
  }

  // `tokcap --version --json`: the build's facts, not commander's version line.
  if (asksVersionJson(argv.slice(2))) {
    io.stdout.write(`${JSON.stringify(versionFacts())}\n`);
    return exitCode.value;
  }

  // `process.exitCode` leaks into commander's help exit code; keep it out of the way.
  const savedExitCode = process.exitCode;
  process.exitCode = undefined;
  try {
    const program = buildProgram({ io, exitCode, loaders: options.loaders });
    await program.parseAsync(withNoColorSpelledOut(argv), { from: 'node' });
    return exitCode.value;
  } catch (e) {
    if (e instanceof CommanderError) {
      exitCode.raise(commanderExitCode(e));
      return exitCode.value;
    }
    for (const line of formatErrorReport(e, io.env)) io.stderr.write(`${line}\n`);
    exitCode.raise(exitCodeFor(e));
    return exitCode.value;
  } finally {
    if (process.exitCode === undefined) process.exitCode = savedExitCode;
  }
}
