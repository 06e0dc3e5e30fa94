import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';

const root = mkdtempSync(join(tmpdir(), 'tokcap-fixture-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** File name -> [mode, bytes] with the random snapshot ids of frozen rollouts masked. */
function snapshot(dir: string): Record<string, [number, string]> {
  const out: Record<string, [number, string]> = {};
  for (const f of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, f), 'utf8').replace(/"snapshot_id":"[0-9a-f]{32}"/g, '"snapshot_id":"*"');
    out[f] = [statSync(join(dir, f)).mode, text];
  }
  return out;
}

describe('generateStore fast path', () => {
  it.each([
    { mix: false, delta: false },
    { mix: true, delta: false },
    { mix: true, delta: true },
  ])('writes the same bytes as the writer (%o)', async ({ mix, delta }) => {
    const options = { rollouts: 9, calls: 4, prompt: 20, gen: 5, turn: 3, mix, delta, seed: 5 };
    const slow = join(root, `slow-${mix}-${delta}`);
    const fast = join(root, `fast-${mix}-${delta}`);
    await generateStore({ dir: slow }, options);
    await generateStore({ dir: fast }, { ...options, fast: true });
    expect(snapshot(fast)).toEqual(snapshot(slow));
  });

  it('refuses a non-empty directory', async () => {
    const dir = join(root, 'busy');
    await generateStore({ dir }, { rollouts: 1, calls: 1, prompt: 2, gen: 1 });
    // Other ids (the same ones are refused earlier, with or without the fast path).
    await expect(generateStore({ dir }, { rollouts: 1, calls: 1, fast: true, prefix: 'other-' })).rejects.toThrow(/not empty/);
    await expect(generateStore({ dir }, { rollouts: 1, calls: 1 })).rejects.toThrow(/already has rollouts r0/);
  });
});
