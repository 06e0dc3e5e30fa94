/**
 * The command line read from the option table (./options.ts) before commander loads: which
 * command runs, which options it was given, its positionals. It is the one reading of the line
 * before the program's: ./main.ts decides by it whether the completer answers, what starts before
 * the command line is fully handled (./early-job.ts, ../watch/early.ts) and where the program runs
 * from; the program (./program.ts) then parses and checks the line with the same table.
 *
 * A plan never fails: a word the table does not know for the command (an unknown option,
 * `--help`, `--version`) leaves `options` undefined, and nothing is started early.
 */
import {
  commandOptionEntries,
  COMMAND_NAMES,
  GLOBAL_OPTIONS,
  optionLongFlag,
  optionShortFlag,
  optionValueName,
  type CommandName,
  type OptionSpec,
} from './options.js';
import type { Settings } from './settings.js';

export interface Plan {
  /** The command's word (`inspect`, ...; any word there, known or not), or undefined. */
  readonly word: string | undefined;
  /** The command, when the word is one. */
  readonly command: CommandName | undefined;
  /**
   * The options given before and after the command, by the option table's key (`lockWait`;
   * `--no-color` is `color`), each with its value (true for a flag); undefined when a word is
   * not in the command's table.
   */
  readonly options: ReadonlyMap<string, string | true> | undefined;
  /** The words that are not options nor their values (after `--`: every word). */
  readonly positionals: readonly string[];
  /**
   * `tokcap __complete WORDS...` (the hidden completer shells run on every Tab): WORDS, the line
   * being completed. Undefined for every other line.
   */
  readonly completing?: readonly string[];
}

interface Flag {
  key: string;
  takesValue: boolean;
}

/** The flags of a set of option specs, by every spelling (`-q` and `--quiet`). */
function flagsOf(entries: readonly [string, OptionSpec<unknown>][]): Map<string, Flag> {
  const flags = new Map<string, Flag>();
  for (const [key, spec] of entries) {
    const flag = { key, takesValue: optionValueName(spec.flags) !== undefined };
    flags.set(optionLongFlag(spec.flags), flag);
    const short = optionShortFlag(spec.flags);
    if (short !== undefined) flags.set(short, flag);
  }
  // --no-color is --color=never (./run.ts): one option of the table.
  if (entries.some(([key]) => key === 'color')) flags.set('--no-color', { key: 'color', takesValue: false });
  return flags;
}

const isOption = (word: string) => word.startsWith('-') && word !== '-';

/**
 * Reads `words` as options of `flags` and positionals. Returns undefined at a word the table does
 * not know. `stopAtPositional`: stops at the first positional (the command's word), returned as
 * `at`.
 */
function readWords(
  words: readonly string[],
  flags: ReadonlyMap<string, Flag>,
  options: Map<string, string | true>,
  positionals: string[],
  stopAtPositional: boolean,
): number | undefined {
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word === '--') {
      if (stopAtPositional) return i + 1 < words.length ? i + 1 : words.length;
      positionals.push(...words.slice(i + 1));
      return words.length;
    }
    if (!isOption(word)) {
      if (stopAtPositional) return i;
      positionals.push(word);
      continue;
    }
    const eq = word.startsWith('--') ? word.indexOf('=') : -1;
    const name = eq === -1 ? word : word.slice(0, eq);
    const flag = flags.get(name);
    if (flag === undefined || (eq !== -1 && !flag.takesValue)) return undefined;
    if (!flag.takesValue) options.set(flag.key, true);
    else if (eq !== -1) options.set(flag.key, word.slice(eq + 1));
    else if (i + 1 < words.length) options.set(flag.key, words[++i]);
    else return undefined;
  }
  return words.length;
}

/** The hidden completer's word, first on the line (../completion/completion.ts writes it). */
const COMPLETE_WORD = '__complete';

const GLOBAL_FLAGS = flagsOf(Object.entries(GLOBAL_OPTIONS) as [string, OptionSpec<unknown>][]);
const isCommandName = (word: string): word is CommandName => (COMMAND_NAMES as readonly string[]).includes(word);

/** The plan of `argv` (process.argv form: node, script, words...). */
export function planOf(argv: readonly string[]): Plan {
  const words = argv.slice(2);
  if (words[0] === COMPLETE_WORD)
    return { word: COMPLETE_WORD, command: undefined, options: undefined, positionals: [], completing: words.slice(1) };
  const options = new Map<string, string | true>();
  const positionals: string[] = [];
  // Before the command: the global options, and the command's word where the program finds it.
  const at = readWords(words, GLOBAL_FLAGS, options, positionals, true);
  if (at === undefined) {
    // An option the program does not know before the command: find the word all the same.
    const word = words.find((w) => !isOption(w));
    return {
      word,
      command: word !== undefined && isCommandName(word) ? word : undefined,
      options: undefined,
      positionals,
    };
  }
  const word = at < words.length ? words[at] : undefined;
  if (word === undefined || !isCommandName(word)) return { word, command: undefined, options: undefined, positionals };
  const known = readWords(words.slice(at + 1), flagsOf(commandOptionEntries(word)), options, positionals, false);
  return { word, command: word, options: known === undefined ? undefined : options, positionals };
}

/**
 * DIR, when the plan shows it plainly and its options are only those in `keep` (options that
 * leave the early work what it is): the one positional, or with none $TOKCAP_DIR. Otherwise
 * undefined (ids given, another option, a word the table does not know).
 */
export function plainDir(plan: Plan, settings: Settings, keep: readonly string[]): string | undefined {
  if (plan.options === undefined) return undefined;
  for (const key of plan.options.keys()) if (!keep.includes(key)) return undefined;
  const { positionals } = plan;
  const dir = positionals.length === 1 ? positionals[0] : positionals.length === 0 ? settings.dir : undefined;
  return dir === '' ? undefined : dir;
}
