/**
 * Worker thread for `verifyDirectory` (src/threads/parallel-rollouts.ts): verifies the rollouts it
 * claims, taking each rollout's lock itself in turn with the other threads (src/lock/lock-turns.ts). A rollout that cannot be
 * verified (lock timeout, I/O error) comes back as its error, not retried.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { JsonBytesReader } from '../json/parse-json.js';
import { reviveError } from '../jsonl/remote-jsonl.js';
import type { StoreOptions } from '../ops/store.js';
import { serialiseError, serveRolloutWorker } from '../threads/parallel-rollouts.js';
import type { WorkerFailure } from './verify-directory.js';
import { verifyRollout } from './verify-rollout.js';

if (parentPort) {
  // This thread's JSON reader for the rollouts it verifies.
  const jsonReader = new JsonBytesReader();
  serveRolloutWorker(
    parentPort,
    workerData,
    async (id, _index, shared) => {
      try {
        return await verifyRollout(shared as StoreOptions, id, { jsonReader });
      } catch (e) {
        return { failed: serialiseError(e) } satisfies WorkerFailure;
      }
    },
    reviveError,
  );
}
