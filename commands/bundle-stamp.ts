/**
 * Whether a bundle that scripts/bundle-*.mjs wrote after tsc is still made of what is now in
 * dist/ and node_modules: its stamp (a JSON file beside it) holds the size and mtime of the bundle
 * and of every file it was made from (and of its other output files, for a bundle in chunks). A
 * later plain tsc or npm install changes one of them, and the caller then loads the modules.
 * Used by bin/tokcap.js (the command line, scripts/bundle-cli.mjs) and ./watch/view-loader.ts
 * (the live view, scripts/bundle-view.mjs). Imports nothing but node:fs: it runs on every start.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Stamp {
  bundle: [number, number];
  /** Paths relative to the bundle's directory: [size, mtimeMs] when it was made. */
  inputs: Record<string, [number, number]>;
}

const same = (path: string, [size, mtimeMs]: [number, number]) => {
  const s = statSync(path, { throwIfNoEntry: false });
  return s !== undefined && s.size === size && s.mtimeMs === mtimeMs;
};

/**
 * The bundle `name` in directory `dir` (a file URL ending in '/') if its stamp `stampName` holds
 * for the bundle and every input, else undefined. One stat per file, by path (a URL for each
 * costs more than its stat): ~3-8 ms for ~180 files.
 */
export function currentBundle(dir: URL, name: string, stampName: string): URL | undefined {
  const base = fileURLToPath(dir);
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(base + stampName, 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
  if (!Array.isArray(stamp.bundle) || typeof stamp.inputs !== 'object' || stamp.inputs === null || !same(base + name, stamp.bundle)) return undefined;
  // Paths relative to `base` ('../src/errors.js'): the system resolves the '..'.
  for (const [path, sig] of Object.entries(stamp.inputs)) if (!Array.isArray(sig) || !same(base + path, sig)) return undefined;
  return new URL(name, dir);
}
