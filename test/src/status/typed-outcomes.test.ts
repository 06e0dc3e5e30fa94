/**
 * Operations say what happened and why, so that commands never re-read
 * state or parse messages to explain a result. A refused drop names its reason (read under the
 * drop's own lock); `freeze --all`'s tombstones are left out by the library.
 */
import { describe, expect, it } from 'vitest';
import { dropRolloutOutcome } from '../../../src/ops/drop.js';
import { freezableRollouts, freezeRollout } from '../../../src/ops/freeze.js';
import { retireRollouts } from '../../../src/ops/retire.js';
import { appendEntry } from '../../../src/ops/writer.js';
import { entry, useTempDirs } from '../../support/store.js';

const temp = useTempDirs('tokcap-typed-');

describe('typed outcomes', () => {
  it('a refused drop says why: absent, not frozen, snapshot differs, version differs', async () => {
    const dir = temp();
    const store = { dir };
    await appendEntry(store, entry('c1', { rollout: 'A' }));
    expect(await dropRolloutOutcome(store, 'nobody', 'x', 1)).toEqual({ dropped: false, reason: 'absent' });
    expect(await dropRolloutOutcome(store, 'A', 'x', 1)).toEqual({ dropped: false, reason: 'not_frozen' });
    const snap = await freezeRollout(store, 'A');
    expect(await dropRolloutOutcome(store, 'A', 'other', snap.version)).toEqual({
      dropped: false,
      reason: 'snapshot_differs',
      actual: snap.snapshotId,
    });
    expect(await dropRolloutOutcome(store, 'A', snap.snapshotId, snap.version + 1)).toEqual({
      dropped: false,
      reason: 'version_differs',
      actual: snap.version,
    });
    expect(await dropRolloutOutcome(store, 'A', snap.snapshotId, snap.version)).toEqual({ dropped: true });
  });

  it('freeze --all leaves retired tombstones out, in the library', async () => {
    const dir = temp();
    const store = { dir };
    await appendEntry(store, entry('c1', { rollout: 'A' }));
    await appendEntry(store, entry('c1', { rollout: 'B' }));
    await retireRollouts(store, ['B']);
    expect(await freezableRollouts(dir, ['A', 'B'])).toEqual({ freezable: ['A'], tombstones: ['B'] });
  });
});
