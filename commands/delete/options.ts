/**
 * `tokcap delete` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, IDS_ARG, NO_SELECTION_HINT, idsFrom } from '../cli/common-options.js';
import type { CommandSpec } from '../cli/option-types.js';

export const DELETE_COMMAND: CommandSpec<'delete'> = {
  name: 'delete',
  summary: 'Delete rollouts completely, fence included',
  description: [
    'Removes the record, intents, incomplete and state files of each rollout; the lock file stays. Unlike retire this also removes the fence, so a late writer of the old attempt could start a fresh capture under the same id: use it for ids that can no longer be written, or that are about to be reused.',
    'delete never acts on every rollout implicitly: give ids or `--ids-from`.',
  ].join('\n\n'),
  args: [
    DIR_ARG,
    { ...IDS_ARG, description: `rollout ids to delete (required unless --ids-from; ${NO_SELECTION_HINT})` },
  ],
  options: { idsFrom },
  examples: [
    { command: 'tokcap delete /data/captures r-0007', description: 'Delete one rollout and its fence.' },
    {
      command: 'tokcap delete /data/captures --ids-from - < stale.txt',
      description: 'Delete the ids read from standard input.',
    },
    { command: 'tokcap delete /data/captures --json -- -rf', description: 'Ids that start with - go after --.' },
  ],
  idValidation: 'batch',
  mutates: () => true,
};
