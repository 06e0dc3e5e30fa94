/**
 * The types of the option table (./options.ts): what an option, an argument and a command are,
 * each command's options as typed values, the value lists and parsers the table uses, and the
 * flags' spellings. Cheap to load, as the table is.
 */
import { TokcapError } from '../../src/errors.js';
import type { ExportFormatName } from '../../src/export/formats.js';
import { CONDITIONS, ROLLOUT_STATUSES } from '../../src/status/rollout-status.js';
import type { Shard } from '../../src/layout/shard.js';
import type { ShardOption } from './shard.js';

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

export const COMMAND_NAMES = [
  'inspect',
  'freeze',
  'build',
  'verify-digests',
  'sweep',
  'retire',
  'delete',
  'export',
  'watch',
  'report',
  'merge',
  'doctor',
  'fixture',
  'completion',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** How the value of an option (or an argument) completes in a shell. */
export type CompletionHint = 'file' | 'dir' | 'rollout-id' | 'none';

export interface OptionSpec<T> {
  /** Commander flag syntax: `--deep`, `-q, --quiet`, `--status <state>`, `--no-color`. */
  flags: string;
  /** One sentence or two; shown in --help, man pages and zsh/fish completion. */
  description: string;
  /** Default value (after parsing). Boolean flags default to false without saying so. */
  default?: T;
  /** How the default is shown in help when the raw value differs (e.g. `10s` for 10 seconds). */
  defaultLabel?: string;
  /** Allowed values (checked by commander; listed in help and completion). */
  choices?: readonly string[];
  /** Value parser: raw string -> value; throws TokcapError('usage') with a helpful message. */
  parse?: (raw: string) => T;
  /** Must be given (commander "mandatory option"). */
  required?: boolean;
  /** Completion of the option's value (options with `<value>` only). Default 'none'. */
  complete?: CompletionHint;
}

/** One spec per key of `O`, keyed by commander attribute name. */
export type OptionTable<O> = { [K in keyof O]-?: OptionSpec<O[K]> };

export interface ArgSpec {
  /** Shown in synopsis and help: DIR, ID, SHELL. */
  name: string;
  description: string;
  required: boolean;
  variadic: boolean;
  choices?: readonly string[];
  complete: CompletionHint;
}

export interface Example {
  command: string;
  description: string;
}

/**
 * What a command's `check` sees: everything the user gave, before the module is loaded and
 * before --ids-from is read (a usage error never waits for standard input).
 */
export interface CheckInput<O> {
  options: GlobalOptions & O;
  /** Rollout ids given positionally or through --ids-from (even if the file holds none). */
  idsGiven: boolean;
  stdoutIsTTY: boolean;
}

/**
 * What a command's usage checks on the filesystem (`CommandSpec.checkFiles`) see: DIR, the
 * options and the shard, before --ids-from is read.
 */
export interface FilesCheckInput<O> {
  dir: string;
  options: GlobalOptions & O;
  shard: Shard | undefined;
}

/**
 * How rollout ids are validated before the command module runs (docs/cli.md#invocation):
 * - 'batch': the whole batch is validated first; one invalid id -> exit 2, nothing read.
 * - 'batch-unless-json': as 'batch', except with --json, where the command itself reports an
 *   inline invalid_rollout_id error per invalid id (freeze).
 * - 'command': the command handles invalid ids itself (build: a failed build per bad id).
 * - 'none': the command takes no ids.
 */
export type IdValidation = 'batch' | 'batch-unless-json' | 'command' | 'none';

export interface CommandSpec<N extends CommandName> {
  name: N;
  /** One line, no final period: command list, man NAME line, completion descriptions. */
  summary: string;
  /** Paragraphs separated by blank lines (plain text; `code` spans allowed). */
  description: string;
  args: readonly ArgSpec[];
  options: OptionTable<CommandOptionsMap[N]>;
  examples: readonly Example[];
  idValidation: IdValidation;
  /**
   * True when this invocation changes a store. Such invocations never act on every rollout
   * implicitly: they need ids, --ids-from or --all (docs/cli.md#invocation).
   */
  mutates: (options: CommandOptionsMap[N]) => boolean;
  /** Extra usage checks; return a message to fail with exit 2. */
  check?: (input: CheckInput<CommandOptionsMap[N]>) => string | undefined;
  /**
   * Usage checks on the filesystem (export's `--out`), after `check` and before --ids-from is
   * read: they throw usage errors. They load what they need themselves, so the table stays
   * cheap to load.
   */
  checkFiles?: (input: FilesCheckInput<CommandOptionsMap[N]>) => Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Value lists and parsers
// ---------------------------------------------------------------------------------------------

export const STATUS_FILTERS = ['all', ...ROLLOUT_STATUSES, ...CONDITIONS] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export const SORT_KEYS = ['id', 'state', 'calls', 'version', 'size', 'age'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

function usage(message: string): never {
  throw new TokcapError('usage', message);
}

export function parsePositiveInt(raw: string): number {
  if (!/^[1-9][0-9]*$/.test(raw)) usage(`expected a positive integer, got '${raw}'`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) usage(`'${raw}' is too large`);
  return n;
}

export function parseNonNegativeInt(raw: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(raw)) usage(`expected a non-negative integer, got '${raw}'`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) usage(`'${raw}' is too large`);
  return n;
}

export function parseNonEmpty(raw: string): string {
  if (raw.length === 0) usage('expected a non-empty value');
  return raw;
}

/** `a,b, c` -> ['a', 'b', 'c']; empty items are an error; duplicates dropped, order kept. */
export function parseFieldList(raw: string): string[] {
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s.length === 0)) usage(`expected a comma-separated list of field names, got '${raw}'`);
  return [...new Set(items)];
}

// ---------------------------------------------------------------------------------------------
// Typed options
// ---------------------------------------------------------------------------------------------

/** --color: when output is coloured (commands/render/styles.ts colorLevel). */
export const COLOR_WHEN = ['auto', 'always', 'never'] as const;
export type ColorWhen = (typeof COLOR_WHEN)[number];

export interface GlobalOptions {
  /** --json: one JSON document on stdout, nothing else on stdout. */
  json: boolean;
  /** --color auto|always|never (--no-color is --color=never; see commands/render/styles.ts colorLevel). */
  color: ColorWhen;
  /** -q/--quiet: only errors on stderr. */
  quiet: boolean;
  /** --lock-wait, in seconds. */
  lockWait: number;
}

export interface InspectCommandOptions {
  shard: ShardOption | undefined;
  allowEmpty: boolean;
  deep: boolean;
  status: StatusFilter;
  sort: SortKey;
  limit: number | undefined;
  call: string | undefined;
  tokenizer: string | undefined;
  idsFrom: string | undefined;
}
export interface FreezeCommandOptions {
  shard: ShardOption | undefined;
  all: boolean;
  idsFrom: string | undefined;
}
export interface BuildCommandOptions {
  shard: ShardOption | undefined;
  allowEmpty: boolean;
  freeze: boolean;
  all: boolean;
  model: string;
  tokenizer: string | undefined;
  failOnMask: boolean;
  idsFrom: string | undefined;
}
export interface VerifyDigestsCommandOptions {
  shard: ShardOption | undefined;
  allowEmpty: boolean;
  strict: boolean;
  idsFrom: string | undefined;
}
export interface SweepCommandOptions {
  /** Seconds. */
  olderThan: number;
  dryRun: boolean;
}
export interface RetireCommandOptions {
  snapshotId: string | undefined;
  version: number | undefined;
  idsFrom: string | undefined;
}
export interface DeleteCommandOptions {
  idsFrom: string | undefined;
}
export interface ExportCommandOptions {
  shard: ShardOption | undefined;
  allowEmpty: boolean;
  out: string;
  format: ExportFormatName;
  freeze: boolean;
  all: boolean;
  model: string;
  trainableOnly: boolean;
  fields: string[] | undefined;
  force: boolean;
  idsFrom: string | undefined;
}
export interface WatchCommandOptions {
  once: boolean;
  allowEmpty: boolean;
  tokenizer: string | undefined;
}
export interface ReportCommandOptions {
  out: string;
  tokenizer: string | undefined;
}
export interface FixtureCommandOptions {
  rollouts: number;
  calls: number;
  prompt: number;
  gen: number;
  turn: number;
  delta: boolean;
  seed: number;
  mix: boolean;
  prefix: string;
  fast: boolean;
}
export interface MergeCommandOptions {
  strict: boolean;
  failOnMask: boolean;
  allowEmpty: boolean;
}
export interface DoctorCommandOptions {
  /** Seconds. */
  hold: number | undefined;
  probe: boolean;
  /** Seconds. */
  wait: number;
}
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CompletionCommandOptions {}

export interface CommandOptionsMap {
  inspect: InspectCommandOptions;
  freeze: FreezeCommandOptions;
  build: BuildCommandOptions;
  'verify-digests': VerifyDigestsCommandOptions;
  sweep: SweepCommandOptions;
  retire: RetireCommandOptions;
  delete: DeleteCommandOptions;
  export: ExportCommandOptions;
  watch: WatchCommandOptions;
  report: ReportCommandOptions;
  merge: MergeCommandOptions;
  doctor: DoctorCommandOptions;
  fixture: FixtureCommandOptions;
  completion: CompletionCommandOptions;
}

/** The value placeholder of an option (`<state>`), or undefined for boolean flags. */
export function optionValueName(flags: string): string | undefined {
  return /<([^>]+)>/.exec(flags)?.[1];
}

/** Long flag (`--status`) of an option spec. */
export function optionLongFlag(flags: string): string {
  const m = /--[a-z][a-z0-9-]*/.exec(flags);
  if (!m) throw new Error(`option table: no long flag in '${flags}'`);
  return m[0];
}

/** Short flag (`-q`) of an option spec, if any. */
export function optionShortFlag(flags: string): string | undefined {
  return /(^|[ ,])(-[a-zA-Z])(?=[ ,]|$)/.exec(flags)?.[2];
}
