/**
 * Loads the live view (./live.js) for `tokcap watch`: from the one-file bundle that
 * scripts/bundle-view.mjs writes beside it (live.bundle.js: the view, Ink and React; ~0.2 s to
 * load instead of ~0.6 s for their ~600 modules), as built: nothing is checked at start-up
 * (docs/decisions/0013-bundles-loaded-as-built.md). From the modules only where no bundle was
 * built (a plain tsc), which behave the same.
 */
import { existsSync } from 'node:fs';

export type LiveView = typeof import('./live.js');

/** Where the view came from, for TOKCAP_TRACE. */
export type ViewSource = 'bundle' | 'modules';

export async function loadLiveView(
  dir: URL = new URL('./', import.meta.url),
): Promise<{ view: LiveView; source: ViewSource }> {
  const bundle = new URL('live.bundle.js', dir);
  if (existsSync(bundle)) return { view: (await import(bundle.href)) as LiveView, source: 'bundle' };
  return { view: await import('./live.js'), source: 'modules' };
}
