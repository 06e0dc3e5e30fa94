import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildRollout } from '../../../src/chains/build-rollout.js';
import { orderedJson } from '../../../src/json/canonical-json.js';
import { appendEntry, beginCall, markIncomplete } from '../../../src/ops/writer.js';
import { rolloutFacts } from '../../../src/facts/rollout-facts.js';
import { copyRollout } from '../../../src/ops/rollout-copy.js';
import { readRollout } from '../../../src/rollout-read/read-rollout.js';
import { loadRolloutDetail } from '../../../src/rollout-read/rollout-detail.js';
import { rolloutStatus } from '../../../src/status/rollout-status.js';
import { entry } from '../../support/store.js';
import { listing, makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

describe('readRollout', () => {
  it('builds exactly what `build` without --freeze returns, and the facts of `inspect`, for every shape', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir);
    const before = listing(dir);
    for (const id of ids) {
      const read = await readRollout({ dir }, id);
      const reference = await buildRollout({ dir }, id, { freeze: false });
      expect(orderedJson(read.build!.result), id).toBe(orderedJson(reference));
      const facts = await rolloutFacts({ dir }, id);
      expect(read.facts, id).toEqual(facts);
      expect(read.status, id).toEqual(rolloutStatus(facts));
    }
    expect(listing(dir)).toEqual(before);
  });
});

describe('loadRolloutDetail', () => {
  it('draws the chain tree under parents, with the main chain, retries and boundaries', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 5 });
    const before = listing(dir);

    const retried = await loadRolloutDetail({ dir }, 'r3');
    expect(retried.tree.map((n) => [n.id, n.depth, n.outcome])).toEqual([
      ['call-000', 0, 'root'],
      ['call-001', 1, 'linked'],
      ['call-002', 2, 'linked'],
      ['call-002-retry', 2, 'linked'],
    ]);
    const last = retried.tree.filter((n) => n.depth === 2);
    expect(last.map((n) => [n.unresolvedRetry, n.quarantined, n.last])).toEqual([
      [true, false, false],
      [true, true, true],
    ]);
    expect(retried.tree[0].onMain).toBe(true);
    expect(retried.tree.every((n) => n.digest.status === 'ok')).toBe(true);
    expect(retried.verdict).toMatchObject({ built: true, masked: true });
    expect(retried.verdict.causes.map((c) => c.code)).toEqual(['unresolved_retries']);

    const boundary = await loadRolloutDetail({ dir }, 'r4');
    const b = boundary.tree.find((n) => n.id === 'call-001')!;
    expect(b).toMatchObject({ depth: 0, outcome: 'boundary', reason: 'parent_unresolved', unresolvedBoundary: true });
    expect(boundary.chains.map((c) => c.name)).toEqual(['main', 'branch-0']);
    expect(boundary.verdict.causes.map((c) => c.code)).toEqual([
      'unresolved_parent_calls',
      'roots_not_one',
      'chains_not_one',
    ]);

    expect(listing(dir)).toEqual(before);
  });

  it('lists dangling intents, incomplete markers with the empty call id, and every mask cause', async () => {
    const dir = tempDir();
    const store = { dir };
    await appendEntry(store, entry('c0', { rollout: 'x' }));
    await beginCall(store, 'x', 'c1');
    await markIncomplete(store, 'x', '');
    await markIncomplete(store, 'x', 'c2');
    for (const n of fs.readdirSync(dir)) if (n.endsWith('.lock')) fs.rmSync(path.join(dir, n));
    const d = await loadRolloutDetail(store, 'x');
    expect(d.status).toEqual({ status: 'live', conditions: ['dangling', 'incomplete'] });
    expect(d.danglingIntents).toEqual(['c1']);
    expect(d.incompleteMarkers).toEqual(['', 'c2']);
    expect(d.incompleteFlag).toBe(true);
    expect(d.verdict.masked).toBe(true);
    expect(d.verdict.causes.map((c) => c.code)).toEqual(['dangling_intents', 'capture_incomplete']);
    expect(d.verdict.causes[1].message).toContain('""');
    expect(fs.readdirSync(dir).some((n) => n.endsWith('.lock'))).toBe(false);
  });

  it('shows a torn tail as such, without truncating it', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 8 });
    const j = path.join(dir, 'r7.tokens.jsonl');
    const size = fs.statSync(j).size;
    const d = await loadRolloutDetail({ dir }, 'r7');
    expect(d.status.conditions).toContain('torn_tail');
    expect(d.tornTail?.at).toBeGreaterThan(0);
    expect(d.rolloutFindings.map((f) => f.code)).toContain('torn_tail');
    expect(fs.statSync(j).size).toBe(size);
  });

  it("gives a retired tombstone the reference's failed build: masked, could not be built", async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 8 });
    const d = await loadRolloutDetail({ dir }, 'r6');
    expect(d.status).toEqual({ status: 'retired', conditions: [] });
    expect(d.verdict).toMatchObject({
      built: true,
      verdict: 'masked',
      unbuilt: true,
      masked: true,
      error: 'RuntimeError: Token capture for rollout r6 is retired',
    });
    expect(d.tree).toEqual([]);
  });

  it('reads the rollout from one copy: facts, preview and digest check', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 5 });
    const status = rolloutStatus(await rolloutFacts({ dir }, 'r3'));
    let copies = 0;
    const d = await loadRolloutDetail({ dir }, 'r3', {
      copy: async (...args) => {
        copies++;
        const copy = await copyRollout(...args);
        // A line appended after the copy: a read of its own would see it as a torn tail.
        fs.appendFileSync(path.join(dir, 'r3.tokens.jsonl'), '{"torn');
        return copy;
      },
    });
    expect(copies).toBe(1);
    expect(d.status).toEqual(status);
    expect(d.tornTail).toBeNull();
    expect(d.rolloutFindings).toEqual([]);
    expect(d.tree.length).toBeGreaterThan(0);
    expect(d.tree.every((n) => n.digest.status === 'ok')).toBe(true);
  });

  it('a lock not granted keeps the summary status; the build and the digests fail with it (no second wait)', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 1 });
    const timeout = { kind: 'lock_timeout' as const, message: 'timed out after 1s waiting for the lock of rollout r0' };
    let copies = 0;
    const d = await loadRolloutDetail({ dir }, 'r0', {
      copy: async (_store, rolloutId) => {
        copies++;
        return { rolloutId, spans: {}, stamps: {}, failure: timeout };
      },
    });
    expect(copies).toBe(1);
    expect(d.status).toEqual(rolloutStatus(await rolloutFacts({ dir }, 'r0')));
    expect(d.status.status).toBe('live');
    expect(d.recordsError).toEqual(timeout);
    expect(d.digestError).toBe(timeout.message);
    expect(d.verdict).toMatchObject({ built: false, verdict: 'unavailable' });
    expect(d.tree).toEqual([]);
  });
});
