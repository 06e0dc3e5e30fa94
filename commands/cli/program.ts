/**
 * Builds the commander program from the option table (commands/cli/options.ts) and wires each
 * command to its module, loaded lazily: `tokcap sweep` loads commands/sweep/sweep.js and nothing of
 * watch's React/Ink. This file must not statically import any command module.
 *
 * Parsing rules on top of commander:
 * - Global options (--json, --no-color, -q, --lock-wait) are accepted after the command (as in
 *   docs/cli.md#common-options) and also before it; a value given after the command wins.
 * - `-V, --version` is a program-level flag only (`tokcap -V`), because `retire` owns
 *   `--version <n>`. The program uses positional options so that `tokcap retire ... --version 3`
 *   reaches retire instead of printing the version.
 * - DIR falls back to $TOKCAP_DIR (see `resolveDirAndIds` for how positionals are split).
 * - Ids: positional, then --ids-from; deduplicated keeping order; validated per the command's
 *   `idValidation` before the module is even loaded.
 * - Every commander error becomes one line `tokcap: <message>; see 'tokcap <cmd> --help'`, exit 2.
 */
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { TokcapError } from '../../src/errors.js';
import { tokcapVersion } from '../../src/version.js';
import { isValidRolloutId, validateRolloutIdBatch } from '../../src/layout/rollout-id.js';
import {
  BUILTIN_OPTIONS,
  COMMAND_NAMES,
  COMMANDS,
  ENVIRONMENT,
  EXIT_CODES,
  GLOBAL_OPTIONS,
  PROGRAM,
  type CommandName,
  type CommandOptionsMap,
  type CommandSpec,
  type Example,
  type GlobalOptions,
  type OptionSpec,
} from './options.js';
import { createContext, ExitCodeAccumulator, type CliIo, type CommandContext } from './context.js';
import { preloadChalk } from '../render/styles.js';
import { collectIds } from './ids.js';
import { resolveDirAndIds } from './dir-and-ids.js';
import { resolveShard, type ShardOption } from './shard.js';
import { readSettings } from './settings.js';

/** What every commands/<name>.ts exports. */
export interface CommandModule<N extends CommandName> {
  run(ctx: CommandContext<N>): Promise<void>;
}

export type CommandLoaders = { [N in CommandName]: () => Promise<CommandModule<N>> };

/** The lazy module map; the compiler checks each module's `run` against its context type. */
export const COMMAND_LOADERS: CommandLoaders = {
  inspect: () => import('../inspect/inspect.js'),
  freeze: () => import('../freeze/freeze.js'),
  build: () => import('../build/build.js'),
  'verify-digests': () => import('../verify-digests/verify-digests.js'),
  sweep: () => import('../sweep/sweep.js'),
  retire: () => import('../retire/retire.js'),
  delete: () => import('../delete/delete.js'),
  export: () => import('../export/export.js'),
  watch: () => import('../watch/watch.js'),
  report: () => import('../report/report.js'),
  merge: () => import('../merge/merge.js'),
  doctor: () => import('../doctor/doctor.js'),
  fixture: () => import('../fixture/fixture.js'),
  completion: () => import('../completion/completion.js'),
};

const GLOBAL_GROUP = 'Global options:';

/** The version in tokcap's package.json. */
export function packageVersion(): string {
  return tokcapVersion();
}

/** `code` spans lose their backticks in terminal help. */
function plain(text: string): string {
  return text.replace(/`([^`]+)`/g, '$1');
}

export function formatExamples(examples: readonly Example[]): string {
  const lines = ['Examples:'];
  for (const ex of examples) lines.push(`  # ${ex.description}`, `  $ ${ex.command}`, '');
  return lines.join('\n').trimEnd();
}

function argTerm(a: Argument): string {
  const inner = `${a.name()}${a.variadic ? '...' : ''}`;
  return a.required ? `<${inner}>` : `[${inner}]`;
}

function isBooleanFlag(flags: string): boolean {
  return !/[<[]/.test(flags);
}

function toCommanderOption(spec: OptionSpec<unknown>, group?: string): Option {
  const opt = new Option(spec.flags, plain(spec.description));
  if (spec.choices) opt.choices(spec.choices);
  if (spec.parse) {
    const parse = spec.parse;
    opt.argParser((raw: string) => {
      try {
        return parse(raw);
      } catch (e) {
        if (e instanceof TokcapError && e.kind === 'usage') throw new InvalidArgumentError(e.message);
        throw e;
      }
    });
  }
  // Boolean flags get no commander default (help would print "default: false"); normalised later.
  if (spec.default !== undefined && !isBooleanFlag(spec.flags)) opt.default(spec.default, spec.defaultLabel);
  if (spec.required) opt.makeOptionMandatory();
  if (group) opt.helpGroup(group);
  return opt;
}

function addGlobalOptions(cmd: Command): void {
  for (const spec of Object.values(GLOBAL_OPTIONS) as OptionSpec<unknown>[])
    cmd.addOption(toCommanderOption(spec, GLOBAL_GROUP));
  const help = BUILTIN_OPTIONS[0];
  cmd.addHelpOption(new Option(help.flags, help.description).helpGroup(GLOBAL_GROUP));
}

/** Options as typed: commander values with table defaults applied (booleans default to false). */
function readOptions<O>(cmd: Command, table: { [K in keyof O]: OptionSpec<O[K]> }): O {
  const values = cmd.opts();
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(table) as [string, OptionSpec<unknown>][]) {
    let v = values[key];
    if (v === undefined) v = spec.default ?? (isBooleanFlag(spec.flags) ? false : undefined);
    out[key] = v;
  }
  return out as O;
}

/** Global options: the value given after the command wins over one given before it. */
function readGlobalOptions(program: Command, sub: Command): GlobalOptions {
  const fromSub = readOptions<GlobalOptions>(sub, GLOBAL_OPTIONS);
  const fromProgram = readOptions<GlobalOptions>(program, GLOBAL_OPTIONS);
  const out = { ...fromSub } as Record<keyof GlobalOptions, unknown>;
  for (const key of Object.keys(GLOBAL_OPTIONS) as (keyof GlobalOptions)[]) {
    const subSource = sub.getOptionValueSource(key);
    const programSource = program.getOptionValueSource(key);
    const subGiven = subSource !== undefined && subSource !== 'default';
    const programGiven = programSource !== undefined && programSource !== 'default';
    if (!subGiven && programGiven) out[key] = fromProgram[key];
  }
  return out as unknown as GlobalOptions;
}

/** Reformats a commander error ("error: ...\n(Did you mean ...?)\n") as one line. */
export function formatCommanderError(raw: string, commandPath: string, takesIds: boolean): string {
  let msg = raw
    .trim()
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\s*/g, ' ');
  const invalid = /^option '([^']+)' argument '(.*)' is invalid\. (.*)$/s.exec(msg);
  if (invalid) {
    const [, flags, value, reason] = invalid;
    const flag = /--[a-z][a-z0-9-]*/.exec(flags)?.[0] ?? flags;
    msg = reason.includes(`'${value}'`) ? `${flag}: ${reason}` : `${flag}: invalid value '${value}': ${reason}`;
  }
  const badArg = /^command-argument value '(.*)' is invalid for argument '([^']+)'\. (.*)$/s.exec(msg);
  if (badArg) msg = `${badArg[2]}: invalid value '${badArg[1]}': ${badArg[3]}`;
  const unknown = /^unknown option '(-[^']*)'/.exec(msg);
  if (unknown && takesIds && isValidRolloutId(unknown[1]) && !unknown[1].startsWith('--')) {
    msg += ' (rollout ids that start with - go after --)';
  }
  // Commander suggests by edit distance only: `verify` is too far from `verify-digests`.
  const unknownCommand = /^unknown command '([^']*)'$/.exec(msg);
  if (unknownCommand) {
    const word = unknownCommand[1];
    const near = COMMAND_NAMES.filter((n) => word.length > 1 && (n.startsWith(word) || n.split('-').includes(word)));
    if (near.length > 0) msg += ` (Did you mean ${near.join(' or ')}?)`;
  }
  msg = msg.replace(/\.$/, '').replace(/: Allowed choices are /, ': allowed choices are ');
  return `tokcap: ${msg}; see '${commandPath} --help'`;
}

function configureCommand(cmd: Command, io: CliIo, commandPath: string, takesIds: boolean): void {
  cmd.exitOverride();
  cmd.showSuggestionAfterError(true);
  cmd.configureOutput({
    writeOut: (s) => void io.stdout.write(s),
    writeErr: (s) => void io.stderr.write(s),
    outputError: (s, write) => write(`${formatCommanderError(s, commandPath, takesIds)}\n`),
    getOutHelpWidth: () => io.stdout.columns ?? 80,
    getErrHelpWidth: () => io.stderr.columns ?? 80,
    getOutHasColors: () => false,
    getErrHasColors: () => false,
  });
}

function programHelpFooter(): string {
  const exit = EXIT_CODES.map((e) => `  ${e.code}  ${e.short}`).join('\n');
  const width = Math.max(...ENVIRONMENT.map((e) => e.name.length)) + 2;
  const env = ENVIRONMENT.map((e) => `  ${e.name.padEnd(width)}${e.description}`).join('\n');
  return [
    '',
    formatExamples(PROGRAM.examples),
    '',
    'Exit status:',
    exit,
    '',
    'Environment:',
    env,
    '',
    "Run 'tokcap <command> --help' for a command's options and examples, 'man tokcap-<command>' for more.",
  ].join('\n');
}

export interface BuildProgramOptions {
  io: CliIo;
  /** Accumulates the exit code of the command that runs. */
  exitCode?: ExitCodeAccumulator;
  loaders?: CommandLoaders;
}

export function buildProgram({
  io,
  exitCode = new ExitCodeAccumulator(),
  loaders = COMMAND_LOADERS,
}: BuildProgramOptions): Command {
  const program = new Command('tokcap');
  program
    .description(plain(PROGRAM.description))
    .usage('<command> [DIR] [ID...] [options]')
    .enablePositionalOptions()
    .version(packageVersion(), BUILTIN_OPTIONS[1].flags, 'print the tokcap version');
  addGlobalOptions(program);
  configureCommand(program, io, 'tokcap', false);
  // `help NAME` of no command is an unknown command (exit 2), never the general help.
  program.helpCommand(false);
  program
    .command('help [command]')
    .description('show help for a command')
    .action((name?: string) => {
      const sub = name === undefined ? undefined : program.commands.find((c) => c.name() === name && name !== 'help');
      if (name !== undefined && sub === undefined)
        program.error(`unknown command '${name}'`, { code: 'commander.unknownCommand', exitCode: 2 });
      (sub ?? program).help();
    });
  // Command list: `inspect [DIR] [ID...]` (every command has options; saying so costs width).
  program.configureHelp({ subcommandTerm: (cmd) => [cmd.name(), ...cmd.registeredArguments.map(argTerm)].join(' ') });
  program.addHelpText('after', programHelpFooter());

  for (const name of COMMAND_NAMES) {
    const spec = COMMANDS[name] as CommandSpec<CommandName>;
    const takesIds = spec.args.some((a) => a.name === 'ID');
    const sub = new Command(name);
    sub.summary(spec.summary).description(plain(spec.description));
    for (const a of spec.args) {
      const inner = `${a.name}${a.variadic ? '...' : ''}`;
      const arg = new Argument(a.required ? `<${inner}>` : `[${inner}]`, plain(a.description));
      if (a.choices) arg.choices(a.choices);
      sub.addArgument(arg);
    }
    for (const optSpec of Object.values(spec.options) as OptionSpec<unknown>[])
      sub.addOption(toCommanderOption(optSpec));
    addGlobalOptions(sub);
    // docs/cli.md#common-options: every command accepts -V/--version; retire owns --version <n>, so there only -V.
    sub.version(packageVersion(), name === 'retire' ? '-V' : BUILTIN_OPTIONS[1].flags, 'print the tokcap version');
    configureCommand(sub, io, `tokcap ${name}`, takesIds);
    sub.addHelpText('after', `\n${formatExamples(spec.examples)}`);
    sub.action(async (...actionArgs: unknown[]) => {
      const cmd = actionArgs[actionArgs.length - 1] as Command;
      await invoke(name, program, cmd, io, exitCode, loaders);
    });
    program.addCommand(sub);
  }
  return program;
}

async function invoke<N extends CommandName>(
  name: N,
  program: Command,
  cmd: Command,
  io: CliIo,
  exitCode: ExitCodeAccumulator,
  loaders: CommandLoaders,
): Promise<void> {
  const spec = COMMANDS[name] as unknown as CommandSpec<N>;
  const own = readOptions<CommandOptionsMap[N]>(cmd, spec.options);
  const options = { ...readGlobalOptions(program, cmd), ...own } as GlobalOptions & CommandOptionsMap[N];
  const positionals = [...cmd.args];
  const takesIds = spec.args.some((a) => a.name === 'ID');
  const mutates = spec.mutates(own);
  const hint = `see 'tokcap ${name} --help'`;

  const settings = readSettings(io.env);
  const { dir, ids: positionalIds } = resolveDirAndIds(name, positionals, settings.dir, mutates);
  const idsFrom = (own as { idsFrom?: string }).idsFrom;
  const idsGiven = positionalIds.length > 0 || idsFrom !== undefined;

  // The usage checks come before --ids-from is read (those on the filesystem too: `checkFiles`):
  // a usage error never waits for standard input.
  if (takesIds && mutates && !idsGiven && !(own as { all?: boolean }).all) {
    const ways = 'all' in spec.options ? 'rollout ids, --ids-from or --all' : 'rollout ids or --ids-from';
    const what = name === 'build' || name === 'export' ? `${name} --freeze` : name;
    throw new TokcapError('usage', `${what} needs ${ways}: it never acts on every rollout implicitly; ${hint}`);
  }
  const problem = spec.check?.({ options, idsGiven, stdoutIsTTY: io.stdout.isTTY === true });
  if (problem !== undefined) throw new TokcapError('usage', `${problem}; ${hint}`);

  const validateNow = spec.idValidation === 'batch' || (spec.idValidation === 'batch-unless-json' && !options.json);
  if (validateNow) validateRolloutIdBatch(positionalIds);
  // --shard auto is settled here, from the scheduler's environment, before anything is read.
  const shard = resolveShard((own as { shard?: ShardOption }).shard, io.env);
  await spec.checkFiles?.({ dir, options, shard });

  const ids = takesIds ? await collectIds(positionalIds, idsFrom, io.stdin) : [];
  let finalIds = validateNow ? validateRolloutIdBatch(ids) : ids;
  // Given ids are narrowed to the shard (every task of a job array may share one --ids-from list).
  if (shard !== undefined) finalIds = (await import('../../src/layout/shard.js')).filterShard(finalIds, shard);

  // Every command but completion reads or writes capture files under flock(2): where it cannot
  // work, one line before any rollout is touched.
  if (name !== 'completion') {
    try {
      (await import('../../src/lock/flock.js')).assertLocking();
    } catch (e) {
      // watch's read worker, started before the command line was parsed, would keep the process.
      if (name === 'watch') (await import('../watch/early.js')).takeEarlyWorkers('');
      throw e;
    }
  }
  await preloadChalk({ color: options.color, env: io.env, stdoutIsTTY: io.stdout.isTTY === true });
  const ctx = createContext<N>({
    command: name,
    dir,
    ids: finalIds,
    idsGiven,
    shard,
    positionals,
    options,
    io,
    exitCode,
    settings,
  });
  const mod = await loaders[name]();
  await mod.run(ctx);
}
