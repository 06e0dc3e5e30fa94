/**
 * `tokcap retire` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, IDS_ARG, NO_SELECTION_HINT, idsFrom } from '../cli/common-options.js';
import { parseNonNegativeInt, parseNonEmpty, type CommandSpec } from '../cli/option-types.js';

export const RETIRE_COMMAND: CommandSpec<'retire'> = {
  name: 'retire',
  summary: 'Retire rollouts: fence them and remove their records',
  description: [
    'Writes a fence (a retired state) for each rollout, so that later writes fail, then removes its record, intents and incomplete files. Works on rollouts in any condition, including ids never seen (they get a fence). Retiring again is harmless.',
    'With `--snapshot-id` and `--version` it is a conditional drop of a consumed snapshot instead: each rollout is retired only if it is frozen with exactly that snapshot id and version; otherwise nothing changes and the command exits 1.',
    'retire never acts on every rollout implicitly: give ids or `--ids-from`.',
  ].join('\n\n'),
  args: [
    DIR_ARG,
    { ...IDS_ARG, description: `rollout ids to retire (required unless --ids-from; ${NO_SELECTION_HINT})` },
  ],
  options: {
    snapshotId: {
      flags: '--snapshot-id <id>',
      description: 'conditional drop: only if the rollout is frozen with this snapshot id (needs --version)',
      parse: parseNonEmpty,
    },
    version: {
      flags: '--version <n>',
      description: 'conditional drop: only if the rollout is at this version (needs --snapshot-id)',
      parse: parseNonNegativeInt,
    },
    idsFrom,
  },
  examples: [
    { command: 'tokcap retire /data/captures r-0007 r-0012', description: 'Retire two rollouts unconditionally.' },
    {
      command: 'tokcap retire /data/captures r-0007 --snapshot-id 6ade57050ec84faeab9d884d3ce992f6 --version 3',
      description: 'Drop a consumed snapshot only if it is still the one that was consumed.',
    },
    {
      command: 'tokcap retire /data/captures --ids-from consumed.txt --json',
      description: 'Retire the rollouts listed in a file; print removed and absent ids.',
    },
  ],
  idValidation: 'batch',
  mutates: () => true,
  check: ({ options }) => {
    if ((options.snapshotId === undefined) !== (options.version === undefined)) {
      return 'retire: --snapshot-id and --version go together (conditional drop)';
    }
    return undefined;
  },
};
