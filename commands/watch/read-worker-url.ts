/**
 * The read worker `watch` starts (src/watch/worker-readers.ts): its bundle, dist/cli/read-worker.cjs
 * (scripts/bundle-cli.mjs), while that bundle's own stamp holds, else the module beside
 * worker-readers.js (undefined: the library's default). One file starts the worker's listing
 * sooner than its module graph does, and loads its reading modules sooner.
 */
import { currentBundle } from '../bundle-stamp.js';

export function readWorkerUrl(): URL | undefined {
  return currentBundle(new URL('../../cli/', import.meta.url), 'read-worker.cjs', 'read-worker.json');
}
