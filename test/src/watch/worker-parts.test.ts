/**
 * The parts of the watch's worker readers, each on its own: the worker's thread (its loss said
 * once, no start after it), the batches (copied under lock, a held lock left out of what the
 * worker reads, read again here when the worker dies with them) and the listings (answered
 * undefined when abandoned).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { closeCopied, CopyArena } from '../../../src/ops/rollout-copy.js';
import { DEFAULT_READERS } from '../../../src/watch/directory-model.js';
import { ReadWorkerLink, type LinkListener, type ReaderReply } from '../../../src/watch/read-worker-link.js';
import { copyForWorker, readingModules, WorkerBatches } from '../../../src/watch/worker-batches.js';
import { WorkerListings } from '../../../src/watch/worker-listings.js';
import { holdersKilledAfterEach } from '../../support/reliability.js';
import { makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs('tokcap-worker-parts-');

/** A worker script in a temp directory: `body` runs in the thread. */
function workerScript(body: string): URL {
  const file = path.join(tempDir(), 'worker.mjs');
  fs.writeFileSync(file, `import { parentPort } from 'node:worker_threads';\n${body}\n`);
  return pathToFileURL(file);
}

function recorder(): LinkListener & { replies: ReaderReply[]; losses: number; lostOnce: Promise<void> } {
  let lost!: () => void;
  const r = {
    replies: [] as ReaderReply[],
    losses: 0,
    lostOnce: new Promise<void>((resolve) => (lost = resolve)),
    reply: (m: ReaderReply) => void r.replies.push(m),
    lost: () => {
      r.losses++;
      lost();
    },
  };
  return r;
}

const holders = holdersKilledAfterEach();

describe('the read worker link', () => {
  it('starts nothing when there is no worker file, and reads nothing there', () => {
    const listener = recorder();
    const link = new ReadWorkerLink(new URL('file:///nonexistent/read-worker.js'), listener);
    expect(link.start()).toBeNull();
    expect(link.reading).toBe(false);
    expect(listener.losses).toBe(0);
  });

  it('hands on replies, and says once that a worker which exits is lost; none starts after it', async () => {
    const listener = recorder();
    const link = new ReadWorkerLink(
      workerScript(
        `parentPort.on('message', (m) => { parentPort.postMessage({ type: 'rescanned', seq: m.seq, failed: true }); setTimeout(() => process.exit(0), 20); });`,
      ),
      listener,
    );
    const w = link.start()!;
    expect(link.reading).toBe(true);
    expect(link.start()).toBe(w);
    w.postMessage({ type: 'rescan', seq: link.nextSeq(), dir: '/' });
    await listener.lostOnce;
    expect(listener.replies).toEqual([{ type: 'rescanned', seq: 1, failed: true }]);
    expect(listener.losses).toBe(1);
    expect(link.current).toBeNull();
    expect(link.start()).toBeNull();
    expect(link.reading).toBe(false);
  });

  it('reads in this thread while the worker loads for a listing, until it says it is ready', async () => {
    const listener = recorder();
    const link = new ReadWorkerLink(
      workerScript(`parentPort.on('message', () => setTimeout(() => parentPort.postMessage({ type: 'ready' }), 20));`),
      listener,
    );
    link.postLoadRequest(link.start()!, { type: 'scan', seq: link.nextSeq(), dir: '/' });
    expect(link.loading).toBe(true);
    expect(link.reading).toBe(false);
    await expect.poll(() => link.reading).toBe(true);
    link.close();
    await link.terminate();
    expect(link.start()).toBeNull();
    expect(listener.losses).toBe(0);
  });
});

describe('the worker batches', () => {
  it('copy under lock in this thread: a rollout whose lock is held elsewhere is left out of what the worker reads', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 3, mix: false });
    await holders.lock(dir, ids[1], 'ex', 3600);
    const arena = new CopyArena();
    const { copied, held, records } = await copyForWorker(
      await readingModules(),
      { dir, lockWaitMs: 5000 },
      ids,
      arena,
      { wait: false },
      16,
    );
    expect(copied.map((r) => r.rolloutId)).toEqual(ids);
    expect(held).toEqual([false, true, false]);
    expect(records.map((r) => r.rolloutId)).toEqual([ids[0], ids[2]]);
    expect(arena.keepFds).toBe(16);
    closeCopied(arena);
  });

  it('read the batches in flight again here when the worker dies with them: the same rows', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 4, mix: false });
    const link = new ReadWorkerLink(workerScript(`parentPort.on('message', () => process.exit(1));`), {
      reply: () => undefined,
      lost: () => batches.readAgainHere(),
    });
    const batches = new WorkerBatches(link);
    const read = await batches.read({ dir }, ids);
    expect(read).toEqual(await DEFAULT_READERS.readBatch({ dir }, ids));
    await batches.drain(1000);
  });
});

describe('the worker listings', () => {
  it('answer undefined when abandoned, and for a rescan while the worker loads for a listing', async () => {
    const link = new ReadWorkerLink(workerScript(`parentPort.on('message', () => undefined);`), recorder());
    const listings = new WorkerListings(link);
    const load = listings.forLoad('/some/dir');
    expect(link.loading).toBe(true);
    expect(await listings.rescan('/some/dir')).toBeUndefined();
    listings.abandon(true);
    expect(await load).toBeUndefined();
    link.close();
    await link.terminate();
  });

  it('give a prefetched listing to the load of the same directory only', async () => {
    let scans = 0;
    const link = new ReadWorkerLink(workerScript(`parentPort.on('message', () => undefined);`), recorder());
    const post = link.postLoadRequest.bind(link);
    link.postLoadRequest = (w, request) => {
      scans++;
      post(w, request);
    };
    const listings = new WorkerListings(link);
    listings.prefetch('/a');
    void listings.forLoad('/a');
    expect(scans).toBe(1);
    void listings.forLoad('/a');
    expect(scans).toBe(2);
    listings.prefetch('/a');
    void listings.forLoad('/b');
    expect(scans).toBe(4);
    listings.abandon(true);
    link.close();
    await link.terminate();
  });
});
