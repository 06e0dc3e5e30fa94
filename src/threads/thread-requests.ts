/**
 * A worker thread asking the main thread for something and waiting for the answer. In tokcap the
 * answer is a copy taken under a rollout lock, for workers that take no lock themselves (watch's
 * reader, export, inspect's facts): the main thread takes it in turn with its own (the process
 * holds one rollout lock at a time, docs/format.md#lock-mechanism), and such a worker that dies or
 * is terminated can never leave a lock held. Messages are plain data:
 * worker → main `{ type: 'request', seq, request }` and `{ type: 'give', memory }` (memory the
 * worker is done with, moved back); main → worker `{ type: 'reply', seq, ok, value | error }`.
 */
import type { MessagePort, TransferListItem } from 'node:worker_threads';
import { systemErrorOf, type SystemError } from '../errors.js';

export interface SerialisedError {
  name: string;
  message: string;
  kind?: string;
  pyClass?: string;
  file?: string;
  rolloutId?: string;
  /** The system error under it (a TokcapError's, or the error itself when it is one). */
  system?: SystemError;
}

export function serialiseError(e: unknown): SerialisedError {
  if (e instanceof Error) {
    const x = e as Error & { kind?: string; pyClass?: string; file?: string; rolloutId?: string; system?: SystemError };
    const system = x.system ?? systemErrorOf(x);
    return {
      name: x.name,
      message: x.message,
      kind: x.kind,
      pyClass: x.pyClass,
      file: x.file,
      rolloutId: x.rolloutId,
      ...(system ? { system } : {}),
    };
  }
  return { name: 'Error', message: String(e) };
}

export interface ThreadRequest {
  type: 'request';
  seq: number;
  request: unknown;
}

export interface ThreadGive {
  type: 'give';
  memory: ArrayBuffer;
}

export interface ThreadReply {
  type: 'reply';
  seq: number;
  ok: boolean;
  value?: unknown;
  error?: SerialisedError;
}

/** The worker side: `request` posts and waits; `settle` must be given every message received. */
export interface MainThreadRequests {
  request(q: unknown): Promise<unknown>;
  /** Moves memory back to the main thread; the worker's views of it go empty. */
  giveBack(memory: ArrayBuffer): void;
  /** Settles the request `m` answers; false when `m` is not a reply. */
  settle(m: unknown): boolean;
}

export function mainThreadRequests(port: MessagePort, reviveError: (e: SerialisedError) => Error): MainThreadRequests {
  let seq = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  return {
    request: (q) =>
      new Promise<unknown>((resolve, reject) => {
        const s = seq++;
        waiting.set(s, { resolve, reject });
        port.postMessage({ type: 'request', seq: s, request: q } satisfies ThreadRequest);
      }),
    giveBack(memory) {
      try {
        port.postMessage({ type: 'give', memory } satisfies ThreadGive, [memory]);
      } catch {
        /* already moved or detached: nothing to give */
      }
    },
    settle(m) {
      const r = m as Partial<ThreadReply> | null;
      if (r === null || typeof r !== 'object' || r.type !== 'reply' || typeof r.seq !== 'number') return false;
      const w = waiting.get(r.seq);
      if (!w) return true;
      waiting.delete(r.seq);
      if (r.ok) w.resolve(r.value);
      else w.reject(reviveError(r.error!));
      return true;
    },
  };
}

/** The main side: posts the answer to request `seq` (its value, moving `transfer`), or its error. */
export function replyToWorker(
  worker: { postMessage(value: unknown, transfer?: readonly TransferListItem[]): void },
  seq: number,
  answer: Promise<{ value: unknown; transfer?: TransferListItem[] }>,
): void {
  const post = (reply: ThreadReply, transfer?: TransferListItem[]) => {
    try {
      worker.postMessage(reply, transfer);
    } catch {
      // The worker has stopped meanwhile: nobody is waiting for the answer.
    }
  };
  answer.then(
    ({ value, transfer }) => post({ type: 'reply', seq, ok: true, value }, transfer),
    (e: unknown) => post({ type: 'reply', seq, ok: false, error: serialiseError(e) }),
  );
}
