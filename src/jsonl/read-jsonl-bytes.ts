import { readSync } from 'node:fs';
import { ioError } from '../errors.js';
import type { RolloutPaths } from '../layout/file-names.js';
import { withRegularFdSync } from '../layout/safe-open.js';
import { withRolloutLockSyncFn } from '../lock/rollout-lock.js';
import { releaseOnce, takeCopyBuffer } from './copy-buffers.js';

export interface JsonlBytes {
  /** J from byte `from` to `size` (as observed under the lock). */
  bytes: Buffer;
  from: number;
  size: number;
  /** The last byte of J (0x0a when it ends with LF), or undefined for an empty file. */
  lastByte?: number;
  /**
   * Hands `bytes`' memory back for the next copy (copy-buffers.ts). Call it only once no view of
   * `bytes` is kept; never calling it is always safe.
   */
  release?: () => void;
}

/**
 * Copies J (from `from` on) under a short SHARED lock on an existing lock file, creating none,
 * then releases it: the caller parses afterwards, so a writer waits for one copy, never for a
 * parse (docs/format.md#lock-implementation "hold locks briefly"). Memory is one rollout's bytes, reused once
 * released. Undefined when J does not exist.
 */
export async function readJsonlBytes(
  paths: RolloutPaths,
  rolloutId: string,
  options: { waitMs: number; from?: number },
): Promise<JsonlBytes | undefined> {
  return withRolloutLockSyncFn(paths.lock, rolloutId, 'shared', { waitMs: options.waitMs, readOnly: true }, () => {
    // Synchronous calls: one short copy, no thread-pool round trips while the lock is held.
    return withRegularFdSync(paths.jsonl, rolloutId, (fd, size) => {
      try {
        const from = Math.min(Math.max(options.from ?? 0, 0), size);
        const bytes = takeCopyBuffer(size - from);
        let got = 0;
        while (got < bytes.length) {
          const r = readSync(fd, bytes, got, bytes.length - got, from + got);
          if (r === 0) break;
          got += r;
        }
        let lastByte: number | undefined;
        if (size > 0) {
          if (got > 0 && from + got === size) lastByte = bytes[got - 1];
          else {
            const one = Buffer.alloc(1);
            if (readSync(fd, one, 0, 1, size - 1) === 1) lastByte = one[0];
          }
        }
        const release = releaseOnce(bytes.buffer as ArrayBuffer);
        return {
          bytes: got === bytes.length ? bytes : bytes.subarray(0, got),
          from,
          size: from + got,
          lastByte,
          release,
        };
      } catch (e) {
        throw ioError(e, paths.jsonl, rolloutId);
      }
    });
  });
}
