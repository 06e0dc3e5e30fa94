/**
 * A worker started before its job (src/threads/early-workers.ts), with real worker threads from
 * the compiled modules (as the binary runs them): the job takes it as its worker, a job too small
 * for a worker stops it, and one that died while waiting is not waited for.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { mapRolloutsParallel as MapRolloutsParallel } from '../../../src/threads/parallel-rollouts.js';
import type * as Early from '../../../src/threads/early-workers.js';
import type * as JobWorkers from '../../../src/threads/job-workers.js';
import { ROOT, ensureBuilt } from '../../support/cli.js';

let mapRolloutsParallel: typeof MapRolloutsParallel;
let early: typeof Early;
let jobWorkers: typeof JobWorkers;
let dir: string;
let counter = 0;

/** A worker module (a new URL each time: one early worker per module) answering `worker:ID`, or dying at once. */
function workerModule(body: 'answer' | 'die'): URL {
  const file = path.join(dir, `worker-${counter++}.mjs`);
  const parallel = pathToFileURL(path.join(ROOT, 'dist', 'src', 'threads', 'parallel-rollouts.js')).href;
  fs.writeFileSync(
    file,
    body === 'die'
      ? `process.exit(1);`
      : `import { parentPort, workerData } from 'node:worker_threads';
         import { serveRolloutWorker } from ${JSON.stringify(parallel)};
         serveRolloutWorker(parentPort, workerData, async (id) => 'worker:' + id, (e) => new Error(e.message));`,
  );
  return pathToFileURL(file);
}

const ids = Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(3, '0')}`);

/**
 * The job with `threads`. With `waitForWorker`, this thread's first item (it claims the first
 * chunk) waits for a chunk done elsewhere: the worker computes at least one.
 */
async function job(workerUrl: URL, threads?: number, estimatedBytes?: number, waitForWorker = false) {
  let workers = -1;
  let doneElsewhere: () => void = () => undefined;
  const firstDone = new Promise<void>((resolve) => (doneElsewhere = resolve));
  const results = await mapRolloutsParallel<string>(ids, {
    workerUrl,
    shared: null,
    chunkSize: 2,
    minItems: 8,
    estimatedBytes,
    threads: { threads, onWorkers: (n) => (workers = n) },
    onDone: () => doneElsewhere(),
    local: async (id, i) => {
      if (i === 0 && waitForWorker) await firstDone;
      return `main:${id}`;
    },
  });
  return { results, workers };
}

beforeAll(async () => {
  await ensureBuilt();
  const url = (name: string) => pathToFileURL(path.join(ROOT, 'dist', 'src', 'threads', name)).href;
  ({ mapRolloutsParallel } = (await import(url('parallel-rollouts.js'))) as {
    mapRolloutsParallel: typeof MapRolloutsParallel;
  });
  early = (await import(url('early-workers.js'))) as typeof Early;
  jobWorkers = (await import(url('job-workers.js'))) as typeof JobWorkers;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-early-worker-'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a worker started before its job', () => {
  it("is the job's worker: it computes chunks, results in input order", async () => {
    const url = workerModule('answer');
    early.startEarlyWorker(url, 2);
    const { results, workers } = await job(url, 2, undefined, true);
    expect(workers).toBe(1);
    expect(results.map((r) => r.slice(r.indexOf(':') + 1))).toEqual(ids);
    expect(results.some((r) => r.startsWith('worker:'))).toBe(true);
    // Taken once: nothing waits any more.
    expect(early.takeEarlyWorker(url)).toBeUndefined();
  });

  it('is stopped when the job is too small for a worker, and the job runs here', async () => {
    const url = workerModule('answer');
    early.startEarlyWorker(url, 2);
    const { results, workers } = await job(url, undefined, 1000);
    expect(workers).toBe(0);
    expect(results).toEqual(ids.map((id) => `main:${id}`));
    expect(early.takeEarlyWorker(url)).toBeUndefined();
  });

  it('is used from a smaller job than a worker started with the job (EARLY_WORKER_MIN_BYTES in large rollouts)', async () => {
    const bytes = jobWorkers.EARLY_WORKER_MIN_BYTES;
    expect(bytes).toBeLessThan(jobWorkers.WORKER_MIN_BYTES);
    expect(bytes / ids.length).toBeGreaterThanOrEqual(jobWorkers.EARLY_WORKER_MIN_ROLLOUT_BYTES);
    // Without a waiting worker: none.
    expect((await job(workerModule('answer'), undefined, bytes)).workers).toBe(0);
    const url = workerModule('answer');
    early.startEarlyWorker(url);
    const { results, workers } = await job(url, undefined, bytes);
    expect(workers).toBe(os.availableParallelism() > 1 ? 1 : 0);
    expect(results.map((r) => r.slice(r.indexOf(':') + 1))).toEqual(ids);
  });

  it('is not started for one thread', () => {
    const url = workerModule('answer');
    early.startEarlyWorker(url, 1);
    expect(early.takeEarlyWorker(url)).toBeUndefined();
  });

  it('that died while waiting is not waited for: the job starts a worker of its own or runs here', async () => {
    const url = workerModule('die');
    early.startEarlyWorker(url, 2);
    // Until its exit has been seen.
    while (early.earlyWorkerWaiting(url)) await new Promise((resolve) => setTimeout(resolve, 5));
    const { results } = await job(url, 2);
    expect(results).toEqual(ids.map((id) => `main:${id}`));
  });
});
