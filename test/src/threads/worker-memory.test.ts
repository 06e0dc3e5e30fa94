/**
 * mapRolloutsParallel with a real worker thread (the compiled module, as the binary runs it): the
 * memory of a worker's result, moved to this thread, goes back to that worker (`fromWorker`'s
 * `giveBack`) and serves its next results (`reuse`), without the worker turning its event loop.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { mapRolloutsParallel as MapRolloutsParallel } from '../../../src/threads/parallel-rollouts.js';
import { ROOT, ensureBuilt } from '../../support/cli.js';

let mapRolloutsParallel: typeof MapRolloutsParallel;
let workerUrl: URL;
let dir: string;

interface Result {
  id: string;
  /** Its memory was a result's before, moved back by this thread. */
  reused: boolean;
  memory: ArrayBuffer;
}

beforeAll(async () => {
  await ensureBuilt();
  const parallel = pathToFileURL(path.join(ROOT, 'dist', 'src', 'threads', 'parallel-rollouts.js')).href;
  ({ mapRolloutsParallel } = (await import(parallel)) as { mapRolloutsParallel: typeof MapRolloutsParallel });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-worker-memory-'));
  const file = path.join(dir, 'memory-worker.mjs');
  // Each item asks this thread something first (as export's workers ask for their copies): a
  // round trip in which this thread has handled the worker's earlier chunks.
  fs.writeFileSync(
    file,
    `import { parentPort, workerData } from 'node:worker_threads';
     import { serveRolloutWorker } from ${JSON.stringify(parallel)};
     serveRolloutWorker(
       parentPort,
       workerData,
       async (id, _i, _shared, request, _giveBack, reuse) => {
         await request(id);
         const back = reuse(64);
         return { id, reused: back !== undefined, memory: back ?? new ArrayBuffer(64) };
       },
       (e) => new Error(e.message),
       (r) => [r.memory],
     );`,
  );
  workerUrl = pathToFileURL(file);
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a worker's result memory", () => {
  it('comes back to the worker once this thread has it, and serves its next results', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(3, '0')}`);
    // This thread's one chunk waits until the worker has computed every other.
    let done = 0;
    let othersDone: () => void = () => undefined;
    const others = new Promise<void>((resolve) => (othersDone = resolve));
    const results = await mapRolloutsParallel<Result | string, string>(ids, {
      workerUrl,
      shared: null,
      chunkSize: 2,
      threads: { threads: 2 },
      onDone: (n) => {
        done += n;
        if (done >= ids.length - 2) othersDone();
      },
      local: async (id) => {
        await others;
        return id;
      },
      serve: async () => ({ value: null }),
      fromWorker: (r, giveBack) => giveBack((r as Result).memory),
    });
    expect(results.map((r) => (typeof r === 'string' ? r : r.id))).toEqual(ids);
    expect(results.some((r) => typeof r !== 'string' && r.reused)).toBe(true);
  });
});
