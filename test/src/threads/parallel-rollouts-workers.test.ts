/**
 * mapRolloutsParallel with a real worker thread that dies (the compiled module, as the binary
 * runs it): its chunk is computed in the main thread right away, so results keep flowing out in
 * order instead of piling up until the end of the job.
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
}, 120_000);

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a worker that dies', () => {
  it('leaves its chunk to the main thread at once: every result, in order, few held back', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `r${String(i).padStart(3, '0')}`);
    let computed = 0;
    let emitted = 0;
    let mostHeld = 0;
    const out: string[] = [];
    await mapRolloutsParallel<string>(ids, {
      workerUrl,
      shared: null,
      chunkSize: 3,
      threads: { threads: 2 },
      local: async (id) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
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
    expect(out).toEqual(ids.map((id) => `main:${id}`));
    // Before, the dead worker's chunk was computed after all the others, and every result
    // after it was held until then (here close to 300).
    expect(mostHeld).toBeLessThan(30);
  });
});
