/**
 * `tokcap export` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { EXPORT_FORMATS } from '../../src/export/formats.js';
import { DIR_ARG, IDS_ARG, checkAll, idsFrom, shard, allowEmpty } from '../cli/common-options.js';
import { parseNonEmpty, parseFieldList, type CommandSpec } from '../cli/option-types.js';

export const EXPORT_COMMAND: CommandSpec<'export'> = {
  name: 'export',
  summary: 'Export built trajectories for training and analysis',
  description: [
    "Builds each rollout (as `tokcap build` does), one at a time, and writes the trajectories to `--out` in rollout-id order. `--format jsonl` (the default) writes one line per rollout: the build result (rebuilt response with its token fields, metrics, `mask_sample`), `rollout_id` first, then `mask_causes` and the rollout's `status` and `conditions` last. `--format tinker` writes a training-run directory in the layout of tinker-cookbook's TrainingRunStore: `config.json` (with `model_name`), `metrics.jsonl` (`step` and `tokcap/…` keys) and `iteration_000000/train_rollout_summaries.jsonl`, one record per rollout with every key of the cookbook writer's record, in its order and types, whose steps are the calls of the main chain (rewards are not captured and are written as 0.0); a failed build is a record with `status: \"error\"`, `error_type` and `error_message`; the rollout id and mask causes are extra top-level keys; records go in natural id order (`t1-r2` before `t1-r10`). See docs/export.md for the mapping.",
    '`--format parquet` makes `--out` a dataset directory for query engines (DuckDB, Spark, ClickHouse, pandas, polars read it without options): `calls/part-K-of-N.parquet` (one row per call: its tokens, full prompt with deltas materialised, lineage and markers) and `rollouts/part-K-of-N.parquet` (one row per rollout: status, conditions, verdict, mask causes, counts); K and N come from `--shard` (`part-00000-of-00001` without it), so the tasks of a job array write their parts into one dataset at once. Each part file appears atomically; an existing part is refused unless `--force`. The columns are listed in docs/export.md.',
    'A rollout that fails to build is exported as its failed-build result (masked) and counted; the export goes on. `--trainable-only` leaves masked rollouts out. `--fields` slims jsonl lines: `NAME` keeps only the named top-level keys (plus `rollout_id`, `status` and `conditions`, which every line carries), `-NAME` drops one, and `-tokens` replaces the token arrays of the output items by their lengths, for analysis.',
    'Output is atomic: it is written under a temporary name beside `--out` (`.<name>.tokcap-tmp-<hex>`) and renamed into place only when complete, so an interrupted export leaves nothing at `--out` (SIGINT and SIGTERM remove the temporary output; after a SIGKILL it may remain and can be deleted). An existing `--out` is refused unless `--force`, which replaces it (a directory only if it is empty or a previous tokcap export); a symbolic link is always refused, since renaming onto it would replace the link, not what it points to (for standard output use `--out -`). An `--out` inside DIR (symbolic links resolved) is refused in every format, with or without `--force`: an export never writes into the store it reads.',
    '`--out -` (jsonl only) writes the lines to standard output as they are produced, for `| jq`, `| gzip` or `| aws s3 cp - ...`: no atomic rename is possible there, so an interrupted export leaves a partial stream and dies of the signal (exit 130 or 143); a reader that stops early (`| head -1`) ends tokcap quietly; the summary (text, or with `--json` the JSON document) goes to stderr.',
    "`--format store` copies the chosen rollouts into `--out` as a capture directory, to cut a CI fixture out of a production store: each rollout's files (J, S, I, M; no lock files) copied byte for byte under one shared lock, so `verify-digests` of the copy finds exactly what it finds on the source for them; built in a temporary sibling of `--out` and renamed into place at the end (an interrupted copy leaves nothing at `--out`); a rollout that cannot be read is left out and reported (exit 3). `--out` must be absent or an empty directory; `--force` copies into a directory that is not, moving the copied rollouts' files in at the end (each state file last) and leaving the rest. `--trainable-only` copies only trainable rollouts; `--freeze` does not apply.",
    'Without `--freeze` nothing in the store changes (the trajectories are previews of frozen copies). With `--freeze` each rollout is frozen first, as the reference consumer does; then ids, `--ids-from` or `--all` are required. Exit 3 when DIR cannot be listed or holds no capture file, the selection is empty (`no rollouts selected`, unless `--allow-empty`), a rollout could not be read (its lock not had within `--lock-wait`, a capture file unreadable or not a regular file: left out and named on stderr), or the output could not be written (nothing partial is kept at `--out`); exit 2 for a usage error (`--out` inside DIR, an existing `--out` without `--force`), before anything is read.',
  ].join('\n\n'),
  args: [
    DIR_ARG,
    {
      ...IDS_ARG,
      description: 'rollout ids to export (default: every rollout; required with --freeze unless --all or --ids-from)',
    },
  ],
  options: {
    out: {
      flags: '--out <path>',
      description:
        "output file (jsonl), directory (tinker, store) or dataset directory (parquet: this shard's part files must not exist), or - for standard output (jsonl); must not exist (store: or be empty) unless --force",
      required: true,
      complete: 'file',
      parse: parseNonEmpty,
    },
    format: {
      flags: '--format <format>',
      description:
        'jsonl: one build result per line; tinker: a TrainingRunStore directory; store: a capture directory holding copies of the rollouts; parquet: a dataset of calls/ and rollouts/ part files',
      choices: EXPORT_FORMATS,
      default: 'jsonl',
    },
    freeze: { flags: '--freeze', description: 'freeze each rollout first (changes the store)' },
    all: {
      flags: '--all',
      description: 'with --freeze: freeze and export every rollout in DIR (finished runs only)',
    },
    model: { flags: '--model <name>', description: 'model name recorded in the build results', default: '' },
    trainableOnly: { flags: '--trainable-only', description: 'leave masked rollouts out (they are still counted)' },
    fields: {
      flags: '--fields <list>',
      description:
        'jsonl only: comma-separated top-level keys to keep (rollout_id always stays); -NAME drops a key; -tokens replaces the token arrays by their lengths',
      parse: parseFieldList,
    },
    force: { flags: '--force', description: 'replace --out if it exists' },
    idsFrom,
    shard,
    allowEmpty,
  },
  examples: [
    {
      command: 'tokcap export /data/captures --out train.jsonl',
      description: 'Export every rollout (a preview: the store is unchanged).',
    },
    {
      command: 'tokcap export /data/captures --format tinker --model Qwen/Qwen3-8B --out runs/capture-0001',
      description:
        "A tinker-cookbook training-run directory whose records are the cookbook's own rollout summaries (config.json, metrics.jsonl, iteration_000000/).",
    },
    {
      command: 'tokcap export /data/captures --fields -tokens --out analysis.jsonl',
      description: 'Everything but the token arrays, for pandas or DuckDB.',
    },
    {
      command: 'tokcap export /data/captures --format parquet --shard auto --out /data/datasets/run-0001',
      description:
        'In a Slurm job array or Kubernetes Indexed Job: each task writes its part of one Parquet dataset (see docs/cluster.md).',
    },
    {
      command: 'tokcap export /data/captures r0042 r0117 --format store --out test/fixtures/captures',
      description: 'Cut a fixture for CI: two rollouts copied as a capture directory, byte for byte.',
    },
    {
      command: 'tokcap export /data/captures --freeze --all --trainable-only --out - | gzip > train.jsonl.gz',
      description:
        'Freeze a finished run and stream only what is trainable to standard output, line by line as it is built.',
    },
  ],
  idValidation: 'batch',
  mutates: (o) => o.freeze,
  check: ({ options, idsGiven }) => {
    if (options.all && !options.freeze)
      return 'export: --all only applies with --freeze (without --freeze, export covers every rollout by default)';
    if (options.fields !== undefined && options.format !== 'jsonl')
      return 'export: --fields applies to --format jsonl only';
    if (options.format === 'store' && options.freeze)
      return 'export: --freeze does not apply to --format store: the copy is read-only (freeze the copy with `tokcap freeze COPY --all`)';
    if (options.out === '-' && options.format !== 'jsonl') {
      return `export: --out - (standard output) takes --format jsonl only: --format ${options.format} writes a directory; name it with --out DIR`;
    }
    return checkAll('export', options, idsGiven);
  },
  checkFiles: async (input) => (await import('./check-out.js')).checkOut(input),
};
