/**
 * Row reads in a worker thread: same results as in-thread, nothing written, and a transparent
 * fallback when the worker cannot run. The worker is the compiled one (dist/), as the binary
 * uses it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { scanDirectory } from '../../src/layout/scan-directory.js';
import { readRow } from '../../src/watch/preview.js';
import { createWorkerReaders as createFromSources } from '../../src/watch/worker-readers.js';
import { ROOT, ensureBuilt } from '../cli/helpers.js';
import { listing, makeStore, useTempDirs } from './support.js';

const tempDir = useTempDirs();
type Factory = typeof createFromSources;
let createCompiled: Factory;

beforeAll(async () => {
  await ensureBuilt();
  const mod = (await import(pathToFileURL(path.join(ROOT, 'dist', 'src', 'watch', 'worker-readers.js')).href)) as { createWorkerReaders: Factory };
  createCompiled = mod.createWorkerReaders;
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
