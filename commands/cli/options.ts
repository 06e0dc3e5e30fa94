/**
 * THE option table. Everything user-facing about the command line is declared here once and
 * consumed by: the commander program (commands/cli/program.ts), `--help`, the man pages
 * (scripts/gen-man.ts via commands/cli/docs.ts) and shell completion (`tokcap __complete`,
 * commands/completion/complete.ts). Change an option here and all of them follow.
 *
 * Its types are in ./option-types.ts, its program-level part (the program's help, exit codes,
 * environment) in ./program-docs.ts; both are exported from here too.
 *
 * Types: each command has an options interface (`InspectCommandOptions`, ...). Its table is an
 * `OptionTable<InspectCommandOptions>`: one `OptionSpec` per key, keyed by commander's attribute name
 * (`--ids-from` -> `idsFrom`, `--no-color` -> `color`), so the compiler checks that every typed
 * option is declared and that each value parser returns the declared type; a test checks that
 * each key is the attribute name commander derives from the flags.
 *
 * This module must stay cheap to load: no library code beyond errors, the duration parser and
 * constants (the lock wait, the statuses, the thread limit).
 */
import { EXPORT_FORMATS } from '../../src/export/formats.js';
import { DEFAULT_LOCK_WAIT_MS } from '../../src/ops/store.js';
import { formatDuration, parseDuration } from './duration.js';
import { parseShardOption, type ShardOption } from './shard.js';
import {
  STATUS_FILTERS,
  SORT_KEYS,
  SHELLS,
  parsePositiveInt,
  parseNonNegativeInt,
  parseNonEmpty,
  parseFieldList,
  COLOR_WHEN,
  type CommandName,
  type OptionSpec,
  type OptionTable,
  type ArgSpec,
  type CommandSpec,
  type GlobalOptions,
} from './option-types.js';
export {
  COMMAND_NAMES,
  STATUS_FILTERS,
  SORT_KEYS,
  SHELLS,
  parsePositiveInt,
  parseNonNegativeInt,
  parseNonEmpty,
  parseFieldList,
  COLOR_WHEN,
  optionValueName,
  optionLongFlag,
  optionShortFlag,
  type CommandName,
  type CompletionHint,
  type OptionSpec,
  type OptionTable,
  type ArgSpec,
  type Example,
  type CheckInput,
  type IdValidation,
  type CommandSpec,
  type StatusFilter,
  type SortKey,
  type Shell,
  type ColorWhen,
  type GlobalOptions,
  type InspectCommandOptions,
  type FreezeCommandOptions,
  type BuildCommandOptions,
  type VerifyDigestsCommandOptions,
  type SweepCommandOptions,
  type RetireCommandOptions,
  type DeleteCommandOptions,
  type ExportCommandOptions,
  type WatchCommandOptions,
  type ReportCommandOptions,
  type FixtureCommandOptions,
  type MergeCommandOptions,
  type DoctorCommandOptions,
  type CompletionCommandOptions,
  type CommandOptionsMap,
} from './option-types.js';
export { PROGRAM, EXIT_CODES, EXIT_CODES_NOTE, ENVIRONMENT } from './program-docs.js';

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/** The library's default lock wait (src/ops/store.ts owns it), in the option's unit: seconds. */
const DEFAULT_LOCK_WAIT_SECONDS = DEFAULT_LOCK_WAIT_MS / 1000;
const LOCK_WAIT_HINT = "a lock wait needs a unit, e.g. 10s, 90s or 2m (how long to wait for a busy rollout's lock)";

export const GLOBAL_OPTIONS: OptionTable<GlobalOptions> = {
  json: {
    flags: '--json',
    description: 'print one JSON document on stdout (the machine-readable contract) and nothing else there',
  },
  color: {
    flags: '--color <when>',
    description:
      'colour: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it, e.g. into less -R), always (also into a pipe or file) or never; --no-color is --color=never',
    choices: COLOR_WHEN,
    default: 'auto',
  },
  quiet: {
    flags: '-q, --quiet',
    description: 'write only errors on stderr (no warnings, no progress)',
  },
  lockWait: {
    flags: '--lock-wait <duration>',
    description:
      "how long to wait for a rollout's lock before failing with a lock_timeout error naming the busy rollout",
    default: DEFAULT_LOCK_WAIT_SECONDS,
    defaultLabel: formatDuration(DEFAULT_LOCK_WAIT_SECONDS),
    parse: (raw) => parseDuration(raw, LOCK_WAIT_HINT),
  },
};

/** Handled by commander itself; listed for the docs. */
export const BUILTIN_OPTIONS: readonly { flags: string; description: string }[] = [
  { flags: '-h, --help', description: 'show help for the command, with examples' },
  { flags: '-V, --version', description: 'print the tokcap version (before the command: `tokcap -V`)' },
];

const idsFrom: OptionSpec<string | undefined> = {
  flags: '--ids-from <file>',
  description:
    'read more rollout ids from a file, one per line (`-`: standard input); blank lines and lines starting with # are ignored',
  complete: 'file',
};

const shard: OptionSpec<ShardOption | undefined> = {
  flags: '--shard <K/N|auto>',
  description:
    'cover only shard K of N (0 <= K < N): the rollouts whose id hashes to K (SHA-256, first 8 bytes big-endian, mod N), the same on every machine; given ids are filtered the same way, so every task of a job array can share one --ids-from list; `auto` takes K and N from a Slurm job array (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, TOKCAP_SHARDS)',
  parse: parseShardOption,
};

const tokenizer: OptionSpec<string | undefined> = {
  flags: '--tokenizer <path>',
  description:
    "decode token ids with this tokenizer.json or Hugging Face model directory (`none`: ids only); by default $TOKCAP_TOKENIZER, else the records' model found in the local Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub); never downloaded",
  complete: 'file',
};

const allowEmpty: OptionSpec<boolean> = {
  flags: '--allow-empty',
  description:
    'a DIR without any capture file, or a selection without any rollout (--ids-from of no ids, an empty --shard), is an answer (exit 0), not an error (by default: exit 3, `tokcap: DIR: no capture files` or `tokcap: DIR: no rollouts selected`, since it is usually a mistyped DIR or id list)',
};

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

const DIR_ARG: ArgSpec = {
  name: 'DIR',
  description: 'the capture directory (default: $TOKCAP_DIR)',
  required: false,
  variadic: false,
  complete: 'dir',
};

const IDS_ARG: ArgSpec = {
  name: 'ID',
  description: 'rollout ids (put ids that start with - after --); duplicates are dropped, order is kept',
  required: false,
  variadic: true,
  complete: 'rollout-id',
};

const NO_SELECTION_HINT = 'it never acts on every rollout implicitly';

/** Shared usage checks for `--all` (freeze and the --freeze forms). */
function checkAll(name: string, o: { all: boolean; freeze?: boolean }, idsGiven: boolean): string | undefined {
  if (o.all && idsGiven) return `${name}: --all cannot be combined with rollout ids or --ids-from`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export const COMMANDS: { readonly [N in CommandName]: CommandSpec<N> } = {
  inspect: {
    name: 'inspect',
    summary: 'Show the rollouts of a capture directory and their state',
    description: [
      'Lists every rollout of DIR (or only the given ids) with its status (live, frozen, retired, or unavailable: it could not be read, lock timeout or I/O error), its conditions (corrupt, dangling, incomplete, missing_state, refused, retired_with_records, torn_tail, unindexed_tail), its counts and its version, and the names in DIR that carry a capture suffix but an invalid rollout id. Status and conditions are the same in build, watch and export.',
      'Read-only: it takes only short shared locks, creates no lock file, never truncates a torn tail (it reports it) and never writes state. Counts come from the state index by default; `--deep` reads every line.',
      "With ids, each rollout's detail: its chain tree, dangling intents, incomplete markers, build verdict with its mask causes and, for a masked rollout whose chain broke, the first divergence of each broken boundary (the candidate parent, the position and the ids on both sides, decoded when a tokenizer is found: `--tokenizer`).",
      'With `--json`: `{"dir", "rollouts": {ID: FACTS}, "invalid_names": [...]}`, where FACTS holds the files, state flags, intents, dangling intents, version, snapshot id, entry count and sizes of the rollout, then `status` and `conditions`. A rollout that could not be read is only `{"status": "unavailable", "conditions": [], "error": {"kind", "message"}}`, and the exit code is 3. With `--deep` or ids, a rollout whose lines could not be read (another process holds its lock) keeps the summary\'s facts, status and conditions, with `"entries_source": "index"` and that `error`; the exit code is 3.',
    ].join('\n\n'),
    args: [DIR_ARG, IDS_ARG],
    options: {
      deep: {
        flags: '--deep',
        description:
          'read every line instead of trusting the state index for counts (slower; "entries_source": "scan")',
      },
      status: {
        flags: '--status <state>',
        description: 'show only rollouts with this status or condition',
        choices: STATUS_FILTERS,
        default: 'all',
      },
      sort: {
        flags: '--sort <key>',
        description: 'order of the listing',
        choices: SORT_KEYS,
        default: 'id',
      },
      limit: {
        flags: '--limit <n>',
        description: 'show at most N rollouts (after filtering and sorting)',
        parse: parsePositiveInt,
      },
      call: {
        flags: '--call <call-id>',
        description:
          "with one ID: the call's text — the prompt it adds to its parent's tokens, then its generation shaded by log-probability (a legend; plain with --color never), long stretches folded",
      },
      tokenizer,
      idsFrom,
      shard,
      allowEmpty,
    },
    examples: [
      { command: 'tokcap inspect /data/captures', description: 'Every rollout of a capture directory, one line each.' },
      {
        command: 'tokcap inspect /data/captures r-0007 --call call-002 --tokenizer ~/models/Qwen3-8B',
        description: "One call's prompt and generation as text, with a tokenizer the user has.",
      },
      {
        command: 'tokcap inspect /data/captures r-0007 r-0012 --deep',
        description: 'Two rollouts, counting every line instead of trusting the index.',
      },
      {
        command: 'TOKCAP_DIR=/data/captures tokcap inspect --status dangling --sort age --limit 20',
        description: 'The 20 oldest rollouts with dangling intents, using $TOKCAP_DIR.',
      },
      {
        command: "tokcap inspect /data/captures --json | jq '.rollouts | keys'",
        description: 'Machine-readable facts.',
      },
    ],
    idValidation: 'batch',
    mutates: () => false,
    check: ({ options, idsGiven }) => {
      if (options.call === undefined) return undefined;
      if (!idsGiven) return 'inspect: --call needs exactly one rollout ID';
      if (options.json) return 'inspect: --call shows text; `build --json` carries the ids';
      return undefined;
    },
  },

  freeze: {
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
  },

  build: {
    name: 'build',
    summary: 'Build trajectories from rollouts, as the reference consumer does',
    description: [
      'Builds the trajectory of each rollout exactly as the reference consumer would (prefix merging), and reports it with its metrics.',
      'Without `--freeze` nothing on disk changes: each result is what the reference would return for a frozen copy of the rollout, without `_capture_snapshot`, plus `"preview": true`; without ids every rollout is built. With `--freeze` each rollout is frozen first and then built, and the result includes `_capture_snapshot`; then ids, `--ids-from` or `--all` are required.',
      'An invalid rollout id is not a usage error here: it is that rollout\'s failed build (`"error": "ValueError: Invalid rollout id: ..."`), and the other ids are still built.',
      'A masked rollout whose chain broke is explained down to the tokens: for each call whose parent boundary did not resolve and each extra root, the earlier call whose prompt and generation share the longest prefix with its prompt, the first differing position and the ids that differ on both sides (`call-002 diverges from call-001 at token 1,398: generated ... re-rendered ...`), decoded when a tokenizer is found (`--tokenizer`; nothing is downloaded). With `--json` each such result carries `divergences` (docs/cli.md).',
      'Each result also carries the rollout\'s `status` and `conditions` (as `inspect` gives them), its `verdict` (`trainable`, `masked`, or `unavailable` when the rollout could not be read: then the result is the failed build of that error, and the exit code is 3) and, for a failed read or freeze, `error_kind`. The summary counts statuses, conditions and verdicts; a failed build is masked and "could not be built".',
    ].join('\n\n'),
    args: [
      DIR_ARG,
      {
        ...IDS_ARG,
        description: 'rollout ids to build (default: every rollout; required with --freeze unless --all or --ids-from)',
      },
    ],
    options: {
      freeze: { flags: '--freeze', description: 'freeze each rollout first, then build it (changes the store)' },
      all: { flags: '--all', description: 'with --freeze: freeze and build every rollout in DIR (finished runs only)' },
      model: { flags: '--model <name>', description: 'model name recorded in the build results', default: '' },
      failOnMask: { flags: '--fail-on-mask', description: 'exit 1 when a rollout would be masked (not trainable)' },
      tokenizer,
      idsFrom,
      shard,
      allowEmpty,
    },
    examples: [
      {
        command: 'tokcap build /data/captures r-0007',
        description: 'Preview the trajectory of one rollout; nothing on disk changes.',
      },
      {
        command: 'tokcap build /data/captures --freeze --all --model qwen3-8b --json > built.json',
        description: 'Freeze and build a finished run, as the trainer would.',
      },
      {
        command: 'tokcap build /data/captures --fail-on-mask -q',
        description: 'CI gate: exit 1 if any rollout would be masked.',
      },
    ],
    idValidation: 'command',
    mutates: (o) => o.freeze,
    check: ({ options, idsGiven }) => {
      if (options.all && !options.freeze)
        return 'build: --all only applies with --freeze (without --freeze, build covers every rollout by default)';
      return checkAll('build', options, idsGiven);
    },
  },

  'verify-digests': {
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
  },

  sweep: {
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
  },

  retire: {
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
  },

  delete: {
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
  },

  export: {
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
        description:
          'rollout ids to export (default: every rollout; required with --freeze unless --all or --ids-from)',
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
  },

  watch: {
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
  },

  report: {
    name: 'report',
    summary: 'Write one rollout as a self-contained HTML page to attach to a bug',
    description: [
      "Writes one HTML file (no network, no external assets, inline CSS) with the rollout's chain tree, its verdict and mask causes, the first divergence of each broken boundary with both windows highlighted, and every placed call's text: the prompt it adds to its parent's tokens and its generation shaded by log-probability, each token's id on hover. Long stretches are folded with counts.",
      "Text needs a tokenizer the user has (`--tokenizer`, $TOKCAP_TOKENIZER, or the records' model in the local Hugging Face cache); without one the ids are the text. Read-only on the store; `--out` must not be inside DIR and is replaced atomically.",
    ].join('\n\n'),
    args: [DIR_ARG, { ...IDS_ARG, name: 'ID', description: 'the rollout to report', required: true, variadic: false }],
    options: {
      out: {
        flags: '--out <file>',
        description: 'the HTML file to write (FILE.html; replaced if it exists)',
        required: true,
        complete: 'file',
        parse: parseNonEmpty,
      },
      tokenizer,
    },
    examples: [
      {
        command: 'tokcap report /data/captures r-0007 --out r-0007.html',
        description: 'A page to attach to a bug report, decoded with the model found in the local Hugging Face cache.',
      },
      {
        command: 'tokcap report /data/captures r-0007 --out r-0007.html --tokenizer ~/models/Qwen3-8B',
        description: 'Decoded with a tokenizer the user names.',
      },
    ],
    idValidation: 'batch',
    mutates: () => false,
  },

  merge: {
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
  },

  doctor: {
    name: 'doctor',
    summary: 'Check that a filesystem is safe for tokcap (locks, renames, clocks, space)',
    description: [
      "Runs the checks a person runs before trusting a filesystem with a capture directory, each with a one-line verdict: the filesystem type and mount options, and what they mean for locks (NFS `local_lock=flock|all` or `nolock` and Lustre `localflock` make locks local to one node; Lustre `noflock` has none); that an exclusive `flock` taken by one process excludes another process on this node, both ways, and that Python's `fcntl.flock` and tokcap exclude each other (when python3 is installed); that an atomic rename and a directory fsync work in DIR; the clock skew between this node and the file server (a new file's mtime against the local clock) and what it does to `sweep --older-than`; free space and inodes.",
      'Exit 1 when something found makes tokcap unsafe there (locks that do not exclude, a failed rename or fsync, a clock more than a minute off, no space or inodes left); 0 otherwise. Its files in DIR are dot-files that no capture scanner reads, removed before it exits (also on Ctrl-C).',
      'Across nodes: `tokcap doctor DIR --hold 60s` on one node takes an exclusive lock for that long; `tokcap doctor DIR --probe` on another node, started meanwhile, says whether that lock excludes it there (exit 1 when it does not). docs/cluster.md runs the pair as a two-task Slurm job.',
    ].join('\n\n'),
    args: [
      {
        ...DIR_ARG,
        description: 'the directory to check: the capture directory, or where one will be (default: $TOKCAP_DIR)',
      },
    ],
    options: {
      hold: {
        flags: '--hold <duration>',
        description:
          'two-node check: hold an exclusive lock in DIR for this long (run --probe on another node meanwhile)',
        parse: (raw) => parseDuration(raw, 'a hold needs a unit, e.g. 60s or 5m'),
      },
      probe: {
        flags: '--probe',
        description:
          'two-node check: try the lock that `--hold` holds on another node; exit 1 when it is granted (locks are local to each node)',
      },
      wait: {
        flags: '--wait <duration>',
        description: 'with --probe: how long to wait for the holder to start',
        default: 60,
        defaultLabel: '60s',
        parse: (raw) => parseDuration(raw, 'a wait needs a unit, e.g. 60s'),
      },
    },
    examples: [
      {
        command: 'tokcap doctor /lustre/captures',
        description: 'Check the filesystem of a capture directory on this node.',
      },
      { command: 'tokcap doctor /lustre/captures --json', description: 'The checks as one JSON document.' },
      {
        command: 'tokcap doctor /lustre/captures --hold 60s   # on node A',
        description: 'Hold a lock for a minute, for a probe from another node.',
      },
      {
        command: 'tokcap doctor /lustre/captures --probe      # on node B, meanwhile',
        description: 'Does the lock held on node A exclude this node?',
      },
    ],
    idValidation: 'none',
    mutates: () => false,
    check: ({ options }) => {
      if (options.hold !== undefined && options.probe)
        return 'doctor: --hold and --probe are the two ends of one check: run them on two nodes';
      return undefined;
    },
  },

  fixture: {
    name: 'fixture',
    summary: 'Generate a deterministic synthetic store (for benchmarks and tests)',
    description: [
      'Writes a realistic, deterministic store into DIR: N rollouts of C calls each, every call a full (or, with `--delta`, parent-relative) prompt that extends the previous call by its generation and `--turn` more tokens. The bytes are those of the reference writer: canonical entry lines, intents, state files. The same options and seed always give the same bytes (snapshot ids of frozen rollouts aside).',
      '`--mix` adds the shapes seen in practice, one rollout in eight each: dangling intents, incomplete markers, retried final calls, unresolved boundaries, frozen and retired rollouts, torn tails.',
      'When DIR is missing or empty (nobody else can be using it) clean rollouts are written directly, without the per-append lock and fsync of the writer, which is much faster for big stores and gives identical bytes; the other shapes always go through the writer. `--no-fast` sends everything through the writer. A non-empty DIR is only ever appended to through the writer.',
    ].join('\n\n'),
    args: [
      {
        name: 'DIR',
        description: 'the directory to create or add to',
        required: true,
        variadic: false,
        complete: 'dir',
      },
    ],
    options: {
      rollouts: { flags: '--rollouts <n>', description: 'number of rollouts', parse: parsePositiveInt, required: true },
      calls: { flags: '--calls <n>', description: 'model calls per rollout', parse: parsePositiveInt, required: true },
      prompt: {
        flags: '--prompt <tokens>',
        description: 'tokens of the first prompt',
        default: 1000,
        parse: parsePositiveInt,
      },
      gen: { flags: '--gen <tokens>', description: 'tokens generated per call', default: 200, parse: parsePositiveInt },
      turn: {
        flags: '--turn <tokens>',
        description: "tokens each later prompt adds after the previous call's generation",
        default: 300,
        parse: parseNonNegativeInt,
      },
      delta: {
        flags: '--delta',
        description: 'store continuations as parent-relative prompt suffixes (prompt_is_delta)',
      },
      seed: {
        flags: '--seed <n>',
        description: 'seed of the token and log-prob generator',
        default: 1,
        parse: parseNonNegativeInt,
      },
      mix: {
        flags: '--mix',
        description:
          'add the shapes seen in practice (dangling intents, markers, retries, boundaries, frozen, retired, torn tails)',
      },
      prefix: {
        flags: '--prefix <text>',
        description: 'rollout id prefix (ids are the prefix and a zero-padded index)',
        default: 'r',
        parse: parseNonEmpty,
      },
      fast: {
        flags: '--no-fast',
        description: 'write every rollout through the locked, fsyncing writer, even into a new directory',
        default: true,
      },
    },
    examples: [
      {
        command: 'tokcap fixture /tmp/store --rollouts 200 --calls 12',
        description:
          'The 70 MB store of the build benchmark (first prompt 1,000 tokens, 200 generated per call, 300 more per turn).',
      },
      {
        command: 'tokcap fixture /tmp/mixed --rollouts 1000 --calls 6 --prompt 200 --mix --seed 7',
        description: 'A store with every shape seen in practice.',
      },
    ],
    idValidation: 'none',
    mutates: () => true,
    check: ({ options }) => {
      if (!/^[A-Za-z0-9._-]+$/.test(options.prefix))
        return `fixture: --prefix must be made of letters, digits, '.', '_' and '-'`;
      return undefined;
    },
  },

  completion: {
    name: 'completion',
    summary: 'Print a shell completion script',
    description: [
      'Prints a completion script for bash, zsh or fish. The script is a few lines that pass the words typed so far to `tokcap __complete`, which answers from the same option table as this help: commands, their options, the values of `--status`, `--sort` and `--format`, files for `--out` and `--ids-from`, directories for DIR and the rollout ids found in DIR (or in $TOKCAP_DIR). It calls the `tokcap` being completed, so a new version completes its own options without installing the script again.',
    ].join('\n\n'),
    args: [
      {
        name: 'SHELL',
        description: 'the shell to complete for',
        required: true,
        variadic: false,
        choices: SHELLS,
        complete: 'none',
      },
    ],
    options: {},
    examples: [
      {
        command: 'tokcap completion bash > ~/.local/share/bash-completion/completions/tokcap',
        description: 'Install for bash.',
      },
      {
        command: 'tokcap completion zsh > "${fpath[1]}/_tokcap"',
        description: 'Install for zsh (any directory on $fpath).',
      },
      { command: 'tokcap completion fish > ~/.config/fish/completions/tokcap.fish', description: 'Install for fish.' },
    ],
    idValidation: 'none',
    mutates: () => false,
  },
};

/** All specs of a command: its own options, then the global ones. */
export function commandOptionEntries(name: CommandName): [string, OptionSpec<unknown>][] {
  return [
    ...(Object.entries(COMMANDS[name].options) as [string, OptionSpec<unknown>][]),
    ...(Object.entries(GLOBAL_OPTIONS) as [string, OptionSpec<unknown>][]),
  ];
}
