#!/usr/bin/env node
// Thin launcher: all behaviour lives in commands/ (compiled to dist/ by `npm run build`), loaded
// from its bundle (dist/cli/, scripts/bundle-cli.mjs) as built, with no check at start-up
// (docs/decisions/0013-bundles-loaded-as-built.md); from the modules only where no bundle was
// built. `watch` always from the modules: its view's bundle imports them.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { commandWord } from '../dist/commands/command-word.js';

// V8 inlines less into each optimized function (a budget of 300 bytes of bytecode, not 920):
// tokcap's per-rollout code (parse, chains, output) is then optimized sooner, in smaller compiles
// that are dropped less. Set before any command is loaded; it tunes compilation only, in every
// thread. build --json takes 0.84-0.89x the CPU, verify and inspect are unchanged
// (docs/decisions/0001-v8-inlining-budget.md).
setFlagsFromString('--max-inlined-bytecode-size-cumulative=300');

const bundle = new URL('../dist/cli/main.js', import.meta.url);
const fromBundle = commandWord(process.argv) !== 'watch' && existsSync(bundle);
const { main } = await import(fromBundle ? bundle.href : '../dist/commands/main.js');

process.exitCode = await main(process.argv);
