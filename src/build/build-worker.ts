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
import { outcomeOf } from './preview-outcome.js';

/**
 * Memory for a serialised result, which moves to the main thread: new, not this thread's copy
 * buffers (src/jsonl/copy-buffers.ts), which it would drain, so that each copy of J would go
 * into new memory, its page faults taken while holding the process's lock turn (measured: the
 * worker held the turn a median 4-5 ms per rollout, against ~1 ms reusing a buffer).
 */
const outputMemory = (size: number) => Buffer.allocUnsafeSlow(size);

if (parentPort) {
  // This thread's JSON writer and reader for the rollouts it builds.
  const writer = new JsonWriter();
  const json = new JsonBytesReader();
  serveRolloutWorker(
    parentPort,
    workerData,
    async (id, _index, sharedData) => {
      const { store, freeze, model, serialise, status } = sharedData as BuildWorkerShared;
      return outcomeOf(store, id, { freeze, status, model, serialise, writer, json, outputMemory });
    },
    reviveError,
    // The serialised result is moved, not copied, to the main thread.
    (outcome) => (outcome.json instanceof Uint8Array ? [outcome.json.buffer as ArrayBuffer] : []),
  );
}
