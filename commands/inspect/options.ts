/**
 * `tokcap inspect` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, IDS_ARG, idsFrom, shard, tokenizer, allowEmpty } from '../cli/common-options.js';
import { STATUS_FILTERS, SORT_KEYS, parsePositiveInt, type CommandSpec } from '../cli/option-types.js';

export const INSPECT_COMMAND: CommandSpec<'inspect'> = {
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
      description: 'read every line instead of trusting the state index for counts (slower; "entries_source": "scan")',
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
};
