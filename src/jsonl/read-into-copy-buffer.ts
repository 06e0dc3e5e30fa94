/**
 * A whole regular file (to its end, should it grow meanwhile) read into memory from
 * copy-buffers.ts: the copy of J a build, an export or a freeze takes under the rollout's lock.
 */
import { readSync } from 'node:fs';
import { ioError } from '../errors.js';
import { withRegularFdSync } from '../layout/safe-open.js';
import { giveBackCopyBuffer, releaseOnce, takeCopyBuffer } from './copy-buffers.js';

/** The file's bytes and the `release` that hands their memory back; undefined when it does not exist. */
export function readIntoCopyBuffer(
  path: string,
  rolloutId: string,
): { bytes: Buffer; release: () => void } | undefined {
  return withRegularFdSync(path, rolloutId, (fd, size) => {
    let buf = takeCopyBuffer(size + 1);
    let n = 0;
    try {
      for (;;) {
        if (n === buf.length) {
          const bigger = takeCopyBuffer(buf.length * 2);
          buf.copy(bigger, 0, 0, n);
          giveBackCopyBuffer(buf.buffer as ArrayBuffer);
          buf = bigger;
        }
        const want = buf.length - n;
        const r = readSync(fd, buf, n, want, null);
        n += r;
        if (r === 0 || r < want) break;
      }
    } catch (e) {
      throw ioError(e, path, rolloutId);
    }
    return { bytes: buf.subarray(0, n), release: releaseOnce(buf.buffer as ArrayBuffer) };
  });
}
