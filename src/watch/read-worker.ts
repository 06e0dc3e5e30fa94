/**
 * The worker thread behind `tokcap watch`'s live view: it performs the row reads (facts and
 * preview build: JSON parsing, chain building, digests) so that the thread that handles keys and
 * draws the screen never spends its time there. Same read-only code as in-thread (`readRow`),
 * except that this thread takes no rollout lock: the copies of J made under a lock are asked of
 * the main thread (src/threads/thread-requests.ts), which takes them in turn with its own (the
 * detail view's reads), so the process holds one rollout lock at a time (docs/format.md#lock-mechanism).
 *
 * Protocol (plain data): main → worker `{ type: 'read', seq, store, id, files }`, answered by
 * `{ type: 'row', seq, ok: true, read }` or `{ type: 'row', seq, ok: false, error: { kind, message } }`;
 * the copy requests, their replies and memory given back as in thread-requests.ts, where a
 * request is a `WatchCopyRequest`.
 */
import { parentPort } from 'node:worker_threads';
import { workerSnapshotSource, type SnapshotRequest } from '../build/build-many.js';
import { toTokcapError } from '../errors.js';
import { jsonlViaMain, reviveError, type JsonlRequest } from '../jsonl/remote-jsonl.js';
import type { FileKind } from '../layout/file-names.js';
import { refuseRolloutLocksInThisThread } from '../lock/rollout-lock.js';
import type { StoreOptions } from '../ops/store.js';
import { mainThreadRequests } from '../threads/thread-requests.js';
import { readRow } from './preview.js';

export interface ReadRequest {
  type: 'read';
  seq: number;
  store: StoreOptions;
  id: string;
  files: FileKind[];
}

/** A copy the worker needs taken under a lock: J's bytes for the facts, or the preview's snapshot. */
export type WatchCopyRequest = { kind: 'jsonl'; request: JsonlRequest } | { kind: 'snapshot'; store: StoreOptions; request: SnapshotRequest };

const port = parentPort;
if (port) {
  refuseRolloutLocksInThisThread();
  const main = mainThreadRequests(port, reviveError);
  const readJsonl = jsonlViaMain((request) => main.request({ kind: 'jsonl', request: request as JsonlRequest } satisfies WatchCopyRequest), main.giveBack);
  port.on('message', (m: ReadRequest) => {
    if (main.settle(m) || m.type !== 'read') return;
    const snapshots = workerSnapshotSource((request) => main.request({ kind: 'snapshot', store: m.store, request } satisfies WatchCopyRequest), main.giveBack);
    readRow(m.store, m.id, new Set(m.files), { readJsonl, readOnlyCopy: (_store, id) => snapshots.readOnly(id) }).then(
      (read) => port.postMessage({ type: 'row', seq: m.seq, ok: true, read }),
      (e: unknown) => {
        const err = toTokcapError(e, { rolloutId: m.id });
        port.postMessage({ type: 'row', seq: m.seq, ok: false, error: { kind: err.kind, message: err.message } });
      },
    );
  });
}
