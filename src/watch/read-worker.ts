/**
 * The worker thread behind `tokcap watch`'s live view: it performs the row reads (facts and
 * preview build: file I/O, JSON parsing, chain building, digests) so that the thread that handles
 * keys and draws the screen never spends its time there. Same read-only code as in-thread
 * (`readRow`): short shared locks on existing lock files, nothing created or written.
 *
 * Protocol: requests `{ seq, store, id, files }`, replies `{ seq, ok: true, read }` or
 * `{ seq, ok: false, error: { kind, message } }`; plain data both ways.
 */
import { parentPort } from 'node:worker_threads';
import { toTokcapError } from '../errors.js';
import type { FileKind } from '../layout/file-names.js';
import type { StoreOptions } from '../ops/store.js';
import { readRow } from './preview.js';

export interface ReadRequest {
  seq: number;
  store: StoreOptions;
  id: string;
  files: FileKind[];
}

const port = parentPort;
if (port) {
  port.on('message', (m: ReadRequest) => {
    readRow(m.store, m.id, new Set(m.files)).then(
      (read) => port.postMessage({ seq: m.seq, ok: true, read }),
      (e: unknown) => {
        const err = toTokcapError(e, { rolloutId: m.id });
        port.postMessage({ seq: m.seq, ok: false, error: { kind: err.kind, message: err.message } });
      },
    );
  });
}
