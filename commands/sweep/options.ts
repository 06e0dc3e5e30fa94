/**
 * `tokcap sweep` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { parseDuration } from '../cli/duration.js';
import { DIR_ARG } from '../cli/common-options.js';
import type { CommandSpec } from '../cli/option-types.js';

export const SWEEP_COMMAND: CommandSpec<'sweep'> = {
  name: 'sweep',
  summary: 'Remove the fences of retired rollouts older than an age',
  description: [
    'Removes the leftovers (state fence, intents, incomplete marker, lock file) of every retired rollout whose state file was last changed longer ago than `--older-than`. Rollouts that are not retired, or have no state file, are never touched; a retired rollout whose record file still exists (an interrupted retire) is skipped and reported on stderr, also with -q, and the command exits 1: run `tokcap retire DIR ID` on it again to finish, then sweep again.',
    'The age is required: sweep never acts on every rollout implicitly. `--older-than 0s` means any age. `--dry-run` lists what would be removed and changes nothing.',
  ].join('\n\n'),
  args: [DIR_ARG],
  options: {
    olderThan: {
      flags: '--older-than <duration>',
      description: 'only rollouts whose state file is at least this old, e.g. 7d, 36h, 1d12h (0s: any age)',
      parse: parseDuration,
      required: true,
    },
    dryRun: { flags: '--dry-run', description: 'list what would be removed; change nothing' },
  },
  examples: [
    {
      command: 'tokcap sweep /data/captures --older-than 7d',
      description: 'Remove fences retired more than a week ago.',
    },
    {
      command: 'tokcap sweep /data/captures --older-than 36h --dry-run',
      description: 'Show what would go, without removing anything.',
    },
    {
      command: 'tokcap sweep /data/captures --older-than 0s --json',
      description: 'Remove every retired fence; print the removed ids and their count.',
    },
  ],
  idValidation: 'none',
  mutates: () => true,
};
