/**
 * Markdown documentation generated from the option table: one page for tokcap(1) and one per
 * command (tokcap-inspect(1), ...). scripts/gen-man.ts turns these into roff with marked-man;
 * the same markdown can feed a README section. The markdown uses the ronn header convention
 * (`# name(1) -- summary`).
 */
import { faultAnswersMarkdown } from './fault-answers.js';
import {
  BUILTIN_OPTIONS,
  COMMAND_NAMES,
  COMMANDS,
  ENVIRONMENT,
  EXIT_CODES,
  EXIT_CODES_NOTE,
  GLOBAL_OPTIONS,
  PROGRAM,
  optionValueName,
  type ArgSpec,
  type CommandName,
  type CommandSpec,
  type Example,
  type OptionSpec,
} from './options.js';
import { formatDuration } from './duration.js';

export const MAN_SECTIONS = [
  'SYNOPSIS',
  'DESCRIPTION',
  'OPTIONS',
  'EXIT STATUS',
  'EXAMPLES',
  'ENVIRONMENT',
  'SEE ALSO',
] as const;

export function manPageName(name: CommandName | 'tokcap'): string {
  return name === 'tokcap' ? 'tokcap' : `tokcap-${name}`;
}

/** `--status <state>` -> "`--status` *state*"; `-q, --quiet` -> "`-q`, `--quiet`". */
function flagsMarkdown(flags: string): string {
  return flags
    .split(/,\s*/)
    .map((part) =>
      part.replace(
        /^(-[-\w]*)(?:\s+<([^>]+)>)?$/,
        (_m, flag: string, value?: string) => `\`${flag}\`${value ? ` *${value}*` : ''}`,
      ),
    )
    .join(', ');
}

function defaultText(spec: OptionSpec<unknown>): string | undefined {
  if (spec.default === undefined || !/[<[]/.test(spec.flags)) return undefined;
  if (spec.defaultLabel !== undefined) return spec.defaultLabel;
  if (typeof spec.default === 'string') return spec.default === '' ? '""' : spec.default;
  if (typeof spec.default === 'number' && /duration/.test(spec.flags)) return formatDuration(spec.default);
  return String(spec.default);
}

function sentence(text: string): string {
  const t = text.trim();
  return /[.!?)]$/.test(t) ? t : `${t}.`;
}

function optionItem(spec: OptionSpec<unknown>): string {
  const extra: string[] = [];
  if (spec.required) extra.push('Required.');
  if (spec.choices) extra.push(`One of ${spec.choices.map((c) => `\`${c}\``).join(', ')}.`);
  const def = defaultText(spec);
  if (def !== undefined) extra.push(`Default: \`${def}\`.`);
  return `* ${flagsMarkdown(spec.flags)}:\n  ${[sentence(spec.description), ...extra].join(' ')}`;
}

function argItem(a: ArgSpec): string {
  const name = `*${a.name}*${a.variadic ? '...' : ''}`;
  const choices = a.choices ? ` One of ${a.choices.map((c) => `\`${c}\``).join(', ')}.` : '';
  return `* ${name}:\n  ${sentence(a.description)}${choices}`;
}

function optionSynopsis(spec: OptionSpec<unknown>): string {
  const long = /--[a-z][a-z0-9-]*/.exec(spec.flags)?.[0] ?? spec.flags;
  const value = optionValueName(spec.flags);
  const inner = `\`${long}\`${value ? ` *${value}*` : ''}`;
  return spec.required ? inner : `[${inner}]`;
}

function argsSynopsisMarkdown(args: readonly ArgSpec[]): string {
  return args
    .map((a) => {
      const inner = `*${a.name}*${a.variadic ? '...' : ''}`;
      return a.required ? inner : `[${inner}]`;
    })
    .join(' ');
}

function examplesMarkdown(examples: readonly Example[]): string {
  return examples.map((ex) => `${sentence(ex.description)}\n\n    ${ex.command}`).join('\n\n');
}

function globalOptionsMarkdown(includeVersion: boolean): string {
  const items = (Object.values(GLOBAL_OPTIONS) as OptionSpec<unknown>[]).map(optionItem);
  const builtins = includeVersion ? BUILTIN_OPTIONS : BUILTIN_OPTIONS.slice(0, 1);
  for (const b of builtins) items.push(`* ${flagsMarkdown(b.flags)}:\n  ${sentence(b.description)}`);
  return items.join('\n\n');
}

function exitStatusMarkdown(): string {
  const rows = EXIT_CODES.map((e) => `| ${e.code} | ${e.meaning.replace(/\|/g, '\\|')} |`);
  return ['| code | meaning |', '| --- | --- |', ...rows, '', EXIT_CODES_NOTE].join('\n');
}

function environmentMarkdown(): string {
  return ENVIRONMENT.map((e) => `* \`${e.name}\`:\n  ${sentence(e.description)}`).join('\n\n');
}

function seeAlso(self: CommandName | 'tokcap'): string {
  const pages = ['tokcap', ...COMMAND_NAMES].filter((n) => n !== self) as (CommandName | 'tokcap')[];
  return pages.map((p) => `**${manPageName(p)}**(1)`).join(', ');
}

export function commandMarkdown<N extends CommandName>(name: N): string {
  const spec = COMMANDS[name] as CommandSpec<CommandName>;
  const own = Object.values(spec.options) as OptionSpec<unknown>[];
  const synopsis = [
    `\`tokcap ${name}\``,
    argsSynopsisMarkdown(spec.args),
    ...own.map(optionSynopsis),
    '[*global options*]',
  ]
    .filter((s) => s !== '')
    .join(' ');
  const optionSection = [...spec.args.map(argItem), ...own.map(optionItem)].join('\n\n');
  return [
    `# ${manPageName(name)}(1) -- ${spec.summary.replace(/^./, (c) => c.toLowerCase())}`,
    '',
    '## SYNOPSIS',
    '',
    synopsis,
    '',
    '## DESCRIPTION',
    '',
    spec.description,
    '',
    '## OPTIONS',
    '',
    optionSection,
    '',
    '### Global options',
    '',
    globalOptionsMarkdown(false),
    '',
    '## EXIT STATUS',
    '',
    exitStatusMarkdown(),
    '',
    '## EXAMPLES',
    '',
    examplesMarkdown(spec.examples),
    '',
    '## ENVIRONMENT',
    '',
    environmentMarkdown(),
    '',
    '## SEE ALSO',
    '',
    seeAlso(name),
    '',
  ].join('\n');
}

export function programMarkdown(): string {
  const commands = COMMAND_NAMES.map((n) => {
    const spec = COMMANDS[n] as CommandSpec<CommandName>;
    return `* \`${n}\` ${argsSynopsisMarkdown(spec.args)}:\n  ${sentence(spec.summary)} See ${manPageName(n)}(1).`;
  }).join('\n\n');
  return [
    `# tokcap(1) -- ${PROGRAM.summary}`,
    '',
    '## SYNOPSIS',
    '',
    '`tokcap` *command* [*DIR*] [*ID*...] [*options*]',
    '',
    '`tokcap` `-V` | `--version`',
    '',
    '`tokcap` [*command*] `--help`',
    '',
    '## DESCRIPTION',
    '',
    PROGRAM.description,
    '',
    'Rollout ids that start with `-` go after `--`. `--ids-from` *file* reads more ids, one per line (`-` for standard input); blank lines and lines starting with `#` are ignored. Duplicates are dropped and order is kept.',
    '',
    'Durations are one or more `<number><unit>` parts, units `s`, `m`, `h`, `d`, `w` in lowercase: `90s`, `15m`, `36h`, `7d`, `1d12h`. The unit is required: a bare `7` is a usage error. Negative durations are usage errors; `0s` is allowed.',
    '',
    'With `--json` each command prints one JSON document on stdout and nothing else there; per-rollout failures appear inline as `{"rollout_id", "error": {"kind", "message"}}`. Errors go to stderr as one line each: `tokcap: ROLLOUT-OR-FILE: REASON`.',
    '',
    '## COMMANDS',
    '',
    commands,
    '',
    '## OPTIONS',
    '',
    'Every command accepts these options, after the command (as shown) or before it.',
    '',
    globalOptionsMarkdown(true),
    '',
    '## EXIT STATUS',
    '',
    exitStatusMarkdown(),
    '',
    '## FAULTS',
    '',
    'What every command answers for a rollout with one fault (J the records, S the state, I the intents, M the markers).',
    '',
    faultAnswersMarkdown(),
    '',
    '## EXAMPLES',
    '',
    examplesMarkdown(PROGRAM.examples),
    '',
    '## ENVIRONMENT',
    '',
    environmentMarkdown(),
    '',
    '## SEE ALSO',
    '',
    seeAlso('tokcap'),
    '',
  ].join('\n');
}

/** Every page: [page name, markdown]. */
export function allManPages(): [string, string][] {
  return [
    ['tokcap', programMarkdown()],
    ...COMMAND_NAMES.map((n): [string, string] => [manPageName(n), commandMarkdown(n)]),
  ];
}

// ------------------------------------------------------------------------------ README tables

/** The options a command is run with when none is given (booleans false, the rest their default). */
function defaultOptions(spec: CommandSpec<CommandName>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, o] of Object.entries(spec.options) as [string, OptionSpec<unknown>][]) {
    out[key] = o.default ?? (optionValueName(o.flags) === undefined ? false : undefined);
  }
  return out;
}

/** "yes", "no", or "no (`--freeze`: yes)": from the command's own `mutates`, not a copy of it. */
function changesTheStore(spec: CommandSpec<CommandName>): string {
  const mutates = spec.mutates as (o: Record<string, unknown>) => boolean;
  const defaults = defaultOptions(spec);
  if (mutates(defaults)) return 'yes';
  const flags = (Object.entries(spec.options) as [string, OptionSpec<unknown>][])
    .filter(
      ([key, o]) =>
        optionValueName(o.flags) === undefined && defaults[key] === false && mutates({ ...defaults, [key]: true }),
    )
    .map(([, o]) => `\`${/--[a-z][a-z0-9-]*/.exec(o.flags)?.[0]}\``);
  return flags.length === 0 ? 'no' : `no (${flags.join(', ')}: yes)`;
}

/** `tokcap export [DIR] [ID...] --out <path>`: arguments and required options. */
function usageLine(name: CommandName): string {
  const spec = COMMANDS[name] as CommandSpec<CommandName>;
  const args = spec.args
    .map((a) => (a.choices ? a.choices.join('|') : `${a.name}${a.variadic ? '...' : ''}`))
    .map((inner, i) => (spec.args[i].required ? inner : `[${inner}]`));
  const required = (Object.values(spec.options) as OptionSpec<unknown>[])
    .filter((o) => o.required)
    .map((o) => o.flags.replace(/^-\w, /, ''));
  return ['tokcap', name, ...args, ...required].join(' ');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** README's command table. */
export function readmeCommandsTable(): string {
  const rows = COMMAND_NAMES.map((n) => {
    const spec = COMMANDS[n] as CommandSpec<CommandName>;
    return `| \`${cell(usageLine(n))}\` | ${cell(spec.summary)} | ${changesTheStore(spec)} |`;
  });
  return ['| command | what it does | changes the store? |', '| --- | --- | --- |', ...rows].join('\n');
}

/** README's exit-code table. */
export function readmeExitCodesTable(): string {
  return exitStatusMarkdown();
}

/** What scripts/gen-man.ts writes between `<!-- NAME:start -->` and `<!-- NAME:end -->` in README.md. */
export function readmeBlocks(): [string, string][] {
  return [
    ['commands', readmeCommandsTable()],
    ['exit-codes', readmeExitCodesTable()],
    ['faults', faultAnswersMarkdown()],
  ];
}

/** What scripts/gen-man.ts writes between the markers in docs/cli.md. */
export function cliDocBlocks(): [string, string][] {
  return [['faults', faultAnswersMarkdown()]];
}
