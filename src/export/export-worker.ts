/**
 * Worker thread for `exportStore` (src/export/export-store.ts): builds and serialises the
 * rollouts it claims; the locked copy of each comes from the main thread on request.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { workerSnapshotSource } from '../rollout-read/build-many.js';
import { JsonWriter } from '../json/canonical-json.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { reviveError } from '../jsonl/remote-jsonl.js';
import type { StoreOptions } from '../ops/store.js';
import { serveRolloutWorker } from '../threads/parallel-rollouts.js';
import { exportItem, exportItemTransfer, type ExportItem, type ExportItemOptions } from './export-item.js';

/** What export-worker.ts receives as `workerData.shared`. */
export interface ExportWorkerShared {
  store: StoreOptions;
  item: ExportItemOptions;
}

if (parentPort) {
  // This thread's JSON reader and writer for the rollouts it exports.
  const own = { writer: new JsonWriter(), jsonReader: new JsonBytesReader() };
  serveRolloutWorker(
    parentPort,
    workerData,
    async (id, _index, sharedData, request, giveBack) => {
      const { store, item } = sharedData as ExportWorkerShared;
      return exportItem(store, id, item, workerSnapshotSource(request, giveBack), own);
    },
    reviveError,
    (item) => exportItemTransfer(item as ExportItem),
  );
}
