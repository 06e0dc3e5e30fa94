#!/usr/bin/env node
// Thin launcher: all behaviour lives in commands/ (compiled to dist/ by `npm run build`), loaded
// from its bundle (dist/cli/, scripts/bundle-cli.mjs) while that was made from what is in dist/
// now, else from the modules. `watch` always from the modules: its view's bundle imports them.
import { setFlagsFromString } from 'node:v8';
import { currentBundle } from '../dist/commands/bundle-stamp.js';
import { commandWord } from '../dist/commands/command-word.js';

// V8 inlines less into each optimized function (a budget of 300 bytes of bytecode, not 920):
// tokcap's per-rollout code (parse, chains, output) is then optimized sooner, in smaller compiles
// that are dropped less. Set before any command is loaded; it tunes compilation only, in every
// thread. Measured (session 18, quiet, farm-bench pairs against main): build --json on
// full-200x12 CPU 0.85x, wall 0.94x; full-800x12 0.89x; the 2 GB store 0.84x; mix-2k 0.90x;
// small-5k 0.94x; verify-digests and inspect --deep unchanged (BENCHMARKS.md, session 18).
setFlagsFromString('--max-inlined-bytecode-size-cumulative=300');

const bundle = commandWord(process.argv) === 'watch' ? undefined : currentBundle(new URL('../dist/cli/', import.meta.url), 'main.js', 'bundle.json');
const { main } = await import(bundle?.href ?? '../dist/commands/main.js');

process.exitCode = await main(process.argv);
