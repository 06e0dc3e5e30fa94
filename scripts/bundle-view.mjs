#!/usr/bin/env node
// Bundles the live view of `tokcap watch` (dist/commands/watch/live.js, the view modules beside
// it, Ink, React and their ~560 modules) into one file, dist/commands/watch/live.bundle.js, with a
// stamp of its inputs (live.bundle.json). Run after tsc: `npm run build` does both.
//
// Why: loading those modules one by one (resolve, read, compile each) was ~0.6 s of the live
// view's first screen; the one file loads in ~0.2 s (BENCHMARKS.md, "Issue 19 (session 10)").
// The library and the other command modules are NOT bundled: the bundle imports them from dist/,
// so there is one instance of each (error classes, the lock's bookkeeping) in the process.
// commands/watch/view-loader.ts loads the bundle only while the stamp matches its inputs (a later
// tsc, or another npm install, makes it stale), and the modules in dist/ otherwise.
import { build } from 'esbuild';
import { statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const VIEW = join(DIST, 'commands', 'watch');
const OUT = join(VIEW, 'live.bundle.js');
const STAMP = join(VIEW, 'live.bundle.json');
/** Rewritten by every npm install or npm ci: a change of any bundled package changes it. */
const PACKAGES = join(ROOT, 'node_modules', '.package-lock.json');

/** A path as the stamp holds it: relative to the bundle's directory. */
const fromView = (p) => relative(VIEW, p).split(sep).join('/');

const result = await build({
  entryPoints: [join(VIEW, 'live.js')],
  outfile: OUT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  metafile: true,
  logLevel: 'warning',
  // CommonJS packages inside (React) call require() for Node's modules.
  banner: { js: "import { createRequire as __tokcapCreateRequire } from 'node:module';\nconst require = __tokcapCreateRequire(import.meta.url);" },
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
        // Ink imports React's devtools only with DEV=true, and says how to install them when the
        // import fails with ERR_MODULE_NOT_FOUND; they are not installed, so the bundle fails alike.
        b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'tokcap-absent' }));
        b.onLoad({ filter: /.*/, namespace: 'tokcap-absent' }, () => ({
          contents: "const e = new Error(\"Cannot find package 'react-devtools-core'\"); e.code = 'ERR_MODULE_NOT_FOUND'; throw e;",
          loader: 'js',
        }));
      },
    },
  ],
});

// The stamp: size and mtime of each of our bundled modules, and of npm's record of node_modules.
const inputs = {};
for (const input of Object.keys(result.metafile.inputs)) {
  const file = resolve(ROOT, input);
  if (file.startsWith(DIST + sep)) {
    const s = statSync(file);
    inputs[fromView(file)] = [s.size, s.mtimeMs];
  }
}
const p = statSync(PACKAGES, { throwIfNoEntry: false });
if (p === undefined) throw new Error(`bundle-view: ${PACKAGES} is missing (run npm install)`);
inputs[fromView(PACKAGES)] = [p.size, p.mtimeMs];
const out = statSync(OUT);
writeFileSync(STAMP, `${JSON.stringify({ bundle: [out.size, out.mtimeMs], inputs }, null, 1)}\n`);
