/**
 * Row reads in a worker thread: same results as in-thread, nothing written, and a transparent
 * fallback when the worker cannot run. The worker is the compiled one (dist/), as the binary
 * uses it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { rolloutPaths } from '../../src/layout/file-names.js';
import { scanDirectory } from '../../src/layout/scan-directory.js';
import type { withRolloutLock as withRolloutLockFromSources } from '../../src/lock/rollout-lock.js';
import { readRow } from '../../src/watch/preview.js';
import { createWorkerReaders as createFromSources } from '../../src/watch/worker-readers.js';
import { ROOT, ensureBuilt } from '../cli/helpers.js';
import { listing, makeStore, useTempDirs } from './support.js';

const tempDir = useTempDirs();
type Factory = typeof createFromSources;
let createCompiled: Factory;
// The compiled lock module: the one the compiled readers take their turns with, as in the binary.
let compiledLock: typeof withRolloutLockFromSources;

beforeAll(async () => {
  await ensureBuilt();
  const compiled = (file: string) => import(pathToFileURL(path.join(ROOT, 'dist', 'src', file)).href);
  createCompiled = ((await compiled('watch/worker-readers.js')) as { createWorkerReaders: Factory }).createWorkerReaders;
  compiledLock = ((await compiled('lock/rollout-lock.js')) as { withRolloutLock: typeof withRolloutLockFromSources }).withRolloutLock;
}, 120_000);

describe('worker readers', () => {
  it('read every shape in a worker thread, exactly as in this thread, changing nothing', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir);
    const before = listing(dir);
    const listed = await scanDirectory(dir);
    const readers = createCompiled();
    try {
      for (const id of ids) {
        const files = listed.rollouts.get(id)!;
        const inWorker = await readers.read({ dir }, id, files);
        expect(readers.inWorker).toBe(true);
        const here = await readRow({ dir }, id, files);
        expect(inWorker, id).toEqual(here);
      }
    } finally {
      await readers.close();
    }
    expect(listing(dir)).toEqual(before);
  });

  it('take no rollout lock in the worker: while this thread holds one, a worker read of another rollout waits for it', async () => {
    // docs/format.md#lock-mechanism: the process holds one rollout lock at a time. The detail view reads in this
    // thread while the worker reads rows, so the worker's copies are made here, in turn.
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 2, mix: false });
    const listed = await scanDirectory(dir);
    const [a, b] = ids;
    const readers = createCompiled();
    try {
      await readers.read({ dir }, a, listed.rollouts.get(a)!);
      expect(readers.inWorker).toBe(true);
      let readOfB: Promise<unknown> | undefined;
      let done = false;
      await compiledLock(rolloutPaths(dir, a).lock, a, 'shared', { waitMs: 0, readOnly: true }, async () => {
        readOfB = readers.read({ dir }, b, listed.rollouts.get(b)!).then((r) => {
          done = true;
          return r;
        });
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(done).toBe(false);
      });
      expect(await readOfB).toEqual(await readRow({ dir }, b, listed.rollouts.get(b)!));
    } finally {
      await readers.close();
    }
  });

  it('carry what could not be read back as data', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'x.tokens.jsonl'));
    const readers = createCompiled();
    try {
      const r = await readers.read({ dir, lockWaitMs: 0 }, 'x', new Set(['jsonl']));
      expect(r.facts.errors[0].message).toMatch(/directory/);
    } finally {
      await readers.close();
    }
  });

  it('fall back to this thread when there is no compiled worker', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 2, mix: false });
    const readers = createFromSources(new URL('file:///nonexistent/read-worker.js'));
    const r = await readers.read({ dir }, 'r0', new Set(['jsonl', 'state', 'intents']));
    expect(readers.inWorker).toBe(false);
    expect(r.preview).toMatchObject({ kind: 'built', wouldMask: false });
    await readers.close();
  });
});
