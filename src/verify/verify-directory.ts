import { toTokcapError, type TokcapError } from '../errors.js';
import { scanDirectory } from '../layout/scan-directory.js';
import type { StoreOptions } from '../ops/store.js';
import { mapInOrder } from '../util/map-in-order.js';
import { compareFindings, type Finding } from './findings.js';
import { verifyRollout } from './verify-rollout.js';

export interface VerifyResult {
  ok: boolean;
  findings: Finding[];
  /** Rollouts that could not be verified at all (lock timeout, I/O error). */
  failed: { rolloutId: string; error: TokcapError }[];
  rollouts: number;
}

export interface VerifyOptions {
  ids?: readonly string[];
  onProgress?: (done: number, total: number) => void;
}

/** verify-digests over every rollout present (or the given ids), findings sorted as defined. */
export async function verifyDirectory(store: StoreOptions, options: VerifyOptions = {}): Promise<VerifyResult> {
  const listing = await scanDirectory(store.dir);
  const ids = options.ids ? options.ids.filter((id) => listing.rollouts.has(id)) : [...listing.rollouts.keys()].sort();
  const failed: VerifyResult['failed'] = [];
  let done = 0;
  const perRollout = await mapInOrder(ids, 8, async (id) => {
    try {
      return await verifyRollout(store, id);
    } catch (e) {
      failed.push({ rolloutId: id, error: toTokcapError(e, { rolloutId: id }) });
      return [];
    } finally {
      options.onProgress?.(++done, ids.length);
    }
  });
  const findings = perRollout.flat().sort(compareFindings);
  return { ok: !findings.some((f) => f.severity === 'error'), findings, failed, rollouts: ids.length };
}
