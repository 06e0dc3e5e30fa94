/**
 * Row reads in a worker thread (read-worker.ts), for the live view: keys and drawing stay on the
 * main thread, whatever the store makes the reader do. The worker is started on the first read;
 * if it cannot start (no compiled worker next to this module, e.g. when running from sources) or
 * dies, reads fall back to this thread, transparently (the requests in flight are redone here).
 * The worker takes no rollout lock: this thread makes the copies it asks for under the lock, in
 * turn with its own reads (one rollout lock at a time per process, docs/format.md#lock-mechanism).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { serveSnapshotRequest } from '../build/build-many.js';
import { TokcapError } from '../errors.js';
import { giveBackCopyBuffer } from '../jsonl/copy-buffers.js';
import { serveJsonlRequest } from '../jsonl/remote-jsonl.js';
import type { FileKind } from '../layout/file-names.js';
import type { StoreOptions } from '../ops/store.js';
import { replyToWorker, type ThreadGive, type ThreadRequest } from '../threads/thread-requests.js';
import { readRow, type RowRead } from './preview.js';
import type { ReadRequest, WatchCopyRequest } from './read-worker.js';

type RowReply = { type: 'row'; seq: number; ok: true; read: RowRead } | { type: 'row'; seq: number; ok: false; error: { kind: string; message: string } };
type FromWorker = RowReply | ThreadRequest | ThreadGive;

/** This thread: makes the copy a worker asked for, under the rollout's lock. */
function serveCopy(q: WatchCopyRequest) {
  return q.kind === 'jsonl' ? serveJsonlRequest(q.request) : serveSnapshotRequest(q.store)(q.request);
}

interface Pending {
  request: ReadRequest;
  resolve: (r: RowRead) => void;
  reject: (e: unknown) => void;
}

export interface WorkerReaders {
  read(store: StoreOptions, id: string, files: ReadonlySet<FileKind>): Promise<RowRead>;
  /** Whether reads currently go to the worker (false before the first read and after a fallback). */
  readonly inWorker: boolean;
  /** Lets the reads in flight finish (at most `timeoutMs`), then stops the worker. */
  close(timeoutMs?: number): Promise<void>;
}

export function createWorkerReaders(workerUrl: URL = new URL('./read-worker.js', import.meta.url)): WorkerReaders {
  let worker: Worker | null = null;
  let broken = !existsSync(fileURLToPath(workerUrl));
  let closed = false;
  let seq = 0;
  const pending = new Map<number, Pending>();
  let drained: (() => void) | null = null;

  const settle = () => {
    if (pending.size === 0 && drained) drained();
  };

  const fallBack = () => {
    broken = true;
    const w = worker;
    worker = null;
    void w?.terminate();
    // Redo what was in flight, here.
    for (const [key, p] of [...pending]) {
      pending.delete(key);
      readRow(p.request.store, p.request.id, new Set(p.request.files)).then(p.resolve, p.reject);
    }
    settle();
  };

  const start = (): Worker | null => {
    if (worker || broken || closed) return worker;
    try {
      const w = new Worker(workerUrl);
      w.unref();
      w.on('message', (reply: FromWorker) => {
        if (reply.type === 'request') {
          replyToWorker(w, reply.seq, serveCopy(reply.request as WatchCopyRequest));
          return;
        }
        if (reply.type === 'give') {
          giveBackCopyBuffer(reply.memory);
          return;
        }
        const p = pending.get(reply.seq);
        if (!p) return;
        pending.delete(reply.seq);
        if (reply.ok) p.resolve(reply.read);
        else p.reject(new TokcapError(reply.error.kind as TokcapError['kind'], reply.error.message, { rolloutId: p.request.id }));
        settle();
      });
      w.on('error', fallBack);
      w.on('exit', () => {
        if (worker === w) fallBack();
      });
      worker = w;
    } catch {
      broken = true;
    }
    return worker;
  };

  return {
    get inWorker() {
      return worker !== null && !broken;
    },
    read(store, id, files) {
      const w = start();
      if (!w) return readRow(store, id, files);
      const request: ReadRequest = { type: 'read', seq: ++seq, store: { dir: store.dir, lockWaitMs: store.lockWaitMs }, id, files: [...files] };
      return new Promise<RowRead>((resolve, reject) => {
        pending.set(request.seq, { request, resolve, reject });
        w.postMessage(request);
      });
    },
    async close(timeoutMs = 2000) {
      closed = true;
      if (pending.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          drained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const w = worker;
      worker = null;
      if (w) await w.terminate();
    },
  };
}
