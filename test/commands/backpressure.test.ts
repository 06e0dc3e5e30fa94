import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { cli, fakeIo, SlowStdout } from '../support/cli.js';

/**
 * The --json documents written entry by entry (ctx.jsonMap) wait for a stdout that has not caught
 * up: in one thread (TOKCAP_WORKERS=1) the job never lets the event loop turn, so without waiting
 * the whole document queued in memory before the first byte reached a slow reader.
 */
let dir: string;
const ONE_THREAD = { TOKCAP_WORKERS: '1' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tokcap-backpressure-'));
  await generateStore({ dir }, { rollouts: 60, calls: 2, prompt: 6, gen: 2, turn: 2, seed: 4, fast: true });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function throughSlowPipe(args: string[]) {
  const toFile = await cli(args, fakeIo({ env: ONE_THREAD }));
  const slow = new SlowStdout();
  const piped = await cli(args, { ...fakeIo({ env: ONE_THREAD }), stdout: slow });
  await new Promise<void>((resolve) => slow.end(resolve));
  return { toFile, piped, slow };
}

describe('a slow reader of stdout holds the --json writer back', () => {
  for (const args of [['inspect'], ['inspect', '--deep'], ['watch', '--once']]) {
    it(`${args.join(' ')} --json: the same bytes, never more than a few rollouts queued`, async () => {
      const { toFile, piped, slow } = await throughSlowPipe([args[0], dir, ...args.slice(1), '--json']);
      expect(piped.code).toBe(toFile.code);
      expect(slow.text).toBe(toFile.stdout);
      expect(Object.keys(JSON.parse(slow.text).rollouts)).toHaveLength(60);
      // One rollout's entry is a few hundred bytes; the document is 60 of them.
      const entry = toFile.stdout.length / 60;
      expect(slow.mostQueued).toBeLessThan(slow.writableHighWaterMark + 4 * entry);
    });
  }
});
