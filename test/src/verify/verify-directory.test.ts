import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { outputJsonLine } from '../../../src/json/canonical-json.js';
import { appendEntry } from '../../../src/ops/writer.js';
import type { Finding } from '../../../src/verify/findings.js';
import { verifyDirectory } from '../../../src/verify/verify-directory.js';
import { cli } from '../../support/cli.js';
import { entry, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();

describe('verifyDirectory', () => {
  it('says, before the first rollout, how many it will attempt, and which named ids have no capture file', async () => {
    const dir = tmp();
    await appendEntry({ dir }, entry('c1'));
    const calls: string[] = [];
    const result = await verifyDirectory(
      { dir },
      {
        ids: ['zz', 'r', 'aa'],
        onStart: (total) => calls.push(`start ${total}`),
        onProgress: (done, total) => calls.push(`${done}/${total}`),
      },
    );
    expect(calls).toEqual(['start 1', '1/1']);
    expect(result).toMatchObject({ ok: true, rollouts: 1, missing: ['zz', 'aa'], unchecked: [] });
    const all = await verifyDirectory({ dir });
    expect(all).toMatchObject({ ok: true, rollouts: 1, missing: [] });
  });

  it('gives the findings a rollout at a time in the held order, and verify-digests --json writes them as they come, the same bytes', async () => {
    const dir = tmp();
    await generateStore({ dir }, { rollouts: 12, calls: 4, prompt: 30, gen: 10, turn: 10, seed: 3, fast: true });
    // A digit changed in a line of every other rollout: digest findings (and their children's).
    for (let r = 0; r < 12; r += 2) {
      const path = join(dir, `r${String(r).padStart(2, '0')}.tokens.jsonl`);
      const text = readFileSync(path, 'utf8');
      const half = Math.floor(text.length / 2);
      const at = half + text.slice(half).search(/[0-9]/);
      writeFileSync(path, text.slice(0, at) + String((Number(text[at]) + 1) % 10) + text.slice(at + 1));
    }
    for (const ids of [undefined, ['r09', 'r00', 'nope', 'r04', 'r11', 'r02']]) {
      for (const threads of [1, 3]) {
        const held = await verifyDirectory({ dir }, { ids, threads: { threads } });
        expect(held.findings.length).toBeGreaterThan(0);
        const given: Finding[][] = [];
        const streamed = await verifyDirectory(
          { dir },
          { ids, threads: { threads }, onFindings: (f) => void given.push(f) },
        );
        expect(given.flat()).toEqual(held.findings);
        expect(given.every((list) => list.every((f) => f.rollout_id === list[0].rollout_id))).toBe(true);
        expect({ ...streamed, findings: held.findings }).toEqual(held);
      }
    }
    const held = await verifyDirectory({ dir });
    const out = await cli(['verify-digests', dir, '--json']);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe(outputJsonLine({ ok: false, findings: held.findings, unchecked: [] }).toString());
  });
});
