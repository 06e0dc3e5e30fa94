/**
 * The common part of the option table (./options.ts): the global options every command takes,
 * the options commander handles itself, and the options and arguments several commands share
 * (DIR, ID, --ids-from, --shard, --tokenizer, --allow-empty), each declared once here.
 */
import { DEFAULT_LOCK_WAIT_MS } from '../../src/ops/store.js';
import { formatDuration, parseDuration } from './duration.js';
import { parseShardOption, type ShardOption } from './shard.js';
import { COLOR_WHEN, type ArgSpec, type GlobalOptions, type OptionSpec, type OptionTable } from './option-types.js';

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

export const idsFrom: OptionSpec<string | undefined> = {
  flags: '--ids-from <file>',
  description:
    'read more rollout ids from a file, one per line (`-`: standard input); blank lines and lines starting with # are ignored',
  complete: 'file',
};

export const shard: OptionSpec<ShardOption | undefined> = {
  flags: '--shard <K/N|auto>',
  description:
    'cover only shard K of N (0 <= K < N): the rollouts whose id hashes to K (SHA-256, first 8 bytes big-endian, mod N), the same on every machine; given ids are filtered the same way, so every task of a job array can share one --ids-from list; `auto` takes K and N from a Slurm job array (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, TOKCAP_SHARDS)',
  parse: parseShardOption,
};

export const tokenizer: OptionSpec<string | undefined> = {
  flags: '--tokenizer <path>',
  description:
    "decode token ids with this tokenizer.json or Hugging Face model directory (`none`: ids only); by default $TOKCAP_TOKENIZER, else the records' model found in the local Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub); never downloaded",
  complete: 'file',
};

export const allowEmpty: OptionSpec<boolean> = {
  flags: '--allow-empty',
  description:
    'a DIR without any capture file, or a selection without any rollout (--ids-from of no ids, an empty --shard), is an answer (exit 0), not an error (by default: exit 3, `tokcap: DIR: no capture files` or `tokcap: DIR: no rollouts selected`, since it is usually a mistyped DIR or id list)',
};

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

export const DIR_ARG: ArgSpec = {
  name: 'DIR',
  description: 'the capture directory (default: $TOKCAP_DIR)',
  required: false,
  variadic: false,
  complete: 'dir',
};

export const IDS_ARG: ArgSpec = {
  name: 'ID',
  description: 'rollout ids (put ids that start with - after --); duplicates are dropped, order is kept',
  required: false,
  variadic: true,
  complete: 'rollout-id',
};

export const NO_SELECTION_HINT = 'it never acts on every rollout implicitly';

/** Shared usage checks for `--all` (freeze and the --freeze forms). */
export function checkAll(name: string, o: { all: boolean; freeze?: boolean }, idsGiven: boolean): string | undefined {
  if (o.all && idsGiven) return `${name}: --all cannot be combined with rollout ids or --ids-from`;
  return undefined;
}
