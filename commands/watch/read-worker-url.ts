/**
 * The read worker `watch` starts (src/watch/worker-readers.ts): its bundle, dist/cli/read-worker.cjs
 * (scripts/bundle-cli.mjs), as built, else the module beside worker-readers.js (undefined: the
 * library's default). One file starts the worker's listing sooner than its module graph does, and
 * loads its reading modules sooner.
 */
import { existsSync } from 'node:fs';

export function readWorkerUrl(): URL | undefined {
  const bundle = new URL('../../cli/read-worker.cjs', import.meta.url);
  return existsSync(bundle) ? bundle : undefined;
}
