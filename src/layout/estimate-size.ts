import { lstatSync } from 'node:fs';
import { rolloutPaths } from './file-names.js';

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
