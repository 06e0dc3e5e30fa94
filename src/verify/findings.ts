import { compareCodePoints } from '../json/canonical-json.js';

/** The finding codes of docs/conformance.md#verify-findings, with their severities. */
export const FINDING_SEVERITY = {
  state_unreadable: 'error',
  index_past_end: 'error',
  malformed_line: 'error',
  torn_tail: 'warning',
  invalid_entry: 'error',
  rollout_id_mismatch: 'error',
  duplicate_identical: 'warning',
  conflicting_payload: 'error',
  entry_digest_mismatch: 'error',
  entry_not_indexed: 'error',
  index_orphan: 'error',
  unindexed_tail: 'warning',
  token_digest_mismatch: 'error',
  cum_len_mismatch: 'error',
  delta_unreconstructable: 'error',
  delta_digest_mismatch: 'error',
  parent_missing: 'warning',
  parent_link_mismatch: 'error',
  missing_digest: 'warning',
} as const;

export type FindingCode = keyof typeof FINDING_SEVERITY;
export type Severity = 'error' | 'warning';

export interface Finding {
  rollout_id: string;
  code: FindingCode;
  severity: Severity;
  call_id?: string;
  line?: number;
  parent_call_id?: string;
  message: string;
}

export function finding(
  rolloutId: string,
  code: FindingCode,
  message: string,
  fields: { call_id?: string; line?: number; parent_call_id?: string } = {},
): Finding {
  const f = { rollout_id: rolloutId, code, severity: FINDING_SEVERITY[code] } as Finding;
  if (fields.call_id !== undefined) f.call_id = fields.call_id;
  if (fields.line !== undefined) f.line = fields.line;
  if (fields.parent_call_id !== undefined) f.parent_call_id = fields.parent_call_id;
  f.message = message;
  return f;
}

/** Sorted by (rollout_id, line or 0, code, call_id or "", parent_call_id or ""), code points. */
export function compareFindings(a: Finding, b: Finding): number {
  return (
    compareCodePoints(a.rollout_id, b.rollout_id) ||
    (a.line ?? 0) - (b.line ?? 0) ||
    compareCodePoints(a.code, b.code) ||
    compareCodePoints(a.call_id ?? '', b.call_id ?? '') ||
    compareCodePoints(a.parent_call_id ?? '', b.parent_call_id ?? '')
  );
}
