import { describe, expect, it } from 'vitest';
import { mapRolloutsParallel } from '../../../src/threads/parallel-rollouts.js';

// No compiled worker module next to the sources: everything runs in this thread, through the
// same ordering, emitting and stopping logic the worker path uses (the binary's tests cover
// the workers themselves: test/commands/workers.test.ts).
const NO_WORKER = new URL('./no-such-worker.js', import.meta.url);
const ids = Array.from({ length: 50 }, (_, i) => `r${String(i).padStart(2, '0')}`);

describe('mapRolloutsParallel', () => {
  it('returns results in input order', async () => {
    const out = await mapRolloutsParallel(ids, {
      workerUrl: NO_WORKER,
      shared: null,
      chunkSize: 7,
      local: async (id, i) => `${id}:${i}`,
    });
    expect(out).toEqual(ids.map((id, i) => `${id}:${i}`));
  });

  it('emits each result in order, awaiting an async emit before the next, and keeps none', async () => {
    const seen: string[] = [];
    let inEmit = false;
    const out = await mapRolloutsParallel(ids, {
      workerUrl: NO_WORKER,
      shared: null,
      chunkSize: 4,
      local: async (id) => id,
      emit: async (r, i) => {
        expect(inEmit).toBe(false);
        inEmit = true;
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(`${r}@${i}`);
        inEmit = false;
      },
    });
    expect(seen).toEqual(ids.map((id, i) => `${id}@${i}`));
    expect(Object.keys(out)).toEqual([]);
  });

  it('an emit that throws stops the work: nothing more is claimed and the call rejects with that error', async () => {
    let computed = 0;
    const boom = new Error('disk full');
    await expect(
      mapRolloutsParallel(ids, {
        workerUrl: NO_WORKER,
        shared: null,
        chunkSize: 2,
        local: async (id) => {
          computed++;
          return id;
        },
        emit: (r) => {
          if (r === 'r05') throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(computed).toBeLessThan(ids.length);
  });

  it('an aborted signal stops the work and the call rejects with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('interrupted');
    let computed = 0;
    await expect(
      mapRolloutsParallel(ids, {
        workerUrl: NO_WORKER,
        shared: null,
        chunkSize: 2,
        signal: controller.signal,
        local: async (id) => {
          if (++computed === 6) controller.abort(reason);
          return id;
        },
      }),
    ).rejects.toBe(reason);
    expect(computed).toBeLessThan(ids.length);
  });
});
