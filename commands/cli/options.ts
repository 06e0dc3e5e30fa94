/**
 * THE option table. Everything user-facing about the command line is declared once in it and
 * consumed by: the plan that decides what starts before commander (commands/cli/plan.ts), the
 * commander program (commands/cli/program.ts), `--help`, the man pages, the README's tables and
 * docs/cli.md (scripts/gen-man.ts via commands/cli/docs.ts) and shell completion
 * (`tokcap __complete`, commands/completion/complete.ts). Change an option and all of them follow.
 *
 * Its parts: each command's own, in the command's folder (commands/inspect/options.ts, ...: its
 * help, arguments, options, examples and usage checks); the global options and the options and
 * arguments several commands share in ./common-options.ts; the types in ./option-types.ts; the
 * program-level part (the program's help, exit codes, environment) in ./program-docs.ts. This
 * module puts them together and exports them all.
 *
 * Types: each command has an options interface (`InspectCommandOptions`, ...). Its table is an
 * `OptionTable<InspectCommandOptions>`: one `OptionSpec` per key, keyed by commander's attribute name
 * (`--ids-from` -> `idsFrom`, `--no-color` -> `color`), so the compiler checks that every typed
 * option is declared and that each value parser returns the declared type; a test checks that
 * each key is the attribute name commander derives from the flags.
 *
 * The table must stay cheap to load: no library code beyond errors, the duration parser and
 * constants (the lock wait, the statuses, the thread limit).
 */
import { GLOBAL_OPTIONS } from './common-options.js';
import type { CommandName, CommandSpec, OptionSpec } from './option-types.js';
import { INSPECT_COMMAND } from '../inspect/options.js';
import { FREEZE_COMMAND } from '../freeze/options.js';
import { BUILD_COMMAND } from '../build/options.js';
import { VERIFY_DIGESTS_COMMAND } from '../verify-digests/options.js';
import { SWEEP_COMMAND } from '../sweep/options.js';
import { RETIRE_COMMAND } from '../retire/options.js';
import { DELETE_COMMAND } from '../delete/options.js';
import { EXPORT_COMMAND } from '../export/options.js';
import { WATCH_COMMAND } from '../watch/options.js';
import { REPORT_COMMAND } from '../report/options.js';
import { MERGE_COMMAND } from '../merge/options.js';
import { DOCTOR_COMMAND } from '../doctor/options.js';
import { FIXTURE_COMMAND } from '../fixture/options.js';
import { COMPLETION_COMMAND } from '../completion/options.js';
export {
  COMMAND_NAMES,
  STATUS_FILTERS,
  SORT_KEYS,
  SHELLS,
  parsePositiveInt,
  parseNonNegativeInt,
  parseNonEmpty,
  parseFieldList,
  COLOR_WHEN,
  optionValueName,
  optionLongFlag,
  optionShortFlag,
  type CommandName,
  type CompletionHint,
  type OptionSpec,
  type OptionTable,
  type ArgSpec,
  type Example,
  type CheckInput,
  type IdValidation,
  type CommandSpec,
  type StatusFilter,
  type SortKey,
  type Shell,
  type ColorWhen,
  type GlobalOptions,
  type InspectCommandOptions,
  type FreezeCommandOptions,
  type BuildCommandOptions,
  type VerifyDigestsCommandOptions,
  type SweepCommandOptions,
  type RetireCommandOptions,
  type DeleteCommandOptions,
  type ExportCommandOptions,
  type WatchCommandOptions,
  type ReportCommandOptions,
  type FixtureCommandOptions,
  type MergeCommandOptions,
  type DoctorCommandOptions,
  type CompletionCommandOptions,
  type CommandOptionsMap,
} from './option-types.js';
export { PROGRAM, EXIT_CODES, EXIT_CODES_NOTE, ENVIRONMENT } from './program-docs.js';
export { GLOBAL_OPTIONS, BUILTIN_OPTIONS } from './common-options.js';

export const COMMANDS: { readonly [N in CommandName]: CommandSpec<N> } = {
  inspect: INSPECT_COMMAND,
  freeze: FREEZE_COMMAND,
  build: BUILD_COMMAND,
  'verify-digests': VERIFY_DIGESTS_COMMAND,
  sweep: SWEEP_COMMAND,
  retire: RETIRE_COMMAND,
  delete: DELETE_COMMAND,
  export: EXPORT_COMMAND,
  watch: WATCH_COMMAND,
  report: REPORT_COMMAND,
  merge: MERGE_COMMAND,
  doctor: DOCTOR_COMMAND,
  fixture: FIXTURE_COMMAND,
  completion: COMPLETION_COMMAND,
};

/** All specs of a command: its own options, then the global ones. */
export function commandOptionEntries(name: CommandName): [string, OptionSpec<unknown>][] {
  return [
    ...(Object.entries(COMMANDS[name].options) as [string, OptionSpec<unknown>][]),
    ...(Object.entries(GLOBAL_OPTIONS) as [string, OptionSpec<unknown>][]),
  ];
}
