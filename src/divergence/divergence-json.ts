import type { TokenText } from '../tokenizer/token-text.js';
import type { Divergence } from './first-divergence.js';

/**
 * A divergence as `--json` gives it (docs/cli.md#divergences): snake_case members, the ids as
 * numbers, and the decoded text of both windows when a tokenizer decoded them (absent otherwise:
 * never an empty string for text that was not decoded).
 */
export interface DivergenceJson {
  call: string;
  kind: Divergence['kind'];
  reason: string | null;
  candidate_parent: string | null;
  shared_tokens: number;
  position: number | null;
  candidate_part: Divergence['candidatePart'];
  generated: WindowJson;
  rerendered: WindowJson;
  hunk: { start: number; generated: WindowIds; rerendered: WindowIds };
}

type WindowIds = Divergence['generated']['ids'];

interface WindowJson {
  start: number;
  ids: WindowIds;
  text?: string;
}

export function divergenceJson(d: Divergence, text?: TokenText | null): DivergenceJson {
  const window = (w: Divergence['generated']): WindowJson =>
    text ? { start: w.start, ids: w.ids, text: text.decode(w.ids) } : { start: w.start, ids: w.ids };
  return {
    call: d.callId,
    kind: d.kind,
    reason: d.reason,
    candidate_parent: d.candidateParentId,
    shared_tokens: d.sharedLength,
    position: d.position,
    candidate_part: d.candidatePart,
    generated: window(d.generated),
    rerendered: window(d.rerendered),
    hunk: { start: d.hunk.start, generated: d.hunk.generated, rerendered: d.hunk.rerendered },
  };
}
