/**
 * A worker started before its job (src/threads/early-workers.ts), with real worker threads from
 * the compiled modules (as the binary runs them): the job takes it as its worker, a job too small
 * for a worker stops it, and one that died while waiting is not waited for.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
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

/**
 * A worker module (a new URL each time: one early worker per module) answering `worker:ID`, or
 * dying at once. Started on its job at once, it lists `shared.list` as the job's ids.
 */
function workerModule(body: 'answer' | 'die'): URL {
  const file = path.join(dir, `worker-${counter++}.mjs`);
  const parallel = pathToFileURL(path.join(ROOT, 'dist', 'src', 'threads', 'parallel-rollouts.js')).href;
  fs.writeFileSync(
    file,
    body === 'die'
      ? `process.exit(1);`
      : `import { parentPort, workerData } from 'node:worker_threads';
         import { serveRolloutWorker } from ${JSON.stringify(parallel)};
         serveRolloutWorker(parentPort, workerData, async (id) => 'worker:' + id, (e) => new Error(e.message), undefined, async (shared) => shared.list);`,
  );
  return pathToFileURL(file);
}

const ids = Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(3, '0')}`);

/**
 * The job with `threads`. With `waitForWorker`, this thread's first item (it claims the first
 * chunk) waits for a chunk done elsewhere: the worker computes at least one.
 */
async function job(workerUrl: URL, threads?: number, estimatedBytes?: number, waitForWorker = false, shared: unknown = null) {
  let workers = -1;
  let doneElsewhere: () => void = () => undefined;
  const firstDone = new Promise<void>((resolve) => (doneElsewhere = resolve));
  const results = await mapRolloutsParallel<string>(ids, {
    workerUrl,
    shared,
    workersLock: true,
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
  ({ mapRolloutsParallel } = (await import(url('parallel-rollouts.js'))) as { mapRolloutsParallel: typeof MapRolloutsParallel });
  early = (await import(url('early-workers.js'))) as typeof Early;
  jobWorkers = (await import(url('job-workers.js'))) as typeof JobWorkers;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-early-worker-'));
}, 120_000);

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
  }, 30_000);

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
  }, 30_000);

  it('is not started for one thread', () => {
    const url = workerModule('answer');
    early.startEarlyWorker(url, 1);
    expect(early.takeEarlyWorker(url)).toBeUndefined();
  });

  it('that died while waiting is not waited for: the job starts a worker of its own or runs here', async () => {
    const url = workerModule('die');
    early.startEarlyWorker(url, 2);
    // Until it has exited.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { results } = await job(url, 2);
    expect(results).toEqual(ids.map((id) => `main:${id}`));
  }, 30_000);

  describe('started on its job at once (startEarlyJob)', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it("computes before the job; the job adopts it with what it computed: results in input order", async () => {
      const url = workerModule('answer');
      early.startEarlyJob(url, { shared: { list: ids }, chunkSize: 2 }, 2);
      // Long enough to list and compute chunks with nobody to take them yet.
      await sleep(1000);
      // Too small for a worker on its own: adopted all the same (it has been computing).
      const { results, workers } = await job(url, undefined, 1000, false, { list: ids });
      expect(workers).toBe(1);
      expect(results.map((r) => r.slice(r.indexOf(':') + 1))).toEqual(ids);
      expect(results.some((r) => r.startsWith('worker:'))).toBe(true);
      expect(early.takeEarlyWorker(url)).toBeUndefined();
    }, 30_000);

    it('is stopped and its results dropped when the job has other ids (the directory changed)', async () => {
      const url = workerModule('answer');
      const listed = [...ids.slice(0, 10), 'r0005x', ...ids.slice(10)];
      early.startEarlyJob(url, { shared: { list: listed }, chunkSize: 2 }, 2);
      await sleep(1000);
      const { results, workers } = await job(url, undefined, 1000, false, { list: listed });
      expect(workers).toBe(0);
      expect(results).toEqual(ids.map((id) => `main:${id}`));
    }, 30_000);

    it('is stopped when the job has other shared data (an option the early start did not see)', async () => {
      const url = workerModule('answer');
      early.startEarlyJob(url, { shared: { list: ids, lockWaitMs: 10_000 }, chunkSize: 2 }, 2);
      await sleep(500);
      const { results, workers } = await job(url, undefined, 1000, false, { list: ids, lockWaitMs: 1000 });
      expect(workers).toBe(0);
      expect(results).toEqual(ids.map((id) => `main:${id}`));
    }, 30_000);

    it('that died before the job leaves the job to this thread', async () => {
      const url = workerModule('die');
      early.startEarlyJob(url, { shared: { list: ids }, chunkSize: 2 }, 2);
      await sleep(500);
      const { results } = await job(url, undefined, 1000, false, { list: ids });
      expect(results).toEqual(ids.map((id) => `main:${id}`));
    }, 30_000);

    it('does not keep the process alive when no job comes', async () => {
      const url = workerModule('answer');
      const earlyUrl = pathToFileURL(path.join(ROOT, 'dist', 'src', 'threads', 'early-workers.js')).href;
      // A process that starts it and ends without a job: it must exit by itself, promptly.
      const script = `import { startEarlyJob } from ${JSON.stringify(earlyUrl)};
        startEarlyJob(new URL(${JSON.stringify(url.href)}), { shared: { list: ${JSON.stringify(ids)} }, chunkSize: 2 }, 2);`;
      const started = Date.now();
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
      expect(r.status).toBe(0);
      expect(Date.now() - started).toBeLessThan(15_000);
    }, 30_000);
  });
});
