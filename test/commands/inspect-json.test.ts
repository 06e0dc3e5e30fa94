import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { cli } from '../support/cli.js';

/**
 * `inspect --json` in id order writes each rollout as it comes (ctx.jsonMap); any other order
 * holds every row to sort them. On a store whose rollouts all have the same number of calls,
 * `--sort calls` falls back to id order: both paths must print the same bytes.
 */
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tokcap-inspect-json-'));
  await generateStore({ dir }, { rollouts: 12, calls: 3, prompt: 6, gen: 2, turn: 2, seed: 9, fast: true });
  // An unreadable state: a warning on stderr, the facts still listed.
  writeFileSync(join(dir, 'r04.tokens.state.json'), '[1, 2]');
  writeFileSync(join(dir, 'bad id!.tokens.jsonl'), '');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('inspect --json', () => {
  for (const extra of [[], ['--deep'], ['--status', 'live', '--limit', '3'], ['--status', 'frozen']]) {
    it(`streamed in id order equals the sorted document (${extra.join(' ') || 'no options'})`, async () => {
      const streamed = await cli(['inspect', dir, '--json', ...extra]);
      const held = await cli(['inspect', dir, '--json', '--sort', 'calls', ...extra]);
      expect(streamed.code).toBe(held.code);
      expect(streamed.stdout).toBe(held.stdout);
      expect(streamed.stderr).toBe(held.stderr);
      const doc = JSON.parse(streamed.stdout);
      expect(Object.keys(doc)).toEqual(['dir', 'rollouts', 'invalid_names', 'temp_state_files']);
      expect(doc.invalid_names).toEqual(['bad id!.tokens.jsonl']);
    });
  }

  it('lists every rollout in id order, and warns about the unreadable one', async () => {
    const { stdout, stderr } = await cli(['inspect', dir, '--json']);
    const ids = Object.keys(JSON.parse(stdout).rollouts);
    expect(ids).toHaveLength(12);
    expect(ids).toEqual([...ids].sort());
    expect(stderr).toMatch(/r04: .*state/);
  });
});
