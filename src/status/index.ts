export {
  ROLLOUT_STATUSES,
  CONDITIONS,
  rolloutStatus,
  unavailableStatus,
  isUnavailableKind,
  type RolloutStatus,
  type Condition,
  type RolloutStatusAnswer,
} from './rollout-status.js';
export { VERDICTS, verdictOf, unavailableVerdict, type Verdict, type VerdictAnswer } from './verdict.js';
export {
  emptySummary,
  countRollout,
  summarise,
  summaryJson,
  type StatusSummary,
  type StatusSummaryJson,
} from './summary.js';
