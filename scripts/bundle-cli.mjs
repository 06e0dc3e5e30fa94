#!/usr/bin/env node
// Bundles the command line (dist/commands/cli/main.js, the command modules, the library and
// commander) into dist/cli/: main.js and one chunk per lazily loaded part, so each command still
// loads only its own code (`tokcap sweep` no more of React than before: nothing). bin/tokcap.js
// loads it as built, with no check at start-up; its stamp (dist/cli/bundle.json, a content hash of
// its inputs: ./bundle-stamp.mjs) tells the tests whether dist/ changed since
// (docs/decisions/0013-bundles-loaded-as-built.md). Also writes dist/build-info.json (the commit
// built from, for `tokcap --version --json`). Run after tsc: `npm run build` does both.
//
// Why: Node loads an ES module graph file by file (resolve, read, compile, link each), and
// commander through its CommonJS lexer; the ~40-100 modules of a command cost more than their
// code does (docs/decisions/0002-command-line-bundle.md).
//
// What stays outside: every other package (chalk, cli-table3, koffi, zod, Arrow and Parquet are
// loaded when needed), and the ways into `watch` (commands/watch/watch.js, early.js): its
// view's bundle imports the library from dist/, and the bundle's entry (commands/cli/main.ts)
// runs `watch`'s program from the modules, so that the process has one instance of each module
// that `watch` uses (error classes, the lock's bookkeeping).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { NODE_BUNDLE } from './bundle-settings.mjs';
import { writeStamp } from './bundle-stamp.mjs';
import { writeBuildInfo } from './build-info.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const OUTDIR = join(DIST, 'cli');
const STAMP = join(OUTDIR, 'bundle.json');
/** The two ways into `watch`: its command module and what it starts before commander. */
const WATCH = new Set([join(DIST, 'commands', 'watch', 'watch.js'), join(DIST, 'commands', 'watch', 'early.js')]);
/**
 * The worker threads' modules, each bundled into one file of its own (dist/cli/NAME.js, no chunks:
 * one file loads faster than the command line's chunks would): a worker loads its ~40-60 modules
 * file by file otherwise, ~50 ms of the worker's start-up on this machine, which a job of under a
 * second pays before the worker helps (docs/decisions/0003-worker-bundles.md). The bundled
 * library starts these instead of the modules' (a `new URL('./NAME.js', import.meta.url)` in a
 * bundled module names dist/cli/NAME.js). watch's reader is not here: `watch` runs from the modules
 * and starts its bundle (below) itself.
 */
const WORKERS = ['verify/verify-worker', 'rollout-read/build-worker', 'export/export-worker', 'facts/facts-worker'];
/** Bundled packages: commander (every command loads it). */
const BUNDLED = new Set(['commander']);

/** A path as a chunk imports it: relative to dist/cli/. */
const fromOut = (p) => {
  const path = relative(OUTDIR, p).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
};

// No bundle while the files change: a tokcap started meanwhile loads the modules.
rmSync(OUTDIR, { recursive: true, force: true });

const plugins = [
  {
    name: 'tokcap-cli',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || BUNDLED.has(args.path.split('/')[0])) return undefined;
        return { path: args.path, external: true };
      });
      // watch stays in dist/, imported from there (never from the bundle: see commands/cli/main.ts).
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = resolve(args.resolveDir, args.path);
        if (!WATCH.has(target)) return undefined;
        return { path: fromOut(target), external: true };
      });
      // Each module keeps its own import.meta.url (workers started beside it, package.json found
      // from it, createRequire from it): the chunk's URL, then the module's path from dist/cli/.
      b.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(DIST + sep)) return undefined;
        let text = await readFile(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
        // A bundled worker, started from its bundle beside this chunk (kept apart from the
        // rewrite below by a placeholder).
        text = text.replace(
          /new URL\('(?:\.\/|\.\.\/[a-z-]+\/)([a-z-]+-worker)\.js', import\.meta\.url\)/g,
          (whole, name) =>
            WORKERS.some((w) => w.endsWith(`/${name}`)) ? `new URL('./${name}.js', __TOKCAP_CHUNK_URL__)` : whole,
        );
        const own = `new URL(${JSON.stringify(fromOut(args.path))}, import.meta.url).href`;
        text = text.replaceAll('import.meta.url', own).replaceAll('__TOKCAP_CHUNK_URL__', 'import.meta.url');
        return { contents: text, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  },
];

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: [join(DIST, 'commands', 'cli', 'main.js')],
  ...NODE_BUNDLE,
  outdir: OUTDIR,
  splitting: true,
  plugins,
});
const workers = await build({
  absWorkingDir: ROOT,
  entryPoints: WORKERS.map((w) => ({ in: join(DIST, 'src', `${w}.js`), out: w.split('/')[1] })),
  ...NODE_BUNDLE,
  outdir: OUTDIR,
  plugins,
});
// One stamp for both: the command line and its workers are rebuilt together.
const metafile = {
  inputs: { ...result.metafile.inputs, ...workers.metafile.inputs },
  outputs: { ...result.metafile.outputs, ...workers.metafile.outputs },
};

writeStamp({ root: ROOT, dir: OUTDIR, bundle: join(OUTDIR, 'main.js'), metafile, ours: DIST, stamp: STAMP });

// watch's read worker (src/watch/read-worker.ts), bundled the same way but with a stamp of its
// own: `watch` runs from the modules and starts the worker from this file
// (commands/watch/read-worker-url.ts). Its listing starts sooner from one file than after its
// module graph's. A CommonJS file (read-worker.cjs): a worker starts it ~10-20 ms sooner than an
// ES module, whose loader the worker would set up first (docs/decisions/0003-worker-bundles.md). Its modules'
// `import.meta.url` (rewritten per module above) is the file's own URL.
const reader = await build({
  absWorkingDir: ROOT,
  entryPoints: [{ in: join(DIST, 'src', 'watch', 'read-worker.js'), out: 'read-worker' }],
  ...NODE_BUNDLE,
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  banner: { js: "const __tokcapImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  define: { 'import.meta.url': '__tokcapImportMetaUrl' },
  outdir: OUTDIR,
  plugins,
});
writeStamp({
  root: ROOT,
  dir: OUTDIR,
  bundle: join(OUTDIR, 'read-worker.cjs'),
  metafile: reader.metafile,
  ours: DIST,
  stamp: join(OUTDIR, 'read-worker.json'),
});

writeBuildInfo(ROOT, join(DIST, 'build-info.json'));
