/**
 * The worker thread behind `tokcap watch`'s live view: it computes rows (facts, status, preview
 * build: JSON parsing, chain building, digests) from copies the main thread made, so that the
 * thread that handles keys and draws the screen spends its time on copies and frames only. This
 * thread takes no rollout lock and opens no capture file: every copy was taken by the main
 * thread, one rollout lock at a time (docs/format.md#lock-mechanism; src/watch/row-batch.ts).
 *
 * Protocol (plain data): main → worker `{ type: 'batch', seq, store, arena, records, fds }`
 * (`arena` transferred: the bytes of every copy of the batch; `fds`: the descriptors the copies
 * left open, which this thread closes), answered by
 * `{ type: 'batch', seq, outcomes, arena }` (the arena moved back for the next batch).
 */
import { parentPort } from 'node:worker_threads';
import { JsonBytesReader } from '../json/parse-json.js';
import { refuseRolloutLocksInThisThread } from '../lock/rollout-lock.js';
import { closeDescriptors, type RolloutCopyRecord } from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import { rowFromCopy, type RowReadOutcome } from './row-batch.js';

export interface BatchRequest {
  type: 'batch';
  seq: number;
  store: StoreOptions;
  arena: Uint8Array;
  records: RolloutCopyRecord[];
  /** Descriptors of the files copied (their locks released): this thread closes them. */
  fds: number[];
}

export interface BatchReply {
  type: 'batch';
  seq: number;
  outcomes: RowReadOutcome[];
  arena: Uint8Array;
}

const port = parentPort;
if (port) {
  refuseRolloutLocksInThisThread();
  // One reader for every rollout this thread reads: its parser's buffers are made once.
  const json = new JsonBytesReader();
  port.on('message', async (m: BatchRequest) => {
    if (m.type !== 'batch') return;
    // Off the main thread, which copies the next batch meanwhile.
    closeDescriptors(m.fds);
    const outcomes: RowReadOutcome[] = [];
    for (let i = 0; i < m.records.length; i++) outcomes.push(await rowFromCopy(m.store, m.arena, m.records[i], json));
    const reply: BatchReply = { type: 'batch', seq: m.seq, outcomes, arena: m.arena };
    port.postMessage(reply, [m.arena.buffer as ArrayBuffer]);
  });
}
