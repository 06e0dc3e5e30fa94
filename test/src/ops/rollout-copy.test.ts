/**
 * One locked copy of a rollout (src/ops/rollout-copy.ts) answers for both of its readers: the
 * facts computed from it are `rolloutFacts`' facts, and the preview build made from it is
 * `buildRolloutDetailed`'s, on a mixed store and on every case of the hostile corpus (damaged
 * states, torn and corrupt lines, FIFOs, symlinks, retired tombstones...), and with a Python
 * process holding a rollout's lock.
 */
import { appendFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRolloutDetailed, type DetailedBuild } from '../../../src/chains/build-rollout.js';
import { rolloutFacts } from '../../../src/facts/rollout-facts.js';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { scanDirectory } from '../../../src/layout/scan-directory.js';
import {
  CopyArena,
  copyRollout,
  copyRolloutNow,
  closeCopied,
  snapshotCopyOf,
  spanBytes,
  COPIED_KINDS,
} from '../../../src/ops/rollout-copy.js';
import { rolloutPaths } from '../../../src/layout/file-names.js';
import type { StoreOptions } from '../../../src/ops/store.js';
import { makeCorpus, rawMaterial } from '../../support/hostile-corpus.js';
import { holdLock, tempBase } from '../../support/reliability.js';
import { useTempDirs } from '../../support/store.js';

const tmp = useTempDirs('tokcap-copy-');
const bases: string[] = [];
afterAll(async () => {
  const { rmSync } = await import('node:fs');
  for (const b of bases) rmSync(b, { recursive: true, force: true });
});

/** What a build says, without the entries and chains (compared through the result). */
function gist(b: DetailedBuild) {
  return {
    result: b.result,
    causes: b.causes,
    danglingIntents: b.danglingIntents,
    tornTailAt: b.tornTailAt,
    readFailure: b.readFailure && { kind: b.readFailure.kind, message: b.readFailure.message },
  };
}

async function compareAll(store: StoreOptions): Promise<number> {
  const listing = await scanDirectory(store.dir);
  const arena = new CopyArena(1024);
  let n = 0;
  for (const [id, files] of listing.rollouts) {
    arena.used = 0;
    const record = await copyRollout(store, id, arena);
    const viaCopy = await rolloutFacts(store, id, { files, copy: { arena: arena.bytes, record } });
    const direct = await rolloutFacts(store, id, { files });
    expect(viaCopy, id).toEqual(direct);
    const built = await buildRolloutDetailed(store, id, {
      freeze: false,
      source: {
        readOnly: async () => snapshotCopyOf(arena.bytes, record, viaCopy.retired),
        frozen: () => Promise.reject(new Error('not a freeze')),
      },
    });
    expect(gist(built), id).toEqual(gist(await buildRolloutDetailed(store, id, { freeze: false })));
    n++;
  }
  return n;
}

describe('copyRollout: one locked read for the facts and the preview', () => {
  it('gives the facts and the preview build of the direct readers on a mixed store', async () => {
    const dir = tmp();
    await generateStore({ dir }, { rollouts: 60, calls: 3, prompt: 12, gen: 3, turn: 2, mix: true, seed: 5 });
    expect(await compareAll({ dir })).toBe(60);
  });

  it('gives the same answers on every case of the hostile corpus', async () => {
    const seedDir = tmp();
    await generateStore({ dir: seedDir }, { rollouts: 1, calls: 4, prompt: 12, gen: 3, turn: 2, prefix: 'seed' });
    const id = readdirSync(seedDir)
      .find((n) => n.endsWith('.tokens.jsonl'))!
      .replace('.tokens.jsonl', '');
    const base = tempBase('copy');
    bases.push(base);
    mkdirSync(join(base, 'x'));
    const corpus = makeCorpus(base, rawMaterial(seedDir, id), { seed: 11, bigLineBytes: 256 * 1024 });
    const n = await compareAll({ dir: corpus.store, lockWaitMs: 2000 });
    expect(n).toBeGreaterThanOrEqual(corpus.ids.length);
  });

  it('under a lock held by a Python writer: no copy, the facts answer as inspect does, and the preview is a lock timeout', async () => {
    const dir = tmp();
    await generateStore({ dir }, { rollouts: 2, calls: 2, prompt: 8, gen: 2, turn: 2, prefix: 'r' });
    const store = { dir, lockWaitMs: 300 };
    const holder = await holdLock(dir, 'r0000', 'ex', 3600);
    try {
      const arena = new CopyArena(1024);
      const record = await copyRollout(store, 'r0000', arena);
      expect(record.failure?.kind).toBe('lock_timeout');
      expect(arena.used).toBe(0);
      const files = (await scanDirectory(dir)).rollouts.get('r0000');
      const viaCopy = await rolloutFacts(store, 'r0000', { files, copy: { arena: arena.bytes, record } });
      // Fully indexed: inspect needs no lock for it, and neither do the facts from a failed copy.
      expect(viaCopy).toEqual(await rolloutFacts(store, 'r0000', { files }));
      expect(() => snapshotCopyOf(arena.bytes, record, viaCopy.retired)).toThrow(/timed out/);
    } finally {
      holder.child.kill();
      await holder.done;
    }
  });

  it('copies the files as they are at the copy, not as the scan listed them: grown J, a marker that appeared', async () => {
    const dir = tmp();
    const [id] = (await generateStore({ dir }, { rollouts: 1, calls: 2, prompt: 8, gen: 2, turn: 2, prefix: 'r' }))
      .rollouts;
    const paths = rolloutPaths(dir, id);
    const listed = (await scanDirectory(dir)).rollouts.get(id)!;
    expect(listed.has('incomplete')).toBe(false);
    appendFileSync(paths.jsonl, '{"torn');
    writeFileSync(paths.incomplete, 'c9\n');
    const arena = new CopyArena(16);
    const record = copyRolloutNow({ dir }, id, arena)!;
    // Taken at once (nobody holds the lock): the descriptors wait in the arena, locks released.
    expect(record).toBeDefined();
    expect(arena.fds.length).toBe(5);
    for (const kind of COPIED_KINDS) {
      expect(spanBytes(arena.bytes, record.spans[kind])?.toString('latin1'), kind).toBe(
        readFileSync(paths[kind], 'latin1'),
      );
      const st = lstatSync(paths[kind]);
      expect(record.stamps[kind], kind).toEqual({ ino: st.ino, size: st.size, mtimeMs: st.mtimeMs });
    }
    closeCopied(arena);
    expect(arena.fds).toEqual([]);
    // The files the copy found (as the watch's rows take them), not the listing's.
    const files = new Set(COPIED_KINDS.filter((k) => record.spans[k]));
    const facts = await rolloutFacts({ dir }, id, { files, copy: { arena: arena.bytes, record } });
    expect(facts.incomplete_marker_calls).toEqual(['c9']);
  });

  it('refuses a FIFO named like a capture file, at once, and still copies the other files', async () => {
    const dir = tmp();
    const [id] = (await generateStore({ dir }, { rollouts: 1, calls: 2, prompt: 8, gen: 2, turn: 2, prefix: 'r' }))
      .rollouts;
    const paths = rolloutPaths(dir, id);
    execFileSync('mkfifo', [paths.incomplete]);
    const arena = new CopyArena(16);
    const record = await copyRollout({ dir }, id, arena);
    expect(record.errors?.incomplete?.message).toMatch(/refusing to read a FIFO/);
    expect(record.spans.incomplete).toBeUndefined();
    expect(spanBytes(arena.bytes, record.spans.jsonl)?.toString('latin1')).toBe(readFileSync(paths.jsonl, 'latin1'));
    // copyRollout closed every descriptor it opened.
    expect(arena.fds).toEqual([]);
  });
});
