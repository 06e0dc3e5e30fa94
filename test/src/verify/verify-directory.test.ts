import { describe, expect, it } from 'vitest';
import { appendEntry } from '../../../src/ops/writer.js';
import { verifyDirectory } from '../../../src/verify/verify-directory.js';
import { entry, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();

describe('verifyDirectory', () => {
  it('says, before the first rollout, how many it will attempt, and which named ids have no capture file', async () => {
    const dir = tmp();
    await appendEntry({ dir }, entry('c1'));
    const calls: string[] = [];
    const result = await verifyDirectory(
      { dir },
      { ids: ['zz', 'r', 'aa'], onStart: (total) => calls.push(`start ${total}`), onProgress: (done, total) => calls.push(`${done}/${total}`) },
    );
    expect(calls).toEqual(['start 1', '1/1']);
    expect(result).toMatchObject({ ok: true, rollouts: 1, missing: ['zz', 'aa'], unchecked: [] });
    const all = await verifyDirectory({ dir });
    expect(all).toMatchObject({ ok: true, rollouts: 1, missing: [] });
  });
});
