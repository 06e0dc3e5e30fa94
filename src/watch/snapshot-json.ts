/**
 * `tokcap watch DIR --once --json`: one JSON document of what the view shows, built from the
 * same directory model as the live view.
 *
 * {
 *   "dir": DIR,
 *   "totals": {"rollouts", "status": {...}, "conditions": {...}, "verdicts": {...},
 *              "invalid_names", "temp_state_files"}  (src/status/summary.ts `summaryJson`),
 *   "invalid_names": [...],
 *   "rollouts": {ID: {"status", "conditions", "verdict", "calls", "frozen", "retired",
 *                     "incomplete_flag", "incomplete_marker_calls", "dangling_intents",
 *                     "torn_tail", "version", "snapshot_id", "mtime_ms", "would_mask",
 *                     (the facts null when the rollout is unavailable; `version` null when
 *                     the state could not be parsed)
 *                     "mask_causes": [{"code", "message", "calls"?}], "build_error"?,
 *                     "error"?: {"kind", "message"}}}
 * }
 *
 * Rollouts are keyed by id in code-point order (as `inspect --json`). `status` and `conditions`
 * are the ones every command gives (src/status); `verdict` is `trainable`, `masked` or
 * `unavailable`, and `would_mask` is null when unavailable. Field names follow `inspect`'s facts.
 */
import type { Condition, RolloutStatus } from '../status/rollout-status.js';
import { summaryJson, type StatusSummaryJson } from '../status/summary.js';
import type { Verdict } from '../status/verdict.js';
import type { DirectorySnapshot } from './directory-model.js';
import type { RolloutRow } from './rows.js';

export interface WatchRolloutJson {
  status: RolloutStatus;
  conditions: Condition[];
  verdict: Verdict | null;
  calls: number | null;
  frozen: boolean | null;
  retired: boolean | null;
  incomplete_flag: boolean | null;
  incomplete_marker_calls: string[] | null;
  dangling_intents: string[] | null;
  torn_tail: boolean | null;
  version: number | null;
  snapshot_id: string | null;
  mtime_ms: number;
  would_mask: boolean | null;
  mask_causes: { code: string; message: string; calls?: string[] }[];
  build_error?: string;
  error?: { kind: string; message: string };
}

export interface WatchSnapshotJson {
  dir: string;
  totals: StatusSummaryJson & { invalid_names: number; temp_state_files: number };
  invalid_names: string[];
  rollouts: Record<string, WatchRolloutJson>;
}

export function rowJson(r: RolloutRow): WatchRolloutJson {
  // An unavailable rollout's facts were not read: null, never a made-up value (docs/cli.md#faults).
  const read = r.status !== 'unavailable';
  const known = <T>(v: T): T | null => (read ? v : null);
  const out: WatchRolloutJson = {
    status: r.status,
    conditions: [...r.conditions],
    verdict: r.verdict,
    calls: known(r.calls),
    frozen: known(r.frozen),
    retired: known(r.retired),
    incomplete_flag: known(r.incompleteFlag),
    incomplete_marker_calls: known([...r.incompleteMarkers]),
    dangling_intents: known([...r.danglingIntents]),
    torn_tail: known(r.tornTail),
    version: known(r.version),
    snapshot_id: known(r.snapshotId),
    mtime_ms: Math.round(r.mtimeMs),
    would_mask: r.wouldMask,
    mask_causes: r.causes.map((c) =>
      c.calls ? { code: c.code, message: c.message, calls: [...c.calls] } : { code: c.code, message: c.message },
    ),
  };
  // Optional keys are left out rather than set to undefined.
  if (r.buildError !== undefined) out.build_error = r.buildError;
  if (r.error) out.error = { kind: r.error.kind, message: r.error.message };
  return out;
}

export function watchSnapshotJson(s: DirectorySnapshot): WatchSnapshotJson {
  // Null prototype: `__proto__` is a valid rollout id.
  const rollouts = Object.create(null) as Record<string, WatchRolloutJson>;
  for (const r of rowsById(s)) rollouts[r.id] = rowJson(r);
  return { ...watchSnapshotHead(s), rollouts };
}

/** The members of the document before `rollouts` (which a writer may stream row by row). */
export function watchSnapshotHead(s: DirectorySnapshot): Omit<WatchSnapshotJson, 'rollouts'> {
  const t = s.totals;
  return {
    dir: s.dir,
    totals: {
      ...summaryJson(t.summary),
      rollouts: t.rollouts,
      invalid_names: t.invalidNames,
      temp_state_files: t.tempStateFiles,
    },
    invalid_names: [...s.invalidNames],
  };
}

/** The rows in the document's order: by id, in code-point order. */
export function rowsById(s: DirectorySnapshot): RolloutRow[] {
  return [...s.rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
