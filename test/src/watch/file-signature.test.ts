/**
 * A copy's signature (computed by the thread that builds the row, from the fstat of what it read)
 * must be the one a rescan computes from lstats of the same files: otherwise every rollout would
 * look changed at the next rescan and be read again. And a changed file must change it.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rolloutPaths, type FileKind } from '../../../src/layout/file-names.js';
import { CopyArena, copyRollout } from '../../../src/ops/rollout-copy.js';
import { SIGNATURE_KINDS, SignatureBuilder, copySignature } from '../../../src/watch/file-signature.js';
import { makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

function lstatSignature(dir: string, id: string): { key: number; kinds: string } {
  const paths = rolloutPaths(dir, id);
  const sig = new SignatureBuilder();
  const kinds: FileKind[] = [];
  SIGNATURE_KINDS.forEach((kind, i) => {
    const s = fs.lstatSync(paths[kind], { throwIfNoEntry: false });
    if (!s) return;
    sig.add(kind, i, { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs });
    kinds.push(kind);
  });
  return { key: sig.done().key, kinds: kinds.join('+') };
}

describe('copySignature', () => {
  it("equals the rescan's signature of the same files, for every rollout of a mixed store, and follows a change", async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 30 });
    const arena = new CopyArena(1024);
    const seen = new Set<string>();
    for (const id of ids) {
      const record = await copyRollout({ dir }, id, arena);
      const copied = copySignature(record.stamps);
      expect(copied, id).toEqual(lstatSignature(dir, id));
      seen.add(copied.kinds);
    }
    // The store has rollouts with and without intents and markers.
    expect(seen.size).toBeGreaterThan(1);
    const id = ids[0];
    const before = copySignature((await copyRollout({ dir }, id, arena)).stamps);
    fs.appendFileSync(rolloutPaths(dir, id).jsonl, '\n');
    const after = copySignature((await copyRollout({ dir }, id, arena)).stamps);
    expect(after.key).not.toBe(before.key);
    expect(after).toEqual(lstatSignature(dir, id));
  });
});
