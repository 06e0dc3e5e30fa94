/**
 * `status` and `conditions` on every jsonl line (docs/cli.md#status): the rollout-status model's
 * answer (src/status), read in the main thread just before the line is written and added at its
 * end, after `mask_causes`. The line itself was serialised where it was built (maybe a worker
 * thread), so the two members are spliced into its bytes rather than the record re-serialised.
 */
import { orderedJson } from '../json/canonical-json.js';
import type { StoreOptions } from '../ops/store.js';
import { statusAfterBuild, statusMembers } from '../rollout-read/result-status.js';
import type { VerdictAnswer } from '../status/verdict.js';
import { applyFieldSelection, type FieldSelection } from './fields.js';

const CLOSE = 0x7d; // '}'
const LF = 0x0a;

/**
 * `line` (one compact object and its LF) with the rollout's status members added at its end.
 * `verdict`: the build's (src/status/verdict.ts); when the build could not read the rollout,
 * the status is read without a second wait for its lock (`statusAfterBuild`).
 */
export async function lineWithStatus(
  store: StoreOptions,
  rolloutId: string,
  line: Uint8Array,
  fields: FieldSelection,
  verdict: VerdictAnswer,
): Promise<Uint8Array> {
  const status = await statusAfterBuild(store, rolloutId, verdict);
  const members = orderedJson(applyFieldSelection({ ...statusMembers(status, verdict) }, fields)).slice(1, -1);
  if (members === '') return line;
  const n = line.length;
  if (n < 3 || line[n - 1] !== LF || line[n - 2] !== CLOSE)
    throw new Error('internal: a jsonl line must end with "}\\n"');
  return Buffer.concat([line.subarray(0, n - 2), Buffer.from(`,${members}}\n`, 'utf8')]);
}
