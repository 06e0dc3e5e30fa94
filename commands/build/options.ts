/**
 * `tokcap build` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, IDS_ARG, checkAll, idsFrom, shard, tokenizer, allowEmpty } from '../cli/common-options.js';
import type { CommandSpec } from '../cli/option-types.js';

export const BUILD_COMMAND: CommandSpec<'build'> = {
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
};
