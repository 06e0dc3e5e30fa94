import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { outputJsonLine } from '../../src/json/canonical-json.js';
import type { Finding } from '../../src/verify/findings.js';
import { FindingSpool } from '../../commands/verify-digests/finding-spool.js';

/** Findings of three rollouts, as verifyDirectory hands them over: a rollout's at a time. */
const perRollout: Finding[][] = ['r0', 'r1', 'r2'].map((rollout_id, r) =>
  Array.from(
    { length: 40 },
    (_, i) =>
      ({
        rollout_id,
        code: i % 2 ? 'entry_digest_mismatch' : 'torn_tail',
        severity: i % 2 ? 'error' : 'warning',
        line: i + 1,
        message: `finding ${r}.${i} \u202e with text from the store`,
      }) as Finding,
  ),
);
const doc = { ok: false, findings: perRollout.flat(), unchecked: ['r9'] };

async function written(spool: FindingSpool): Promise<Buffer> {
  for (const f of perRollout) spool.add(f);
  const parts: Uint8Array[] = [];
  await spool.writeDocument(
    { write: async (b) => void parts.push(Buffer.from(b)) },
    { ok: false, findings: [], unchecked: ['r9'] },
  );
  spool.close();
  return Buffer.concat(parts);
}

const spoolFiles = () => readdirSync(tmpdir()).filter((n) => n.startsWith('tokcap-verify-'));
const savedTmp = process.env.TMPDIR;
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
});

describe('verify-digests --json findings spool', () => {
  it('writes the same bytes as the document written whole, and counts errors and warnings', async () => {
    const spool = new FindingSpool();
    expect(await written(spool)).toEqual(outputJsonLine(doc));
    expect([spool.count, spool.errors]).toEqual([120, 60]);
  });

  it('past its limit goes through a temporary file, with the same bytes, and removes it', async () => {
    const before = spoolFiles();
    expect(await written(new FindingSpool(100))).toEqual(outputJsonLine(doc));
    expect(spoolFiles()).toEqual(before);
  });

  it('keeps the findings in memory when no temporary file can be made', async () => {
    process.env.TMPDIR = '/nonexistent/tokcap-no-tmp';
    expect(await written(new FindingSpool(100))).toEqual(outputJsonLine(doc));
  });
});
