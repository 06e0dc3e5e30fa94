/**
 * Worker thread for `buildMany` (src/rollout-read/build-many.ts): builds and serialises the rollouts it
 * claims, taking each rollout's lock itself in turn with the other threads (src/lock/lock-turns.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { JsonWriter } from '../json/canonical-json.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { reviveError } from '../jsonl/remote-jsonl.js';
import { serveRolloutWorker } from '../threads/parallel-rollouts.js';
import type { BuildWorkerShared } from './build-many.js';
import { outcomeOf } from './build-outcome.js';

/**
 * Memory for a serialised result, which moves to the main thread: not this thread's copy
 * buffers (src/jsonl/copy-buffers.ts), which it would drain, so that each copy of J would go
 * into new memory, its page faults taken while holding the process's lock turn (measured: the
 * worker held the turn a median 4-5 ms per rollout, against ~1 ms reusing a buffer). The main
 * thread moves each result's memory back once written (build-many.ts `fromWorker`): reused here,
 * else new, with room for a larger result next time.
 */
const outputMemory = (reuse: (size: number) => ArrayBuffer | undefined) => (size: number) => {
  const memory = reuse(size) ?? Buffer.allocUnsafeSlow(size + (size >> 2)).buffer;
  return Buffer.from(memory, 0, size);
};

if (parentPort) {
  // This thread's JSON writer and reader for the rollouts it builds.
  const writer = new JsonWriter();
  const jsonReader = new JsonBytesReader();
  serveRolloutWorker(
    parentPort,
    workerData,
    async (id, _index, sharedData, _request, _giveBack, reuse) => {
      const { store, freeze, model, serialise, status, divergences } = sharedData as BuildWorkerShared;
      return outcomeOf(store, id, {
        freeze,
        status,
        model,
        serialise,
        writer,
        jsonReader,
        outputMemory: outputMemory(reuse),
        divergences,
      });
    },
    reviveError,
    // The serialised result is moved, not copied, to the main thread.
    (outcome) => (outcome.output instanceof Uint8Array ? [outcome.output.buffer as ArrayBuffer] : []),
  );
}
