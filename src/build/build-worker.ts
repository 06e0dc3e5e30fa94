/**
 * Worker thread for `buildMany` (src/build/build-many.ts): builds and serialises the rollouts it
 * claims, taking each rollout's lock itself in turn with the other threads (src/lock/lock-turns.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { JsonWriter } from '../json/canonical-json.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { reviveError } from '../jsonl/remote-jsonl.js';
import { serveRolloutWorker } from '../threads/parallel-rollouts.js';
import type { BuildWorkerShared } from './build-many.js';
import { buildOutcome } from './build-outcome.js';

if (parentPort) {
  // This thread's JSON writer and reader for the rollouts it builds.
  const writer = new JsonWriter();
  const json = new JsonBytesReader();
  serveRolloutWorker(
    parentPort,
    workerData,
    async (id, _index, sharedData) => {
      const { store, freeze, model, serialise } = sharedData as BuildWorkerShared;
      return buildOutcome(store, id, { freeze, model, serialise, writer, json });
    },
    reviveError,
    // The serialised result is moved, not copied, to the main thread.
    (outcome) => (outcome.json instanceof Uint8Array ? [outcome.json.buffer as ArrayBuffer] : []),
  );
}
