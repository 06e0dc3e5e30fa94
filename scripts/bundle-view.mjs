#!/usr/bin/env node
// Bundles the live view of `tokcap watch` (dist/commands/watch/live.js, the view modules beside
// it, Ink, React and their ~560 modules) into one file, dist/commands/watch/live.bundle.js, with a
// stamp of its inputs (live.bundle.json, ./bundle-stamp.mjs). Run after tsc: `npm run build` does both.
//
// Why: loading those modules one by one (resolve, read, compile each) was ~0.6 s of the live
// view's first screen; the one file loads in ~0.2 s (docs/decisions/0004-live-view-bundle.md).
// The library and the other command modules are NOT bundled: the bundle imports them from dist/,
// so there is one instance of each (error classes, the lock's bookkeeping) in the process.
// commands/watch/view-loader.ts loads the bundle as built, and the modules in dist/ only where no
// bundle was built (docs/decisions/0013-bundles-loaded-as-built.md).
import { build } from 'esbuild';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inkInBundle, NODE_BUNDLE } from './bundle-settings.mjs';
import { writeStamp } from './bundle-stamp.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const VIEW = join(DIST, 'commands', 'watch');
const OUT = join(VIEW, 'live.bundle.js');
const STAMP = join(VIEW, 'live.bundle.json');

/** A path as the stamp holds it: relative to the bundle's directory. */
const fromView = (p) => relative(VIEW, p).split(sep).join('/');

const result = await build({
  entryPoints: [join(VIEW, 'live.js')],
  ...NODE_BUNDLE,
  absWorkingDir: ROOT,
  outfile: OUT,
  plugins: [
    {
      name: 'tokcap-outside-view',
      setup(b) {
        // Our modules outside commands/watch/ stay where tsc put them, imported from there.
        b.onResolve({ filter: /^\.\.?\// }, (args) => {
          const target = resolve(args.resolveDir, args.path);
          if (!target.startsWith(DIST + sep) || target.startsWith(VIEW + sep)) return undefined;
          const path = fromView(target);
          return { path: path.startsWith('.') ? path : `./${path}`, external: true };
        });
        inkInBundle(b);
      },
    },
  ],
});

writeStamp({ root: ROOT, dir: VIEW, bundle: OUT, metafile: result.metafile, ours: DIST, stamp: STAMP });
