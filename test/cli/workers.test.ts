import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';

/**
 * inspect and verify-digests spread rollouts over worker threads in the built binary (never when
 * running from sources). The output must be byte-identical with the workers turned off.
 */
let dir: string;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'tokcap-workers-'));
  // Enough rollouts for inspect's threshold (2,000), each tiny; a few damaged ones.
  await generateStore({ dir }, { rollouts: 2100, calls: 2, prompt: 6, gen: 2, turn: 2, seed: 5, fast: true });
  appendFileSync(join(dir, 'r0007.tokens.jsonl'), '{"torn');
  appendFileSync(join(dir, 'r1500.tokens.jsonl'), '{"model_call_id":"x"}\n');
  appendFileSync(join(dir, 'r2099.tokens.intents'), 'lost-call\n');
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('worker threads change nothing in the output', () => {
  for (const args of [
    ['inspect', '--json'],
    ['inspect', '--deep', '--json'],
    ['verify-digests', '--json'],
  ]) {
    it(args.join(' '), async () => {
      const withWorkers = await tokcap([args[0], dir, ...args.slice(1)]);
      const without = await tokcap([args[0], dir, ...args.slice(1)], { env: { TOKCAP_WORKERS: '1' } });
      expect(withWorkers.exitCode).toBe(without.exitCode);
      expect(String(withWorkers.stdout)).toContain('r0007');
      expect(String(withWorkers.stdout)).toBe(String(without.stdout));
      expect(String(withWorkers.stderr)).toBe(String(without.stderr));
    }, 120_000);
  }
});
