/**
 * Which command a command line runs, decided before anything else loads (bin/tokcap.js picks the
 * bundle or the modules by it; ./main.ts starts a command's early work by it). It is found where
 * the program's parser finds it: the first word that is not an option, the values of the global
 * options that take one (`--lock-wait 5s`) skipped, so `tokcap inspect watch` (a DIR named watch)
 * or `tokcap export --out watch` is not `watch`.
 */

/**
 * The global options given as two words (`--color never`), as in ./options.ts (GLOBAL_OPTIONS;
 * a test keeps the two in step). Spelled `--color=never` they are one word.
 */
export const GLOBAL_OPTIONS_WITH_VALUE: readonly string[] = ['--color', '--lock-wait'];

/** Position in `argv` (process.argv form: node, script, words...) of the command's name, or -1. */
export function commandIndex(argv: readonly string[]): number {
  for (let i = 2; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') return i + 1 < argv.length ? i + 1 : -1;
    if (!word.startsWith('-') || word === '-') return i;
    if (GLOBAL_OPTIONS_WITH_VALUE.includes(word)) i++;
  }
  return -1;
}

/** The command's name (`inspect`, `watch`, ...; any word there, known or not), or undefined. */
export function commandWord(argv: readonly string[]): string | undefined {
  const i = commandIndex(argv);
  return i === -1 ? undefined : argv[i];
}
