/**
 * The status fields a rollout-level result carries (docs/cli.md#status): build
 * results and export lines are serialised where they are built (often a worker thread), while
 * the status is read in the thread that holds the locks; this joins the two without parsing or
 * re-serialising the result.
 */
import type { ErrorKind } from '../errors.js';
import { invalidRolloutIdError, isValidRolloutId } from '../layout/rollout-id.js';
import { outputJsonBytes } from '../json/canonical-json.js';
import type { StoreOptions } from '../ops/store.js';
import { readRolloutStatus } from './read-status.js';
import { unavailableStatus, type RolloutStatusAnswer } from '../status/rollout-status.js';
import type { VerdictAnswer } from '../status/verdict.js';

/** The members added, in this order, after a result's own keys. */
export interface StatusMembers {
  status: RolloutStatusAnswer['status'];
  conditions: RolloutStatusAnswer['conditions'];
  verdict: VerdictAnswer['verdict'];
  /** The kind of the failure behind a failed build that tokcap met reading or freezing. */
  error_kind?: ErrorKind;
}

export function statusMembers(status: RolloutStatusAnswer, verdict: VerdictAnswer): StatusMembers {
  const m: StatusMembers = { status: status.status, conditions: [...status.conditions], verdict: verdict.verdict };
  if (verdict.error !== undefined) m.error_kind = verdict.error.kind;
  return m;
}

/**
 * A serialised JSON object (`{...}`, optionally followed by LF) with `members` appended as its
 * last keys, as parts to write one after the other: the result's own bytes are not copied (a
 * build result is hundreds of KB).
 */
export function appendMembers(output: Uint8Array, members: object): Uint8Array[] {
  const extra = outputJsonBytes(members);
  if (extra.length <= 2) return [output];
  let end = output.length;
  const lf = output[end - 1] === 0x0a;
  if (lf) end--;
  if (output[end - 1] !== 0x7d) throw new Error('internal: not a serialised JSON object');
  // `,"k":v...}` (or `"k":v...}` into an empty object) from the members' `{"k":v...}`.
  if (end > 2) extra[0] = 0x2c;
  const parts = [output.subarray(0, end - 1), end > 2 ? extra : extra.subarray(1)];
  if (lf) parts.push(LF);
  return parts;
}

const LF = Uint8Array.of(0x0a);

/**
 * The status of a rollout just built. When the build could not read it (lock timeout, I/O),
 * the summary's read is made with J's lines failing with the build's error (read-status.ts): the
 * whole read of a rollout never waits twice the lock wait, and a rollout whose status needs that
 * lock is `unavailable` with the same error.
 */
export async function statusAfterBuild(
  store: StoreOptions,
  rolloutId: string,
  verdict: VerdictAnswer,
): Promise<RolloutStatusAnswer> {
  // `build` takes invalid ids as failed builds (docs/cli.md#invocation): there is no rollout to read.
  if (!isValidRolloutId(rolloutId)) return unavailableStatus(invalidRolloutIdError(rolloutId));
  const recordsError = verdict.verdict === 'unavailable' ? verdict.error : undefined;
  return (await readRolloutStatus(store, rolloutId, { recordsError })).status;
}
