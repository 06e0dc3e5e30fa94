/**
 * mapRolloutsParallel with a real worker thread that dies (the compiled module, as the binary
 * runs it): its chunk is computed in the main thread as soon as its exit is seen, so results keep
 * flowing out in order instead of piling up until the end of the job. The main thread computes
 * nothing until the worker's thread is gone (read from /proc/self/task) and its exit event had
 * its turn, so what is held back does not depend on how soon that happens.
 */
import * as fs from 'node:fs';
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { mapRolloutsParallel as MapRolloutsParallel } from '../../../src/threads/parallel-rollouts.js';
import { ROOT, ensureBuilt } from '../../support/cli.js';

let mapRolloutsParallel: typeof MapRolloutsParallel;
let workerUrl: URL;
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  const parallel = pathToFileURL(path.join(ROOT, 'dist', 'src', 'threads', 'parallel-rollouts.js')).href;
  ({ mapRolloutsParallel } = (await import(parallel)) as { mapRolloutsParallel: typeof MapRolloutsParallel });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-dying-worker-'));
  // A worker that dies on the first rollout it computes, with its chunk claimed.
  const file = path.join(dir, 'dying-worker.mjs');
  fs.writeFileSync(
    file,
    `import { parentPort, workerData } from 'node:worker_threads';
     import { serveRolloutWorker } from ${JSON.stringify(parallel)};
     serveRolloutWorker(parentPort, workerData, async () => process.exit(1), (e) => new Error(e.message));`,
  );
  workerUrl = pathToFileURL(file);
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a worker that dies', () => {
  it('leaves its chunk to the main thread at once: every result, in order, few held back', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `r${String(i).padStart(3, '0')}`);
    const tasks = () => fs.readdirSync('/proc/self/task');
    const before = new Set(tasks());
    let workerGone: Promise<void> | undefined;
    let workers = 0;
    let computed = 0;
    let emitted = 0;
    let mostHeld = 0;
    const out: string[] = [];
    await mapRolloutsParallel<string>(ids, {
      workerUrl,
      shared: null,
      chunkSize: 3,
      threads: { threads: 2, onWorkers: (n) => (workers = n) },
      local: async (id) => {
        workerGone ??= (async () => {
          const born = tasks().filter((t) => !before.has(t));
          if (born.length === 0) throw new Error('no worker thread started');
          while (born.every((t) => fs.existsSync(`/proc/self/task/${t}`))) await sleep(1);
          // The thread has ended: its exit event comes in the next turn of the event loop.
          await immediate();
          await immediate();
        })();
        await workerGone;
        computed++;
        // Results computed and not yet emitted: what the job holds in memory.
        mostHeld = Math.max(mostHeld, computed - emitted);
        return `main:${id}`;
      },
      emit: (r) => {
        emitted++;
        out.push(r);
      },
    });
    expect(workers).toBe(1);
    expect(out).toEqual(ids.map((id) => `main:${id}`));
    // A few chunks of 3 at most (6 as the job is written); computed at the end of the job
    // instead, the dead chunk would hold back every result after it (297 here).
    expect(mostHeld).toBeLessThanOrEqual(12);
  });
});
