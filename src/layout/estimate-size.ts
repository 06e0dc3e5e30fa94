import { lstatSync, opendirSync } from 'node:fs';
import { rolloutPaths, SUFFIX } from './file-names.js';

/**
 * An estimate of the JSONL bytes of `ids`: the mean size of up to `sample` of their JSONL files,
 * evenly spaced, times their number. A handful of `lstat`s, for deciding whether a job is large
 * enough to be worth starting worker threads (each costs ~0.25 s of module loading).
 */
export function estimateJsonlBytes(dir: string, ids: readonly string[], sample = 64): number {
  if (ids.length === 0) return 0;
  const n = Math.min(sample, ids.length);
  let bytes = 0;
  for (let k = 0; k < n; k++) {
    const id = ids[Math.floor((k * ids.length) / n)];
    try {
      const st = lstatSync(rolloutPaths(dir, id).jsonl, { throwIfNoEntry: false });
      if (st?.isFile()) bytes += st.size;
    } catch {
      // unreadable: counts as empty; the job itself reports it
    }
  }
  return (bytes / n) * ids.length;
}

/**
 * The JSONL files among the first `maxEntries` entries of `dir` (in the system's order): how many,
 * and their bytes. A bounded look (~1 ms for 1,024 entries), cheap whatever the directory's size,
 * for starting a worker before the directory is listed: a lower bound of the directory's bytes,
 * and a sample of its rollouts' sizes.
 */
export function firstJsonlSizes(dir: string, maxEntries = 1024): { files: number; bytes: number } {
  const seen = { files: 0, bytes: 0 };
  let entries;
  try {
    entries = opendirSync(dir, { bufferSize: 256 });
  } catch {
    return seen;
  }
  try {
    for (let n = 0; n < maxEntries; n++) {
      const entry = entries.readSync();
      if (entry === null) break;
      if (!entry.name.endsWith(SUFFIX.jsonl)) continue;
      const st = lstatSync(`${dir}/${entry.name}`, { throwIfNoEntry: false });
      if (st?.isFile()) {
        seen.files++;
        seen.bytes += st.size;
      }
    }
  } catch {
    // unreadable: what was seen so far
  } finally {
    entries.closeSync();
  }
  return seen;
}
