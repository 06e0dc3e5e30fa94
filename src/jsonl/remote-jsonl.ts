/**
 * J copied under the lock by the main thread for a worker thread (src/threads/parallel-rollouts.ts):
 * the worker asks, the main thread takes the shared lock in turn with its own reads (one rollout
 * lock at a time per process), copies, releases, and hands the bytes over without a copy.
 */
import { constants as osConstants } from 'node:os';
import { TokcapError, type ErrorKind, type PyErrorClass } from '../errors.js';
import type { RolloutPaths } from '../layout/file-names.js';
import type { SerialisedError } from '../threads/parallel-rollouts.js';
import { releaseOnce } from './copy-buffers.js';
import { readJsonlBytes, type JsonlBytes } from './read-jsonl-bytes.js';

export interface JsonlRequest {
  paths: RolloutPaths;
  rolloutId: string;
  options: { waitMs: number; from?: number };
}

/**
 * Main thread: answers a worker's request. The copy's whole buffer moves to the worker (its own
 * memory from copy-buffers.ts, spare capacity included), which gives it back when done with it
 * (`jsonlViaMain`; `mapRolloutsParallel`'s `recycle` puts it back in this thread's buffers).
 */
export async function serveJsonlRequest(q: JsonlRequest): Promise<{ value: unknown; transfer?: ArrayBuffer[] }> {
  const r = await readJsonlBytes(q.paths, q.rolloutId, q.options);
  if (!r) return { value: undefined };
  const { release: _release, ...rest } = r;
  return { value: rest, transfer: [r.bytes.buffer as ArrayBuffer] };
}

/**
 * Worker: a `readJsonlBytes` that asks the main thread; `release` moves the copy's memory back
 * to it through `giveBack`.
 */
export function jsonlViaMain(request: (q: unknown) => Promise<unknown>, giveBack?: (memory: ArrayBuffer) => void) {
  return async (
    paths: RolloutPaths,
    rolloutId: string,
    options: { waitMs: number; from?: number },
  ): Promise<JsonlBytes | undefined> => {
    const q: JsonlRequest = { paths, rolloutId, options };
    const r = (await request(q)) as (Omit<JsonlBytes, 'bytes' | 'release'> & { bytes: Uint8Array }) | undefined;
    if (!r) return undefined;
    const memory = r.bytes.buffer as ArrayBuffer;
    return {
      ...r,
      bytes: Buffer.from(memory, r.bytes.byteOffset, r.bytes.byteLength),
      release: giveBack && releaseOnce(memory, giveBack),
    };
  };
}

/** Worker: the main thread's error, as the error the direct call would have thrown. */
export function reviveError(e: SerialisedError): Error {
  if (e.kind !== undefined)
    return new TokcapError(e.kind as ErrorKind, e.message, {
      file: e.file,
      rolloutId: e.rolloutId,
      pyClass: e.pyClass as PyErrorClass,
      system: e.system,
    });
  // A Node system error again (code, syscall, path), as the rest of the library meets it.
  const errno = e.system && {
    ...e.system,
    errno: -(osConstants.errno[e.system.code as keyof typeof osConstants.errno] ?? 0),
  };
  return Object.assign(new Error(e.message), { name: e.name }, errno);
}
