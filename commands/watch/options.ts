/**
 * `tokcap watch` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, tokenizer, allowEmpty } from '../cli/common-options.js';
import type { CommandSpec } from '../cli/option-types.js';

export const WATCH_COMMAND: CommandSpec<'watch'> = {
  name: 'watch',
  summary: 'Watch a capture directory live in the terminal',
  description: [
    'A live terminal view of DIR: rollouts with their state, dangling intents, incomplete markers and the causes that would mask them, refreshed as writers work. Read-only.',
    'It needs a terminal: without one (and without `--once`) it exits 2 and suggests `tokcap inspect`. `--once` prints a single snapshot and exits; `--once --json` prints it as one JSON document.',
    'The selection stays on the rollout you move it to, also while the first load reads and re-sorts the rows; until a key moves it, it is the top row.',
    'Each rollout is read once, under one short shared lock: its status and its consumer verdict come from that one copy. The locks are taken one at a time; a worker thread computes the rows (TOKCAP_WORKERS=1: none). The live view starts its load before it draws: the worker thread lists the directory and both threads stat it, then every rollout is listed with its age and the most recently modified are read first, the rows of the first screen before the others; after that, a change re-reads only the rollout it touched. `--once` is the same load without a screen.',
    'A rollout whose lock another process holds is read on its own, in the background, for up to `--lock-wait`: its row says `waiting for lock (3s)`, then `could not be read: …` if the wait runs out, and is tried again on the next rescan. Every other row, the totals and the keys stay live meanwhile, and q or Ctrl-C quit at once.',
  ].join('\n\n'),
  args: [DIR_ARG],
  options: {
    once: { flags: '--once', description: 'print one snapshot and exit (works without a terminal)' },
    tokenizer,
    allowEmpty: {
      ...allowEmpty,
      description:
        'a DIR without any capture file is an answer (exit 0), not an error (by default: exit 3, `tokcap: DIR: no capture files`, since it is usually a mistyped or emptied DIR)',
    },
  },
  examples: [
    { command: 'tokcap watch /data/captures', description: 'The live view (q quits).' },
    {
      command: 'tokcap watch /data/captures --once --json',
      description: 'One machine-readable snapshot of what the view shows.',
    },
  ],
  idValidation: 'none',
  mutates: () => false,
  check: ({ options, stdoutIsTTY }) => {
    if (!options.once && !stdoutIsTTY) {
      return "watch: needs a terminal; use 'tokcap watch --once' or 'tokcap inspect' when the output is not a terminal";
    }
    return undefined;
  },
};
