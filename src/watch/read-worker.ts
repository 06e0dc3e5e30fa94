/**
 * The worker thread behind `tokcap watch`'s live view: it computes rows (facts, status, preview
 * build: JSON parsing, chain building, digests) from copies the main thread made, so that the
 * thread that handles keys and draws the screen spends its time on copies and frames only. This
 * thread takes no rollout lock and opens no capture file: every copy was taken by the main
 * thread, one rollout lock at a time (docs/format.md#lock-mechanism; src/watch/row-batch.ts).
 * At the start of a live load it also lists the directory and takes its share of the stat pass
 * (shared-stat.ts: names and mtimes only).
 *
 * Protocol (plain data): main → worker `{ type: 'batch', seq, store, arena, records, fds }`
 * (`arena` transferred: the bytes of every copy of the batch; `records`: where each copy is in it
 * (batch-codec.ts); `fds`: the descriptors the copies left open, which this thread closes),
 * answered by `{ type: 'batch', seq, outcomes, arena }` (the rows, batch-codec.ts; the arena
 * moved back for the next batch);
 * `{ type: 'scan', seq, dir }`, answered by `{ type: 'listing', seq, listing }` (or `failed`: the
 * main thread lists the directory itself) and, once this thread has no chunk of the stat pass
 * left to claim, `{ type: 'stat-done', seq }`, then `{ type: 'ready' }` once it has loaded the
 * modules that read rows (the main thread reads the batches it asks for before that itself);
 * `{ type: 'rescan', seq, dir }` (a rescan of a loaded model: the periodic backstop), answered by
 * `{ type: 'rescanned', seq, listing, keys }` (every listed rollout's change signature,
 * file-signature.ts `listedSignatures`, its newest mtime in the listing's `mtimes`; or `failed`:
 * the main thread lists and stats itself).
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { parentPort } from 'node:worker_threads';
import type { JsonBytesReader } from '../json/parse-json.js';
import type { StoreOptions } from '../ops/store.js';
import { listDirectory } from '../layout/scan-directory.js';
import type { RowReadOutcome } from './row-batch.js';
import type { EncodedOutcomes, EncodedRecords } from './batch-codec.js';
import { listedSignatures } from './file-signature.js';
import { IdText, shareListing, sharedListing, statNextChunk, type SharedListing } from './shared-stat.js';

export interface BatchRequest {
  type: 'batch';
  seq: number;
  store: StoreOptions;
  arena: Uint8Array;
  records: EncodedRecords;
  /** Descriptors of the files copied (their locks released): this thread closes them. */
  fds: number[];
}

export interface BatchReply {
  type: 'batch';
  seq: number;
  outcomes: EncodedOutcomes;
  arena: Uint8Array;
}

export interface ScanRequest {
  type: 'scan';
  seq: number;
  dir: string;
}

export type ScanReply =
  | { type: 'listing'; seq: number; listing: SharedListing }
  | { type: 'listing'; seq: number; failed: true }
  | { type: 'stat-done'; seq: number };

export interface RescanRequest {
  type: 'rescan';
  seq: number;
  dir: string;
}

export type RescanReply =
  /** `keys` in the order of the listing's ids; the newest mtime of each in `listing.mtimes`. */
  | { type: 'rescanned'; seq: number; listing: SharedListing; keys: Float64Array }
  | { type: 'rescanned'; seq: number; failed: true };

/** Rollouts stat'ed by a rescan between two turns of this thread's event loop (its batches go on in between). */
const RESCAN_CHUNK = 256;

/** Sent once this thread has loaded the modules that read rows (after a load's stat pass). */
export interface ReadyReply {
  type: 'ready';
}

const port = parentPort;
if (port) {
  // The modules that read rows (parsers, chain building, digests, the batches' codec, the lock
  // module that refuses locks here) are loaded after the listing and the stat pass of a live
  // load, which need none of them: the first screen waits for those, and its batch is read by
  // the main thread meanwhile (it is told when they are loaded). No batch is read here before
  // they are loaded, so no lock could be taken here before the refusal.
  let reading:
    | Promise<{
        rowFromCopy: typeof import('./row-batch.js').rowFromCopy;
        closeDescriptors: typeof import('../ops/rollout-copy.js').closeDescriptors;
        codec: typeof import('./batch-codec.js');
        jsonReader: JsonBytesReader;
      }>
    | undefined;
  const readers = () =>
    (reading ??= Promise.all([
      import('../lock/rollout-lock.js'),
      import('./row-batch.js'),
      import('../ops/rollout-copy.js'),
      import('./batch-codec.js'),
      import('../json/parse-json.js'),
    ]).then(([lock, batch, copy, codec, parse]) => {
      lock.refuseRolloutLocksInThisThread();
      return {
        rowFromCopy: batch.rowFromCopy,
        closeDescriptors: copy.closeDescriptors,
        codec,
        // One reader for every rollout this thread reads: its parser's buffers are made once.
        jsonReader: new parse.JsonBytesReader(),
      };
    }));
  port.on('message', async (m: BatchRequest | ScanRequest | RescanRequest) => {
    if (m.type === 'rescan') {
      let reply: RescanReply;
      try {
        const { shared, ids } = sharedListing(listDirectory(m.dir));
        const keys = new Float64Array(ids.length);
        const mtimes = new Float64Array(shared.mtimes);
        for (let from = 0; from < ids.length; from += RESCAN_CHUNK) {
          // The batches of changed rollouts are read in between: a rescan of 100,000 takes seconds.
          if (from > 0) await yieldToEventLoop();
          listedSignatures(m.dir, ids, shared.masks, from, Math.min(ids.length, from + RESCAN_CHUNK), keys, mtimes);
        }
        reply = { type: 'rescanned', seq: m.seq, listing: shared, keys };
      } catch {
        reply = { type: 'rescanned', seq: m.seq, failed: true };
      }
      port.postMessage(reply, 'keys' in reply ? [reply.keys.buffer as ArrayBuffer] : []);
      return;
    }
    if (m.type === 'scan') {
      let shared: SharedListing;
      try {
        shared = shareListing(listDirectory(m.dir));
      } catch {
        port.postMessage({ type: 'listing', seq: m.seq, failed: true } satisfies ScanReply);
        return;
      }
      port.postMessage({ type: 'listing', seq: m.seq, listing: shared } satisfies ScanReply);
      // No array of 100,000 id strings here: each is cut from the listing's text when stat'ed.
      const ids = new IdText(shared.ids, shared.masks.length);
      while (statNextChunk(m.dir, ids, shared));
      port.postMessage({ type: 'stat-done', seq: m.seq } satisfies ScanReply);
      // Batches sent before this are read by the main thread (worker-readers.ts).
      void readers().then(() => {
        port.postMessage({ type: 'ready' } satisfies ReadyReply);
      });
      return;
    }
    if (m.type !== 'batch') return;
    const { rowFromCopy, closeDescriptors, codec, jsonReader } = await readers();
    // Off the main thread, which copies the next batch meanwhile.
    closeDescriptors(m.fds);
    const records = codec.decodeRecords(m.records);
    const outcomes: RowReadOutcome[] = [];
    for (let i = 0; i < records.length; i++) outcomes.push(await rowFromCopy(m.store, m.arena, records[i], jsonReader));
    const reply: BatchReply = { type: 'batch', seq: m.seq, outcomes: codec.encodeOutcomes(outcomes), arena: m.arena };
    port.postMessage(reply, [m.arena.buffer as ArrayBuffer, reply.outcomes.numbers.buffer as ArrayBuffer]);
  });
}
