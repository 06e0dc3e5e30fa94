import { orderedJson } from '../json/canonical-json.js';
import { round4 } from '../json/round4.js';
import { JsonFloat } from '../json/value.js';
import type { ExportBuild } from './build-for-export.js';
import type { ExportedRollout } from './exported-rollout.js';
import { exportedCauses } from './exported-causes.js';
import { NO_TOKEN_RECORDS } from '../chains/consumer-result.js';
import { compareNatural } from '../layout/natural-order.js';

/**
 * The `tinker` export: a training-run directory in the layout of tinker-cookbook's
 * TrainingRunStore, so its readers can open it.
 *
 *     OUT/
 *       config.json                                what was exported, from where, when, by which tokcap
 *       metrics.jsonl                              one record: step 0 and tokcap/… build metrics
 *       iteration_000000/
 *         train_rollout_summaries.jsonl            one record per exported rollout
 *
 * JSON files are written with a 2-space indent (Python's `json.dump(indent=2)` layout), JSONL
 * with one compact object per line, iteration directories as `iteration_%06d`. Everything an
 * export holds is iteration 0: a capture directory has no notion of training iterations.
 */

/** The split every exported trajectory belongs to (`<split>_rollout_summaries.jsonl`). */
export const TINKER_SPLIT = 'train';
export const TINKER_ITERATION_DIR = 'iteration_000000';
export const TINKER_ROLLOUT_SUMMARIES = `${TINKER_SPLIT}_rollout_summaries.jsonl`;
export const TINKER_CONFIG = 'config.json';
export const TINKER_METRICS = 'metrics.jsonl';

/** `iteration_%06d`. */
export function iterationDirName(i: number): string {
  return `iteration_${String(i).padStart(6, '0')}`;
}

/** What `reward_source` says about rewards, which the capture store does not hold. */
export const REWARD_SOURCE_NOT_CAPTURED = 'not captured';

/** The cookbook writer's record schema these records follow (`schema_version`). */
export const TINKER_SCHEMA_VERSION = 1;
/**
 * The group a rollout belongs to. NeMo Gym style ids `<task>-r<repeat>` and
 * `<task>-r<repeat>-a<attempt>` (e.g. `t12-r3`, `t12-r3-a1`) group by `<task>`: the repeats of a
 * task are the trajectories of one group, as in GRPO-style sampling. Any other id is a group of
 * its own.
 */
export function rolloutGroupKey(rolloutId: string): string {
  const m = /^(.+)-r\d+(?:-a\d+)?$/.exec(rolloutId);
  return m ? m[1] : rolloutId;
}

/**
 * The order a tinker export writes rollouts in: natural order of ids, so the repeats of a task
 * get `traj_idx` in repeat order (`t1-r2` before `t1-r10`), as the sampler numbered them.
 */
export function tinkerRolloutOrder(ids: readonly string[]): string[] {
  return [...ids].sort(compareNatural);
}

/**
 * Assigns `group_idx` and `traj_idx` to exported rollouts, in export order: a group gets the next
 * index the first time one of its rollouts is exported; `traj_idx` counts the group's exported
 * rollouts. Indices are dense (no gaps even when --trainable-only leaves rollouts out). Holds
 * one small counter per group.
 */
export class GroupIndexer {
  private readonly groups = new Map<string, { index: number; next: number }>();

  assign(rolloutId: string): { group_idx: number; traj_idx: number } {
    const key = rolloutGroupKey(rolloutId);
    let g = this.groups.get(key);
    if (!g) this.groups.set(key, (g = { index: this.groups.size, next: 0 }));
    return { group_idx: g.index, traj_idx: g.next++ };
  }

  get groupCount(): number {
    return this.groups.size;
  }
}

const ZERO = () => new JsonFloat(0);

/** The consumer's numeric metrics copied into `trajectory_metrics` (when the result has them). */
const CONSUMER_METRICS = [
  'n_calls',
  'chains',
  'roots',
  'quarantined_calls',
  'quarantined_fraction',
  'delivered_fraction',
  'generated_tokens_captured',
  'generated_tokens_delivered',
  'unresolved_parent_calls',
  'empty_generation_calls',
] as const;

/**
 * `error_type` and `error_message` of a failed build: the reference's error string is
 * `<PythonClass>: <message>`, except `capture contains no token records`, which names no class
 * (its type is then the mask cause's code, `no_records`).
 */
export function tinkerError(error: string): { error_type: string; error_message: string } {
  const m = /^([A-Za-z_][A-Za-z0-9_.]*): ([\s\S]*)$/.exec(error);
  if (m) return { error_type: m[1], error_message: m[2] };
  return { error_type: error === NO_TOKEN_RECORDS ? 'no_records' : 'build_error', error_message: error };
}

/**
 * One `train_rollout_summaries.jsonl` record: the keys of tinker-cookbook's writer
 * (`serialize_rollout_summaries`) in its order and types, then the newer schema's `status`
 * (`error_type`, `error_message` for a failed build), then tokcap's own facts as extra top-level
 * keys (never as metrics, which readers average): `rollout_id`, `reward_source`, `mask_causes`.
 * See docs/export.md for the mapping.
 */
export function tinkerRolloutSummary(
  build: ExportBuild,
  index: { group_idx: number; traj_idx: number },
): Record<string, unknown> {
  const { result } = build;
  const m = result.metrics as Record<string, unknown>;
  const failed = 'error' in result;
  const trajectoryMetrics: Record<string, unknown> = {
    masked: result.mask_sample ? 1 : 0,
    build_failed: failed ? 1 : 0,
    capture_incomplete: m.capture_incomplete === true ? 1 : 0,
  };
  for (const key of CONSUMER_METRICS) {
    if (typeof m[key] === 'number' || m[key] instanceof JsonFloat) trajectoryMetrics[key] = m[key];
  }
  const last = build.steps.length - 1;
  const steps = build.steps.map((s, k) => ({
    step_idx: k,
    ob_len: s.promptTokens,
    ac_len: s.generatedTokens,
    reward: ZERO(),
    episode_done: k === last,
    metrics: {},
    logs: { call_id: s.callId },
  }));
  return {
    schema_version: TINKER_SCHEMA_VERSION,
    split: TINKER_SPLIT,
    iteration: 0,
    group_idx: index.group_idx,
    traj_idx: index.traj_idx,
    tags: [],
    // Which sampler weights produced the trajectory is not captured.
    sampling_client_step: null,
    total_reward: ZERO(),
    final_reward: ZERO(),
    trajectory_metrics: trajectoryMetrics,
    steps,
    // The observation after the last call is not captured; tinker reports an ended episode's
    // final observation as empty.
    final_ob_len: 0,
    ...(failed ? { status: 'error', ...tinkerError(result.error) } : { status: 'ok' }),
    rollout_id: result.rollout_id,
    reward_source: REWARD_SOURCE_NOT_CAPTURED,
    mask_causes: exportedCauses(build.causes),
  };
}

const GROUP_PLACEHOLDER = { group_idx: 0, traj_idx: 0 };
const HEAD = `{"schema_version":${TINKER_SCHEMA_VERSION},"split":${JSON.stringify(TINKER_SPLIT)},"iteration":0,`;
const GROUP_PREFIX = `${HEAD}"group_idx":0,"traj_idx":0,`;

/**
 * The text of `tinkerRolloutSummary(build, …)` after its group fields, which only the writer
 * can assign (in output order, kept rollouts only): see `tinkerSummaryLine`.
 */
export function tinkerSummaryTail(build: ExportBuild): string {
  const text = orderedJson(tinkerRolloutSummary(build, GROUP_PLACEHOLDER));
  if (!text.startsWith(GROUP_PREFIX))
    throw new Error('internal: a tinker summary must start with its head and group fields');
  return text.slice(GROUP_PREFIX.length);
}

/** `orderedJson(tinkerRolloutSummary(build, index))` from `tinkerSummaryTail(build)`. */
export function tinkerSummaryLine(tail: string, index: { group_idx: number; traj_idx: number }): string {
  return `${HEAD}"group_idx":${index.group_idx},"traj_idx":${index.traj_idx},${tail}`;
}

/** Running totals behind `metrics.jsonl` (and the export summary). */
export class ExportTotals {
  rollouts = 0;
  exported = 0;
  trainable = 0;
  masked = 0;
  failed = 0;
  errors = 0;
  generatedTokensCaptured = 0;
  generatedTokensDelivered = 0;

  add(r: ExportedRollout, exported: boolean): void {
    this.rollouts += 1;
    if (exported) this.exported += 1;
    if (r.maskSample) this.masked += 1;
    else this.trainable += 1;
    if (r.failed) this.failed += 1;
    if (r.error) this.errors += 1;
    this.generatedTokensCaptured += r.generatedTokensCaptured;
    this.generatedTokensDelivered += r.generatedTokensDelivered;
  }

  /** A rollout that could not be read and was left out (neither trainable nor masked). */
  addUnavailable(): void {
    this.rollouts += 1;
    this.errors += 1;
  }

  get maskedFraction(): number {
    return this.rollouts === 0 ? 0 : round4(this.masked / this.rollouts);
  }

  get deliveredFraction(): number {
    return this.generatedTokensCaptured === 0
      ? 0
      : round4(this.generatedTokensDelivered / this.generatedTokensCaptured);
  }
}

/** The namespace of tokcap's keys in `metrics.jsonl` (the cookbook's are `env/…`, `progress/…`). */
export const TINKER_METRICS_NAMESPACE = 'tokcap/';

/**
 * The one `metrics.jsonl` record: `step` (the iteration, 0) and directory-level build metrics
 * over every rollout built, as `tokcap/…` numeric keys.
 */
export function tinkerMetricsRecord(t: ExportTotals): Record<string, unknown> {
  const values: Record<string, number | JsonFloat> = {
    rollouts: t.rollouts,
    exported: t.exported,
    trainable: t.trainable,
    masked: t.masked,
    failed_builds: t.failed,
    masked_fraction: new JsonFloat(t.maskedFraction),
    delivered_fraction: new JsonFloat(t.deliveredFraction),
    generated_tokens_captured: t.generatedTokensCaptured,
    generated_tokens_delivered: t.generatedTokensDelivered,
  };
  const record: Record<string, unknown> = { step: 0 };
  for (const [key, value] of Object.entries(values)) record[`${TINKER_METRICS_NAMESPACE}${key}`] = value;
  return record;
}

export interface TinkerConfigInfo {
  version: string;
  createdAt: Date;
  sourceDir: string;
  /** Ids as selected (undefined: every rollout of the directory). */
  ids?: readonly string[];
  freeze: boolean;
  trainableOnly: boolean;
  model: string;
  totals: ExportTotals;
  groups: number;
}

/**
 * `config.json`: the keys tools look up in a training config (`model_name`, `training_type`),
 * then what was exported, from where, when, with which tokcap.
 */
export function tinkerConfig(info: TinkerConfigInfo): Record<string, unknown> {
  return {
    model_name: info.model,
    // The records are rollout summaries of RL sampling, which is what the cookbook's RL runs write.
    training_type: 'rl',
    exporter: 'tokcap',
    tokcap_version: info.version,
    format: 'tinker',
    created_at: info.createdAt.toISOString(),
    source: {
      capture_dir: info.sourceDir,
      selection: info.ids === undefined ? 'all' : 'ids',
      ...(info.ids === undefined ? {} : { rollout_ids: [...info.ids] }),
      freeze: info.freeze,
      read_only: !info.freeze,
    },
    builder: 'prefix_merging',
    trainable_only: info.trainableOnly,
    rewards: 'not captured: total_reward, final_reward and step rewards are 0.0',
    iterations: 1,
    rollouts: info.totals.rollouts,
    exported: info.totals.exported,
    groups: info.groups,
  };
}

/**
 * Python's `json.dumps(value, indent=2)` layout (`", "` → `","` + newline, `": "` after keys,
 * `[]`/`{}` for empty containers), with the scalars written by the library's writer (so floats
 * keep the layout of the rest of tokcap's JSON: orjson's, which differs from Python's `json` only
 * in exponents, `1e-7` for `1e-07`). Non-ASCII stays UTF-8 (`ensure_ascii=False`).
 */
export function prettyJson(value: unknown, indent = 2, level = 0): string {
  const pad = (n: number) => ' '.repeat(n * indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const items = value.map((v) => pad(level + 1) + prettyJson(v, indent, level + 1));
    return `[\n${items.join(',\n')}\n${pad(level)}]`;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof JsonFloat)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    const items = entries.map(([k, v]) => `${pad(level + 1)}${orderedJson(k)}: ${prettyJson(v, indent, level + 1)}`);
    return `{\n${items.join(',\n')}\n${pad(level)}}`;
  }
  return orderedJson(value);
}
