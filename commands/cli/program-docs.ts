/**
 * The program-level part of the option table (./options.ts): what `tokcap --help`, tokcap(1) and
 * the README's tables say of the program, its exit codes and its environment.
 */
import {
  EARLY_WORKER_MIN_BYTES,
  EARLY_WORKER_MIN_ROLLOUT_BYTES,
  MAX_THREADS,
  SUMMARY_WORKER_MIN_ROLLOUTS,
  WORKER_MIN_BYTES,
} from '../../src/threads/job-workers.js';
import type { Example } from './option-types.js';

/** Program-level documentation (tokcap(1), `tokcap --help`). */
export const PROGRAM = {
  name: 'tokcap',
  summary: 'inspect, verify, freeze, build and sweep NeMo Gym token-capture directories',
  description: [
    'tokcap works on the token-capture directories written by NeMo Gym model servers, interoperating byte for byte and lock for lock with the Python store: it inspects and verifies them, freezes and builds trajectories the way the reference consumer does, exports them for training, and retires, deletes and sweeps what has been consumed.',
    'DIR is the capture directory; when it is omitted, $TOKCAP_DIR is used. Rollout ids are validated as a whole batch before anything is read or changed. Commands that change a store never act on every rollout implicitly.',
  ].join('\n\n'),
  examples: [
    { command: 'tokcap inspect /data/captures', description: 'What is in a capture directory.' },
    { command: 'tokcap verify-digests /data/captures --json', description: 'Check it, machine-readable.' },
    {
      command: 'tokcap build /data/captures --freeze --all --model qwen3-8b --json > built.json',
      description: 'Freeze and build a finished run.',
    },
    {
      command: 'tokcap sweep /data/captures --older-than 7d',
      description: 'Clean up fences retired more than a week ago.',
    },
  ] as readonly Example[],
} as const;

export const EXIT_CODES: readonly { code: number; short: string; meaning: string }[] = [
  {
    code: 0,
    short: 'success: did what was asked, found nothing wrong',
    meaning: 'the command did what was asked and found nothing wrong',
  },
  {
    code: 1,
    short: 'negative outcome: findings, a drop refused, a masked rollout, an interrupted retire',
    meaning:
      'the command ran and reports a negative outcome: verify-digests found an error (or a warning with --strict); a conditional drop returned false; build --fail-on-mask found a masked rollout; sweep found an interrupted retire (a retired rollout whose records are still there)',
  },
  {
    code: 2,
    short: 'usage error: nothing was read or changed',
    meaning: 'usage: unknown option, missing argument, invalid rollout id, bad duration; nothing was read or changed',
  },
  {
    code: 3,
    short: 'the store could not be processed',
    meaning:
      'the store could not be processed: unreadable or corrupt file, conflicting payloads, a write refused because the rollout is frozen or retired, lock timeout, I/O error',
  },
];

export const EXIT_CODES_NOTE =
  'When several rollouts are processed and outcomes differ, the highest code wins; every rollout is still processed and reported.';

/** The worker thresholds of src/threads/job-workers.ts as --help and the man pages say them. */
const MB = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
const KB = (bytes: number) => `${Math.round(bytes / 2 ** 10)} KB`;
// Digits grouped by hand: this text is built when any command loads, and the first
// toLocaleString loads ICU's locale data (~10 ms of every command's start).
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const WORKER_SIZES =
  `about ${MB(WORKER_MIN_BYTES)} of JSONL; for verify-digests, whose worker starts with the command, ` +
  `about ${MB(EARLY_WORKER_MIN_BYTES)} in rollouts of ${KB(EARLY_WORKER_MIN_ROLLOUT_BYTES)} or more; ` +
  `for inspect, ${grouped(SUMMARY_WORKER_MIN_ROLLOUTS)} rollouts, or ${MB(WORKER_MIN_BYTES)} of JSONL with --deep; for watch, one worker, always`;

export const ENVIRONMENT: readonly { name: string; description: string }[] = [
  { name: 'TOKCAP_DIR', description: 'the capture directory used when DIR is omitted' },
  { name: 'NO_COLOR', description: 'when set to a non-empty value, no colour (as --no-color) unless --color=always' },
  {
    name: 'FORCE_COLOR',
    description:
      'when set (not 0 or false), colour even when stdout is not a terminal (for less -R), unless NO_COLOR or --color=never; 2 and 3 choose 256 colours and true colour',
  },
  {
    name: 'TOKCAP_SHARDS',
    description:
      'N for `--shard auto` in a Kubernetes Indexed Job (K is JOB_COMPLETION_INDEX); in a Slurm job array, K and N come from SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT',
  },
  {
    name: 'TOKCAP_DEBUG',
    description:
      'when set to 1, errors also print their stack trace, and jobs that can use worker threads say how many they started',
  },
  {
    name: 'TOKCAP_TRACE',
    description:
      'a file name: the live view of `watch` writes there when each stage of its start and load happened (milliseconds since the process started), for timing it',
  },
  {
    name: 'TOKCAP_WORKERS',
    description: `threads to use for work across rollouts (inspect, verify-digests, build, export, watch), a positive whole number; by default one per core up to ${MAX_THREADS}, for jobs large enough to pay for a worker thread (${WORKER_SIZES}); 1 keeps everything in one thread, which uses less memory; 2 or more starts workers whatever the size (at most ${MAX_THREADS} threads; watch, one worker); any other value is the default`,
  },
];
