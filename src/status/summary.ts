/**
 * Summary counts of many rollouts, computed here once for every command (inspect, build,
 * watch, export): by status, by condition (conditions overlap, each is counted) and, when
 * builds were made, by verdict.
 */
import {
  CONDITIONS,
  ROLLOUT_STATUSES,
  type Condition,
  type RolloutStatus,
  type RolloutStatusAnswer,
} from './rollout-status.js';
import { VERDICTS, type Verdict, type VerdictAnswer } from './verdict.js';

export interface StatusSummary {
  rollouts: number;
  byStatus: Record<RolloutStatus, number>;
  byCondition: Record<Condition, number>;
  /** Counted only for rollouts given a verdict. */
  byVerdict: Record<Verdict, number>;
  /** Masked rollouts whose result is the failed-build dictionary ("could not be built"). */
  unbuilt: number;
  /** Rollouts given a verdict. */
  judged: number;
}

function zeros<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

export function emptySummary(): StatusSummary {
  return {
    rollouts: 0,
    byStatus: zeros(ROLLOUT_STATUSES),
    byCondition: zeros(CONDITIONS),
    byVerdict: zeros(VERDICTS),
    unbuilt: 0,
    judged: 0,
  };
}

/**
 * Adds one rollout (its verdict too, when it was built) to `summary`; `weight` -1 takes it out
 * again (a view that keeps counts up to date as rollouts change, src/watch/directory-model.ts).
 */
export function countRollout(
  summary: StatusSummary,
  status: { status: RolloutStatus; readonly conditions: readonly Condition[] },
  verdict?: Pick<VerdictAnswer, 'verdict' | 'unbuilt'>,
  weight: 1 | -1 = 1,
): void {
  summary.rollouts += weight;
  summary.byStatus[status.status] += weight;
  for (const c of status.conditions) summary.byCondition[c] += weight;
  if (!verdict) return;
  summary.judged += weight;
  summary.byVerdict[verdict.verdict] += weight;
  if (verdict.verdict === 'masked' && verdict.unbuilt) summary.unbuilt += weight;
}

/** The summary of many rollouts at once. */
export function summarise(rollouts: Iterable<{ status: RolloutStatusAnswer; verdict?: VerdictAnswer }>): StatusSummary {
  const s = emptySummary();
  for (const r of rollouts) countRollout(s, r.status, r.verdict);
  return s;
}

/** The summary as JSON (watch --once --json `totals`, export): snake_case, every key present. */
export interface StatusSummaryJson {
  rollouts: number;
  status: Record<RolloutStatus, number>;
  conditions: Record<Condition, number>;
  verdicts: Record<Verdict, number> & { could_not_be_built: number };
}

export function summaryJson(s: StatusSummary): StatusSummaryJson {
  return {
    rollouts: s.rollouts,
    status: { ...s.byStatus },
    conditions: { ...s.byCondition },
    verdicts: { ...s.byVerdict, could_not_be_built: s.unbuilt },
  };
}
