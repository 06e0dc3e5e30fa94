/**
 * Worker thread for `directoryFacts` over many rollouts (src/threads/parallel-rollouts.ts): computes
 * the facts of the rollouts it claims; J is copied under the lock by the main thread on request.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { jsonlViaMain, reviveError } from '../jsonl/remote-jsonl.js';
import { serveRolloutWorker } from '../threads/parallel-rollouts.js';
import { kindsOf, type FactsShared } from './directory-facts.js';
import { rolloutFacts } from './rollout-facts.js';
import { JsonBytesReader } from '../json/parse-json.js';

if (parentPort) {
  // This thread's JSON reader for the rollouts it reads.
  const jsonReader = new JsonBytesReader();
  serveRolloutWorker(
    parentPort,
    workerData,
    (id, index, shared, request, giveBack) => {
      const s = shared as FactsShared;
      return rolloutFacts(s.store, id, {
        deep: s.deep,
        files: kindsOf(s.files[index]),
        readJsonl: jsonlViaMain(request, giveBack),
        jsonReader,
      });
    },
    reviveError,
  );
}
