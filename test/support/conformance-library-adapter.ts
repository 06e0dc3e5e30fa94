import { TokcapError } from '../../src/errors.js';
import {
  buildRollout,
  deleteRollouts,
  directoryFacts,
  dropRollout,
  freezeRollout,
  snapshotSummary,
  retireRollouts,
  sweepRetired,
  verifyDirectory,
  type StoreOptions,
} from '../../src/index.js';
import type { ConformanceAdapter, StepOutcome } from './conformance-runner.js';

const asOutcome = async (fn: () => Promise<unknown>): Promise<StepOutcome> => {
  try {
    return { result: await fn() };
  } catch (e) {
    if (e instanceof TokcapError) return { error: { kind: e.kind, message: e.message } };
    throw e;
  }
};

const store = (dir: string): StoreOptions => ({ dir, lockWaitMs: 2000 });

/** The library, driven directly: one call per conformance op. */
export const library: ConformanceAdapter = {
  facts: (dir) =>
    asOutcome(async () => {
      const f = await directoryFacts(store(dir), { deep: true });
      return { rollouts: Object.fromEntries(f.rollouts), invalid_names: f.invalidNames };
    }),
  verify: (dir) =>
    asOutcome(async () => {
      const v = await verifyDirectory(store(dir));
      return { ok: v.ok, findings: v.findings };
    }),
  freeze: (dir, id) => asOutcome(async () => snapshotSummary(await freezeRollout(store(dir), id))),
  build: (dir, id, model) => asOutcome(() => buildRollout(store(dir), id, { model, freeze: true })),
  drop: (dir, id, sid, version) => asOutcome(() => dropRollout(store(dir), id, sid, version)),
  retire: (dir, ids) =>
    asOutcome(async () => {
      const r = await retireRollouts(store(dir), ids);
      return { removed: r.removed, absent: r.absent };
    }),
  delete: (dir, ids) =>
    asOutcome(async () => {
      const r = await deleteRollouts(store(dir), ids);
      return { removed: r.removed, absent: r.absent };
    }),
  sweep: (dir, olderThanSeconds) =>
    asOutcome(async () => (await sweepRetired(store(dir), { olderThanSeconds })).removed.length),
};
