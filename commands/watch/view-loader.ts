/**
 * Loads the live view (./live.js) for `tokcap watch`: from the one-file bundle that
 * scripts/bundle-view.mjs writes beside it (live.bundle.js: the view, Ink and React; ~0.2 s to
 * load instead of ~0.6 s for their ~600 modules), when that bundle was made from the modules now
 * in dist/ and node_modules; otherwise from the modules themselves (after a plain tsc, or without
 * the build script), which behave the same.
 */
import { currentBundle as currentBundleIn } from '../bundle-stamp.js';

export type LiveView = typeof import('./live.js');

/** Where the view came from, for TOKCAP_TRACE. */
export type ViewSource = 'bundle' | 'modules';

/** The bundle in directory `dir` (a file URL ending in '/') if its stamp holds, else undefined. */
export function currentBundle(dir: URL): URL | undefined {
  return currentBundleIn(dir, 'live.bundle.js', 'live.bundle.json');
}

export async function loadLiveView(dir: URL = new URL('./', import.meta.url)): Promise<{ view: LiveView; source: ViewSource }> {
  const bundle = currentBundle(dir);
  if (bundle !== undefined) return { view: (await import(bundle.href)) as LiveView, source: 'bundle' };
  return { view: await import('./live.js'), source: 'modules' };
}
