/**
 * Loads the live view (./live.js) for `tokcap watch`: from the one-file bundle that
 * scripts/bundle-view.mjs writes beside it (live.bundle.js: the view, Ink and React; ~0.2 s to
 * load instead of ~0.6 s for their ~600 modules), when that bundle was made from the modules now
 * in dist/ and node_modules; otherwise from the modules themselves (after a plain tsc, or without
 * the build script), which behave the same.
 */
import { readFileSync, statSync } from 'node:fs';

export type LiveView = typeof import('./live.js');

/** Where the view came from, for TOKCAP_TRACE. */
export type ViewSource = 'bundle' | 'modules';

interface Stamp {
  bundle: [number, number];
  /** Paths relative to the bundle's directory: [size, mtimeMs] when it was made. */
  inputs: Record<string, [number, number]>;
}

const same = (path: URL, [size, mtimeMs]: [number, number]) => {
  const s = statSync(path, { throwIfNoEntry: false });
  return s !== undefined && s.size === size && s.mtimeMs === mtimeMs;
};

/**
 * The bundle in directory `dir` (a file URL ending in '/') if its stamp holds for every input,
 * else undefined. A few dozen stats: ~1 ms.
 */
export function currentBundle(dir: URL): URL | undefined {
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(new URL('live.bundle.json', dir), 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
  const bundle = new URL('live.bundle.js', dir);
  if (!Array.isArray(stamp.bundle) || typeof stamp.inputs !== 'object' || stamp.inputs === null || !same(bundle, stamp.bundle)) return undefined;
  for (const [path, sig] of Object.entries(stamp.inputs)) if (!Array.isArray(sig) || !same(new URL(path, dir), sig)) return undefined;
  return bundle;
}

export async function loadLiveView(dir: URL = new URL('./', import.meta.url)): Promise<{ view: LiveView; source: ViewSource }> {
  const bundle = currentBundle(dir);
  if (bundle !== undefined) return { view: (await import(bundle.href)) as LiveView, source: 'bundle' };
  return { view: await import('./live.js'), source: 'modules' };
}
