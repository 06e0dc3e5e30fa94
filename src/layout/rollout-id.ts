import { TokcapError } from '../errors.js';
import { pyRepr } from './py-repr.js';

/** docs/format.md#rollout-ids: non-empty, ASCII letters, digits, `.`, `_`, `-`. No length limit. */
const VALID_ID = /^[A-Za-z0-9._-]+$/;

export function isValidRolloutId(id: string): boolean {
  return VALID_ID.test(id);
}

export function invalidRolloutIdError(id: string): TokcapError {
  return new TokcapError('invalid_rollout_id', `Invalid rollout id: ${pyRepr(id)}`, {
    rolloutId: id,
    pyClass: 'ValueError',
  });
}

export function assertValidRolloutId(id: string): void {
  if (!isValidRolloutId(id)) throw invalidRolloutIdError(id);
}

/**
 * Validates a whole batch before anything is touched (docs/format.md#retire step 0): the first invalid
 * id fails the batch. Returns the ids with duplicates dropped, first occurrences kept in order.
 */
export function validateRolloutIdBatch(ids: readonly string[]): string[] {
  for (const id of ids) assertValidRolloutId(id);
  return dedupeIds(ids);
}

export function dedupeIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}
