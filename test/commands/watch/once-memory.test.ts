/**
 * The live view's first load runs with `--once`'s heap growing factor, and V8's own comes back
 * once every rollout is read (commands/watch/once-memory.ts): the view then runs mostly idle.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const flags = vi.hoisted(() => [] as string[]);
vi.mock('node:v8', async (importOriginal) => ({
  ...(await importOriginal<typeof import('node:v8')>()),
  setFlagsFromString: (flag: string) => void flags.push(flag),
}));

const { settleLoadMemory } = await import('../../../commands/watch/once-memory.js');

/** A model whose load finishes when told to, telling its listeners as DirectoryModel does. */
function loadingModel(ready = false) {
  const listeners = new Set<() => void>();
  return {
    ready,
    listeners,
    subscribe(listener: () => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    change() {
      for (const l of [...listeners]) l();
    },
  };
}

afterEach(() => void flags.splice(0));

describe('settleLoadMemory', () => {
  it('collects at 1.5x during the load and gives the factor back to V8 when the load is done', () => {
    const model = loadingModel();
    settleLoadMemory(model);
    expect(flags).toEqual(['--heap-growing-percent=50']);

    model.change();
    expect(flags).toEqual(['--heap-growing-percent=50']);

    model.ready = true;
    model.change();
    expect(flags).toEqual(['--heap-growing-percent=50', '--heap-growing-percent=0']);
    expect(model.listeners.size).toBe(0);
  });

  it('leaves the process alone when the model has no load left', () => {
    const model = loadingModel(true);
    settleLoadMemory(model);
    expect(flags).toEqual([]);
    expect(model.listeners.size).toBe(0);
  });
});
