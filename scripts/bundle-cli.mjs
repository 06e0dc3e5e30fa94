#!/usr/bin/env node
// Bundles the command line (dist/commands/main.js, the command modules, the library and
// commander) into dist/cli/: main.js and one chunk per lazily loaded part, so each command still
// loads only its own code (`tokcap sweep` no more of React than before: nothing). A stamp of its
// inputs (dist/cli/bundle.json) lets bin/tokcap.js load it only while it matches what is in
// dist/ and node_modules (commands/bundle-stamp.ts); after a plain tsc it loads the modules.
// Run after tsc: `npm run build` does both.
//
// Why: Node loads an ES module graph file by file (resolve, read, compile, link each), and
// commander through its CommonJS lexer; the ~40-100 modules of a command cost more than their
// code does (BENCHMARKS.md, "Issue 15 (session 11)").
//
// What stays outside: every other package (chalk, cli-table3, koffi, zod, Arrow and Parquet are
// loaded when needed, as before), and the ways into `watch` (commands/watch.js, early.js): its
// view's bundle imports the library from dist/, and bin/tokcap.js runs `watch` from the modules,
// so that the process has one instance of each module (error classes, the lock's bookkeeping).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { NODE_BUNDLE } from './bundle-settings.mjs';
import { writeStamp } from './bundle-stamp.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const OUTDIR = join(DIST, 'cli');
const STAMP = join(OUTDIR, 'bundle.json');
/** The two ways into `watch`: its command module and what it starts before commander. */
const WATCH = new Set([join(DIST, 'commands', 'watch.js'), join(DIST, 'commands', 'watch', 'early.js')]);
/** Bundled packages: commander (every command loads it). */
const BUNDLED = new Set(['commander']);

/** A path as a chunk imports it: relative to dist/cli/. */
const fromOut = (p) => {
  const path = relative(OUTDIR, p).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
};

// No stamp while the files change: a tokcap started meanwhile loads the modules.
rmSync(OUTDIR, { recursive: true, force: true });

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: [join(DIST, 'commands', 'main.js')],
  ...NODE_BUNDLE,
  outdir: OUTDIR,
  splitting: true,
  plugins: [
    {
      name: 'tokcap-cli',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:') || BUNDLED.has(args.path.split('/')[0])) return undefined;
          return { path: args.path, external: true };
        });
        // watch stays in dist/, imported from there (never from the bundle: see bin/tokcap.js).
        b.onResolve({ filter: /^\.\.?\// }, (args) => {
          const target = resolve(args.resolveDir, args.path);
          if (!WATCH.has(target)) return undefined;
          return { path: fromOut(target), external: true };
        });
        // Each module keeps its own import.meta.url (workers started beside it, package.json found
        // from it, createRequire from it): the chunk's URL, then the module's path from dist/cli/.
        b.onLoad({ filter: /\.js$/ }, async (args) => {
          if (!args.path.startsWith(DIST + sep)) return undefined;
          const text = await readFile(args.path, 'utf8');
          if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
          const own = `new URL(${JSON.stringify(fromOut(args.path))}, import.meta.url).href`;
          return { contents: text.replaceAll('import.meta.url', own), loader: 'js', resolveDir: dirname(args.path) };
        });
      },
    },
  ],
});

writeStamp({ root: ROOT, dir: OUTDIR, bundle: join(OUTDIR, 'main.js'), metafile: result.metafile, ours: DIST, stamp: STAMP });
