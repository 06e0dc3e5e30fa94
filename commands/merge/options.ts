/**
 * `tokcap merge` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import type { CommandSpec } from '../cli/option-types.js';

export const MERGE_COMMAND: CommandSpec<'merge'> = {
  name: 'merge',
  summary: 'Combine the reports of a sharded run, or check that a sharded dataset is whole',
  description: [
    'Reads the `--json` reports of one sharded run (the files, or every `*.json` file of a directory), as printed by `inspect`, `verify-digests`, `build`, `export` or `freeze --all` with `--shard K/N`. Each report names its shard. When they are exactly shards 0 to N-1 of one N, it prints the combined report with the exit code one unsharded run would have had: for verify-digests `ok` and every finding in rollout-id order (exit 1 on an error finding), for inspect and build a summary of statuses and verdicts, for export the counts, for freeze how many were frozen; exit 3 when a rollout could not be read. Otherwise it refuses, exit 3, naming the shards that are missing, given twice or of another count.',
    'Given a Parquet dataset directory (written by `export --format parquet`), it says whether the dataset is whole: every part of its count in both tables, each matching its manifest (size and SHA-256), no part of another count; exit 0 when complete, 3 otherwise, naming what is missing. `_SUCCESS` is reported too. Read-only.',
    'This is the last step of a job array: a dependent job in Slurm (`sbatch --dependency=afterany:JOBID`), the step after the Indexed Job in Kubernetes (docs/cluster.md).',
  ].join('\n\n'),
  args: [
    {
      name: 'REPORT',
      description: 'report files, a directory of them, or a Parquet dataset directory',
      required: true,
      variadic: true,
      complete: 'file',
    },
  ],
  options: {
    strict: {
      flags: '--strict',
      description: 'verify-digests reports: warnings fail too (exit 1), as verify-digests --strict',
    },
    failOnMask: {
      flags: '--fail-on-mask',
      description: 'build reports: exit 1 when a rollout would be masked, as build --fail-on-mask',
    },
    allowEmpty: {
      flags: '--allow-empty',
      description: 'a run whose shards selected no rollout at all is an answer (exit 0), not an error (exit 3)',
    },
  },
  examples: [
    {
      command: 'tokcap merge /lustre/reports/run-0001',
      description: 'The verify-digests reports of a job array, combined: exit 0, 1 or 3 as one unsharded run.',
    },
    {
      command: 'tokcap merge verify-0.json verify-1.json verify-2.json --json',
      description: 'Named files; the combined report as JSON.',
    },
    {
      command: 'tokcap merge /lustre/datasets/run-0001',
      description: 'Is the Parquet dataset whole? Names the missing parts.',
    },
  ],
  idValidation: 'none',
  mutates: () => false,
};
