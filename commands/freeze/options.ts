/**
 * `tokcap freeze` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, IDS_ARG, NO_SELECTION_HINT, checkAll, idsFrom, shard } from '../cli/common-options.js';
import type { CommandSpec } from '../cli/option-types.js';

export const FREEZE_COMMAND: CommandSpec<'freeze'> = {
  name: 'freeze',
  summary: 'Freeze rollouts so that writers can no longer add to them',
  description: [
    'Freezes each rollout: reconciles the state index with the record file, marks the rollout frozen with a fresh snapshot id and a new version, and reports its entries and dangling intents. Freezing is idempotent: freezing again returns the same snapshot id and version unless new lines were reconciled.',
    'A writer that still uses a frozen rollout fails on its next call, so freeze only finished rollouts; `--all` is meant for finished runs. freeze never acts on every rollout implicitly: give ids, `--ids-from` or `--all`.',
    'Ids are validated as a batch first: one invalid id fails the command (exit 2) and changes nothing. With `--json` the array is still printed, with an inline `invalid_rollout_id` error for each invalid id.',
  ].join('\n\n'),
  args: [
    DIR_ARG,
    { ...IDS_ARG, description: `rollout ids to freeze (required unless --all or --ids-from; ${NO_SELECTION_HINT})` },
  ],
  options: {
    all: { flags: '--all', description: 'freeze every rollout in DIR (finished runs only: live writers will fail)' },
    idsFrom,
    shard,
  },
  examples: [
    { command: 'tokcap freeze /data/captures r-0007 r-0012', description: 'Freeze two rollouts.' },
    {
      command: 'tokcap freeze /data/captures --all --json > snapshots.json',
      description: 'Freeze a finished run and keep the snapshot ids and versions.',
    },
    {
      command: 'tokcap freeze /data/captures --ids-from done.txt',
      description: 'Freeze the rollouts listed in a file.',
    },
    { command: 'tokcap freeze /data/captures -- -rf', description: 'Ids that start with - go after --.' },
  ],
  idValidation: 'batch-unless-json',
  mutates: () => true,
  check: ({ options, idsGiven }) => checkAll('freeze', options, idsGiven),
};
