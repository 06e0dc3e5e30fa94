/**
 * Worker thread for `verifyDirectory` (src/threads/parallel-rollouts.ts): verifies the rollouts it
 * claims; J is copied under the lock by the main thread on request. A rollout that cannot be
 * verified (lock timeout, I/O error) comes back as its error, not retried.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { JsonBytesReader } from '../json/parse-json.js';
import { jsonlViaMain, reviveError } from '../jsonl/remote-jsonl.js';
import type { StoreOptions } from '../ops/store.js';
import { serialiseError, serveRolloutWorker } from '../threads/parallel-rollouts.js';
import type { WorkerFailure } from './verify-directory.js';
import { verifyRollout } from './verify-rollout.js';

if (parentPort) {
  // This thread's JSON reader for the rollouts it verifies.
  const json = new JsonBytesReader();
  serveRolloutWorker(
    parentPort,
    workerData,
    async (id, _index, shared, request, giveBack) => {
      try {
        return await verifyRollout(shared as StoreOptions, id, { readJsonl: jsonlViaMain(request, giveBack), json });
      } catch (e) {
        return { failed: serialiseError(e) } satisfies WorkerFailure;
      }
    },
    reviveError,
  );
}
