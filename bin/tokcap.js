#!/usr/bin/env node
// Thin launcher: all behaviour lives in commands/ (compiled to dist/ by `npm run build`), loaded
// from its bundle (dist/cli/, scripts/bundle-cli.mjs) while that was made from what is in dist/
// now, else from the modules. `watch` always from the modules: its view's bundle imports them.
import { currentBundle } from '../dist/commands/bundle-stamp.js';
import { commandWord } from '../dist/commands/command-word.js';

const bundle = commandWord(process.argv) === 'watch' ? undefined : currentBundle(new URL('../dist/cli/', import.meta.url), 'main.js', 'bundle.json');
const { main } = await import(bundle?.href ?? '../dist/commands/main.js');

process.exitCode = await main(process.argv);
