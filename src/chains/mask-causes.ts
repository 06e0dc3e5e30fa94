import type { ChainBuild } from './chain-builder.js';
import { NO_TOKEN_RECORDS, type ConsumerResult } from './consumer-result.js';

/**
 * Why a build result is masked, in the reference consumer's vocabulary (docs/format.md#mask-causes,
 * docs/conformance.md#build), naming the calls involved. Derived from the result itself plus,
 * when available, the chain view (for per-call boundary reasons) and the snapshot's dangling
 * intents. Shared by `build`'s human output, `watch` and `export`.
 */
export type MaskCauseCode =
  | 'no_records'
  | 'build_error'
  | 'capture_incomplete'
  | 'dangling_intents'
  | 'unresolved_retries'
  | 'unresolved_parent_calls'
  | 'roots_not_one'
  | 'chains_not_one'
  | 'empty_delivery';

export interface MaskCause {
  code: MaskCauseCode;
  /** One line a person can act on. */
  message: string;
  /** Calls involved, when the cause names calls. */
  calls?: string[];
}

export interface MaskContext {
  /** Intents without an entry (they make the snapshot incomplete). */
  danglingIntents?: readonly string[];
  /** Calls marked incomplete in the marker file ("" = an unobserved path). */
  incompleteMarkers?: readonly string[];
  /** The state's `incomplete` flag. */
  incompleteFlag?: boolean;
  chains?: ChainBuild | null;
}

const REASON_TEXT: Record<string, string> = {
  parent_unresolved: 'the request-time resolver found no parent (parent_unresolved)',
  parent_digest_mismatch: "the prompt does not extend the parent's tokens (parent_digest_mismatch)",
  parent_call_id_missing:
    'the claimed parent is not in the snapshot and no unique prefix matches (parent_call_id_missing)',
  missing_resolution: 'the record carries no parent decision (missing_resolution)',
  resolved_parent_missing_id: 'resolved without a parent id (resolved_parent_missing_id)',
  duplicate_call_id_conflict: 'the same call id was captured twice with different tokens (duplicate_call_id_conflict)',
  delta_chain_unreconstructable: 'its delta prompt cannot be rebuilt from its parents (delta_chain_unreconstructable)',
};

export function describeReason(reason: string): string {
  return REASON_TEXT[reason] ?? reason;
}

export function maskCauses(result: ConsumerResult, context: MaskContext = {}): MaskCause[] {
  const causes: MaskCause[] = [];
  if (!result.mask_sample) return causes;
  if (result.rebuilt_response === null && 'error' in result) {
    if (result.error === NO_TOKEN_RECORDS) {
      causes.push({ code: 'no_records', message: 'the capture contains no token records' });
    } else {
      causes.push({ code: 'build_error', message: `the build failed: ${result.error}` });
    }
  }
  const metrics = result.metrics as Record<string, unknown>;
  if (metrics.capture_incomplete === true) {
    const dangling = [...(context.danglingIntents ?? [])];
    const markers = [...(context.incompleteMarkers ?? [])];
    if (dangling.length > 0) {
      causes.push({
        code: 'dangling_intents',
        message: `${dangling.length} call(s) were dispatched but never captured (intent without entry): ${dangling.map(show).join(', ')}`,
        calls: dangling,
      });
    }
    if (context.incompleteFlag !== false || dangling.length === 0) {
      const detail = markers.length > 0 ? `; marked calls: ${markers.map(show).join(', ')}` : '';
      causes.push({
        code: 'capture_incomplete',
        message: `the capture is marked incomplete (a call was lost or a payload conflicted)${detail}`,
        calls: markers.length > 0 ? markers : undefined,
      });
    }
  }
  if (result.rebuilt_response === null) return causes;
  const ok = result;
  if (ok.unresolved_retries.length > 0) {
    causes.push({
      code: 'unresolved_retries',
      message: `retried calls with no later call to tell which attempt was kept: ${ok.unresolved_retries.map(show).join(', ')}`,
      calls: [...ok.unresolved_retries],
    });
  }
  if (ok.unresolved_parent_calls.length > 0) {
    const byId = new Map((context.chains?.calls ?? []).map((c) => [c.id, c]));
    const parts = ok.unresolved_parent_calls.map((id) => {
      const reason = byId.get(id)?.reason;
      return reason ? `${show(id)}: ${describeReason(reason)}` : show(id);
    });
    causes.push({
      code: 'unresolved_parent_calls',
      message: `unresolved parent boundaries: ${parts.join('; ')}`,
      calls: [...ok.unresolved_parent_calls],
    });
  }
  if (ok.metrics.roots !== 1) {
    causes.push({
      code: 'roots_not_one',
      message: `${ok.metrics.roots} roots (a trainable capture has exactly 1; a retried first call counts twice)`,
    });
  }
  if (ok.metrics.chains !== 1) {
    const names = context.chains?.chains.map((c) => `${c.name}: ${c.callIds.map(show).join(' → ')}`);
    causes.push({
      code: 'chains_not_one',
      message: `${ok.metrics.chains} chains (a trainable capture has exactly 1)${names && names.length ? ` — ${names.join('; ')}` : ''}`,
    });
  }
  const delivered = ok.rebuilt_response.output.some(
    (item) => Array.isArray(item.generation_token_ids) && item.generation_token_ids.length > 0,
  );
  if (!delivered) causes.push({ code: 'empty_delivery', message: 'no output item carries generated tokens' });
  return causes;
}

function show(id: string): string {
  return id === '' ? '""' : id;
}
