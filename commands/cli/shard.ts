/**
 * `--shard K/N` and `--shard auto` (docs/cli.md#shards). The partition itself is the library's
 * (src/layout/shard.ts); here only the option's text and, for `auto`, the scheduler's
 * environment, which the library never reads.
 *
 * This module must stay cheap to load (the option table imports it): no node:crypto, no library code
 * beyond errors.
 */
import { TokcapError } from '../../src/errors.js';
import type { Shard } from '../../src/layout/shard.js';

export type ShardOption = Shard | 'auto';

/** Largest N; the same as the library's MAX_SHARDS (five-digit part file names). */
const MAX_SHARDS = 99_999;

/** Slurm job arrays: the task's id, the array's lowest id and its number of tasks. */
export const SLURM_SHARD_VARIABLES = ['SLURM_ARRAY_TASK_ID', 'SLURM_ARRAY_TASK_MIN', 'SLURM_ARRAY_TASK_COUNT'] as const;
/** Kubernetes Indexed Jobs: the pod's index; N is ours to give (the Job's `completions`). */
export const K8S_SHARD_VARIABLES = ['JOB_COMPLETION_INDEX', 'TOKCAP_SHARDS'] as const;

function usage(message: string): never {
  throw new TokcapError('usage', message);
}

function check(index: number, count: number, source?: string): Shard {
  const prefix = source === undefined ? '' : `${source}: `;
  if (count < 1 || count > MAX_SHARDS) usage(`${prefix}N must be from 1 to ${MAX_SHARDS}, got ${index}/${count}`);
  if (index >= count) usage(`${prefix}K must be less than N (0 <= K < N), got ${index}/${count}`);
  return { index, count };
}

const NATURAL = /^(0|[1-9][0-9]{0,8})$/;

/** `K/N` (0 ≤ K < N) or `auto`. */
export function parseShardOption(raw: string): ShardOption {
  if (raw === 'auto') return 'auto';
  const m = /^([0-9]+)\/([0-9]+)$/.exec(raw);
  if (!m || !NATURAL.test(m[1]) || !NATURAL.test(m[2]))
    usage(`expected K/N (e.g. 3/16, with 0 <= K < N) or 'auto', got '${raw}'`);
  return check(Number(m[1]), Number(m[2]));
}

function envInt(env: NodeJS.ProcessEnv, name: string): number {
  const raw = env[name]?.trim() ?? '';
  if (!NATURAL.test(raw)) usage(`--shard auto: ${name} must be a non-negative integer, got '${env[name] ?? ''}'`);
  return Number(raw);
}

function present(env: NodeJS.ProcessEnv, name: string): boolean {
  return env[name] !== undefined && env[name] !== '';
}

/**
 * K and N for `--shard auto`: a Slurm job array (K = SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN,
 * N = SLURM_ARRAY_TASK_COUNT), else a Kubernetes Indexed Job (K = JOB_COMPLETION_INDEX,
 * N = TOKCAP_SHARDS). With neither: a usage error naming the variables. An array with a step
 * (`--array=0-15:2`) does not number its tasks 0..N-1: refused, since shards would be missed.
 */
export function resolveShard(option: ShardOption | undefined, env: NodeJS.ProcessEnv): Shard | undefined {
  if (option === undefined || option !== 'auto') return option;
  if (present(env, 'SLURM_ARRAY_TASK_ID')) {
    const id = envInt(env, 'SLURM_ARRAY_TASK_ID');
    const min = envInt(env, 'SLURM_ARRAY_TASK_MIN');
    const count = envInt(env, 'SLURM_ARRAY_TASK_COUNT');
    const max = present(env, 'SLURM_ARRAY_TASK_MAX') ? envInt(env, 'SLURM_ARRAY_TASK_MAX') : undefined;
    if (max !== undefined && max - min + 1 !== count) {
      usage(
        `--shard auto: the Slurm array ${min}-${max} has ${count} tasks, not ${max - min + 1}: use a contiguous array without a step (--array=0-${count - 1})`,
      );
    }
    if (id < min) usage(`--shard auto: SLURM_ARRAY_TASK_ID (${id}) is below SLURM_ARRAY_TASK_MIN (${min})`);
    return check(id - min, count, '--shard auto (Slurm)');
  }
  if (present(env, 'JOB_COMPLETION_INDEX')) {
    if (!present(env, 'TOKCAP_SHARDS'))
      usage(
        "--shard auto: JOB_COMPLETION_INDEX is set but TOKCAP_SHARDS is not: set TOKCAP_SHARDS to the Job's completions",
      );
    return check(envInt(env, 'JOB_COMPLETION_INDEX'), envInt(env, 'TOKCAP_SHARDS'), '--shard auto (Kubernetes)');
  }
  return usage(
    `--shard auto: not in a job array: set ${SLURM_SHARD_VARIABLES.join(', ')} (Slurm) or ${K8S_SHARD_VARIABLES.join(' and ')} (Kubernetes Indexed Job), or give --shard K/N`,
  );
}
