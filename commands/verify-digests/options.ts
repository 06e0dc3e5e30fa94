/**
 * `tokcap verify-digests` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, IDS_ARG, idsFrom, shard, allowEmpty } from '../cli/common-options.js';
import type { CommandSpec } from '../cli/option-types.js';

export const VERIFY_DIGESTS_COMMAND: CommandSpec<'verify-digests'> = {
  name: 'verify-digests',
  summary: 'Check records, digests and the state index for damage',
  description: [
    'Reads every line of each rollout and checks it against the state index: entry digests, token digests, the indexed size and the parent links. Each problem is a finding with a code and a severity (error or warning).',
    'Damage it finds (a corrupt line, an unreadable state file, a broken index) is a finding, so exit 1, not 3. Read-only.',
  ].join('\n\n'),
  args: [DIR_ARG, { ...IDS_ARG, description: 'rollout ids to verify (default: every rollout)' }],
  options: {
    strict: { flags: '--strict', description: 'warnings fail too (exit 1)' },
    idsFrom,
    shard,
    allowEmpty,
  },
  examples: [
    {
      command: 'tokcap verify-digests /data/captures',
      description: 'Verify every rollout; exit 1 on any error finding.',
    },
    {
      command: 'tokcap verify-digests /data/captures r-0007 --strict',
      description: 'Warnings count as failures too.',
    },
    {
      command: 'tokcap verify-digests /data/captures --json | jq \'.findings[] | select(.severity == "error")\'',
      description: 'Only the errors, machine-readable.',
    },
    {
      command: 'tokcap verify-digests /data/captures --shard 3/16 --json > verify-3.json',
      description: 'Shard 3 of 16 (on one of 16 machines); `jq -s` combines the 16 documents (see docs/cluster.md).',
    },
  ],
  idValidation: 'batch',
  mutates: () => false,
};
