/**
 * `tokcap __complete WORD... CUR`: the one shell completer. The shell scripts of
 * `tokcap completion bash|zsh|fish` only pass the words typed so far and show the answer; all
 * knowledge (commands, options and which take values, value lists, DIR and rollout ids) comes
 * from the option table and the directory scan, here.
 *
 * Protocol (stdout):
 * - WORDS are the words after the program name; the last one, CUR, is the word being completed
 *   (empty when the cursor follows a space). bash splits `--opt=value` into `--opt`, `=`,
 *   `value`; zsh and fish pass `--opt=value` whole: both are understood.
 * - One candidate a line, already filtered by CUR: `VALUE` or `VALUE<TAB>DESCRIPTION`.
 * - A last line `:files`, `:dirs` or `:none`: whether the shell should also offer file names,
 *   directory names, or nothing more (the shell completes paths better than we could).
 * Nothing on stderr, exit 0, whatever was typed: completion must never disturb the prompt.
 *
 * Loaded without commander, React, Ink or chalk (see commands/cli/run.ts): it runs on every Tab.
 */
import { homedir } from 'node:os';
import { rolloutIdsStartingWith } from '../../src/layout/scan-directory.js';
import { isDirectory, resolveDirAndIds } from '../cli/dir-and-ids.js';
import { readSettings } from '../cli/settings.js';
import {
  BUILTIN_OPTIONS,
  COMMAND_NAMES,
  COMMANDS,
  GLOBAL_OPTIONS,
  optionLongFlag,
  optionShortFlag,
  optionValueName,
  type ArgSpec,
  type CommandName,
  type CommandSpec,
  type CompletionHint,
  type OptionSpec,
} from '../cli/options.js';

export type Directive = 'files' | 'dirs' | 'none';

export interface Candidate {
  value: string;
  description?: string;
}

export interface Completion {
  candidates: Candidate[];
  directive: Directive;
}

interface Flag {
  long: string;
  short?: string;
  takesValue: boolean;
  choices?: readonly string[];
  complete: CompletionHint;
  description: string;
}

/** A menu description: the text up to the first `;` or ` (`, without backticks. */
function short(text: string): string {
  let s = text.replace(/`([^`]+)`/g, '$1');
  const cut = s.search(/; | \(/);
  if (cut > 0) s = s.slice(0, cut);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function flag(spec: {
  flags: string;
  description: string;
  choices?: readonly string[];
  complete?: CompletionHint;
}): Flag {
  return {
    long: optionLongFlag(spec.flags),
    short: optionShortFlag(spec.flags),
    takesValue: optionValueName(spec.flags) !== undefined,
    choices: spec.choices,
    complete: spec.complete ?? 'none',
    description: short(spec.description),
  };
}

const [HELP_SPEC, VERSION_SPEC] = BUILTIN_OPTIONS;

/** The flags accepted before a command: the global ones, -h and -V. */
function programFlags(): Flag[] {
  return [...(Object.values(GLOBAL_OPTIONS) as OptionSpec<unknown>[]).map(flag), flag(HELP_SPEC), flag(VERSION_SPEC)];
}

/** A command's own flags, then the global ones, -h and -V (retire owns --version <n>: only -V). */
function commandFlags(name: CommandName): Flag[] {
  const own = (Object.values(COMMANDS[name].options) as OptionSpec<unknown>[]).map(flag);
  const version = name === 'retire' ? { ...flag(VERSION_SPEC), long: '-V', short: undefined } : flag(VERSION_SPEC);
  return [...own, ...(Object.values(GLOBAL_OPTIONS) as OptionSpec<unknown>[]).map(flag), flag(HELP_SPEC), version];
}

function findFlag(flags: readonly Flag[], word: string): Flag | undefined {
  return flags.find((f) => f.long === word || f.short === word);
}

function matching(values: readonly string[], cur: string, describe?: (v: string) => string | undefined): Candidate[] {
  return values.filter((v) => v.startsWith(cur)).map((value) => ({ value, description: describe?.(value) }));
}

function flagCandidates(flags: readonly Flag[], cur: string): Candidate[] {
  const out: Candidate[] = [];
  for (const f of flags) {
    for (const word of f.short ? [f.short, f.long] : [f.long]) {
      if (word.startsWith(cur)) out.push({ value: word, description: f.description });
    }
  }
  return out;
}

/** The value of an option: its choices, or what the shell should complete. */
function valueCompletion(f: Flag, cur: string, prefix = ''): Completion {
  if (f.choices)
    return { candidates: matching(f.choices, cur).map((c) => ({ value: prefix + c.value })), directive: 'none' };
  if (f.complete === 'file') return { candidates: [], directive: 'files' };
  if (f.complete === 'dir') return { candidates: [], directive: 'dirs' };
  return { candidates: [], directive: 'none' };
}

/** `~/runs` as the shell would expand it (the words arrive as typed). */
function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path;
}

/** Rollout ids of DIR starting with `cur`, not those already given. */
function rolloutIds(dir: string, cur: string, given: readonly string[]): Candidate[] {
  let ids: string[];
  try {
    ids = rolloutIdsStartingWith(expandHome(dir), cur);
  } catch {
    return [];
  }
  const skip = new Set(given);
  return ids.filter((id) => !skip.has(id)).map((value) => ({ value }));
}

/** The ArgSpec for positional number `index` (the last one may be variadic). */
function argAt(args: readonly ArgSpec[], index: number): ArgSpec | undefined {
  if (index < args.length) return args[index];
  const last = args[args.length - 1];
  return last?.variadic ? last : undefined;
}

export interface CompleteEnv {
  env: NodeJS.ProcessEnv;
  isDir?: (path: string) => boolean;
}

/** What to offer for the last of `words` (the words after the program name). */
export function complete(words: readonly string[], { env, isDir = isDirectory }: CompleteEnv): Completion {
  const typed = words.slice(0, -1);
  let cur = words.length > 0 ? words[words.length - 1] : '';

  // Before the command: program flags (and their values), then the command name.
  let i = 0;
  const before = programFlags();
  for (; i < typed.length; i++) {
    const w = typed[i];
    if (!w.startsWith('-')) break;
    const f = findFlag(before, w);
    if (f?.takesValue) i += typed[i + 1] === '=' ? 2 : 1;
  }
  if (i >= typed.length) return beforeCommand(typed, cur, before);
  const commandWord = typed[i];
  const rest = typed.slice(i + 1);

  if (commandWord === 'help') {
    const described = (name: string) => COMMANDS[name as CommandName].summary;
    return rest.length === 0
      ? { candidates: matching(COMMAND_NAMES, cur, described), directive: 'none' }
      : { candidates: [], directive: 'none' };
  }
  if (!(COMMAND_NAMES as readonly string[]).includes(commandWord)) return { candidates: [], directive: 'none' };
  const name = commandWord as CommandName;
  const spec = COMMANDS[name] as CommandSpec<CommandName>;
  const flags = commandFlags(name);

  // The words after the command: positionals, flags and the values they take.
  const positionals: string[] = [];
  let dashdash = false;
  let pendingValue: Flag | undefined;
  for (let j = 0; j < rest.length; j++) {
    const w = rest[j];
    if (dashdash) positionals.push(w);
    else if (w === '--') dashdash = true;
    else if (w.startsWith('-') && w.length > 1) {
      const f = findFlag(flags, w);
      if (f?.takesValue) {
        j += rest[j + 1] === '=' ? 2 : 1;
        if (j >= rest.length) pendingValue = f;
      }
    } else positionals.push(w);
  }
  // bash: `--status=` arrives as `--status`, `=`, `` and `--status=f` as `--status`, `=`, `f`.
  if (!dashdash && cur === '=' && findFlag(flags, rest[rest.length - 1] ?? '')?.takesValue) {
    pendingValue = findFlag(flags, rest[rest.length - 1]);
    cur = '';
  }
  if (pendingValue) return valueCompletion(pendingValue, cur);

  if (!dashdash && cur.startsWith('-')) {
    // zsh and fish: `--status=f` arrives whole.
    const eq = cur.indexOf('=');
    if (eq > 0) {
      const f = findFlag(flags, cur.slice(0, eq));
      return f?.takesValue
        ? valueCompletion(f, cur.slice(eq + 1), cur.slice(0, eq + 1))
        : { candidates: [], directive: 'none' };
    }
    return { candidates: flagCandidates(flags, cur), directive: 'none' };
  }

  const arg = argAt(spec.args, positionals.length);
  if (arg === undefined) return { candidates: [], directive: 'none' };
  if (arg.choices) return { candidates: matching(arg.choices, cur), directive: 'none' };
  const envDir = readSettings(env).dir;
  if (arg.complete === 'dir') {
    // DIR may be omitted when $TOKCAP_DIR is set: the first word may then be an id as well.
    const takesIds = spec.args.some((a) => a.complete === 'rollout-id');
    const ids = takesIds && envDir !== undefined ? rolloutIds(envDir, cur, []) : [];
    return { candidates: ids, directive: 'dirs' };
  }
  if (arg.complete === 'rollout-id') {
    const { dir, ids } = resolveDirAndIds(name, positionals.map(expandHome), envDir, false, isDir);
    return { candidates: rolloutIds(dir, cur, ids), directive: 'none' };
  }
  if (arg.complete === 'file') return { candidates: [], directive: 'files' };
  return { candidates: [], directive: 'none' };
}

function beforeCommand(typed: readonly string[], cur: string, flags: readonly Flag[]): Completion {
  const last = typed[typed.length - 1];
  const f = last === undefined ? undefined : findFlag(flags, last);
  if (f?.takesValue) return valueCompletion(f, cur);
  if (cur.startsWith('-')) return { candidates: flagCandidates(flags, cur), directive: 'none' };
  const summary = (name: string) =>
    name === 'help' ? 'show help for a command' : COMMANDS[name as CommandName].summary;
  return { candidates: matching([...COMMAND_NAMES, 'help'], cur, summary), directive: 'none' };
}

/** The protocol's text: candidate lines, then the directive line. */
export function formatCompletion({ candidates, directive }: Completion): string {
  // A tab or newline in a value or description would break the line protocol.
  const clean = (s: string) => s.replace(/[\t\n\r]/g, ' ');
  const lines = candidates.map((c) => (c.description ? `${clean(c.value)}\t${clean(c.description)}` : clean(c.value)));
  lines.push(`:${directive}`);
  return `${lines.join('\n')}\n`;
}

/** Entry point of the hidden `tokcap __complete`: never fails, never writes to stderr. */
export function runComplete(
  words: readonly string[],
  out: { write(s: string): unknown },
  env: NodeJS.ProcessEnv,
): number {
  let answer: Completion;
  try {
    answer = complete(words, { env });
  } catch {
    answer = { candidates: [], directive: 'none' };
  }
  out.write(formatCompletion(answer));
  return 0;
}
