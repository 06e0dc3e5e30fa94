#!/usr/bin/env node
// Thin launcher: all behaviour lives in commands/ (compiled to dist/ by `npm run build`), loaded
// from its bundle (dist/cli/, scripts/bundle-cli.mjs) as built, with no check at start-up
// (docs/decisions/0013-bundles-loaded-as-built.md); from the modules only where no bundle was
// built. The command line is read once, by `main` (commands/cli/main.ts), which also decides
// where the program runs from (`watch` from the modules: its view's bundle imports them).
import { existsSync } from 'node:fs';
import { tuneCompiler } from '../dist/commands/cli/v8-flags.js';

// Before any command is loaded (docs/decisions/0001-v8-inlining-budget.md).
tuneCompiler();

const words = process.argv.slice(2);
if (words.length === 1 && (words[0] === '--version' || words[0] === '-V')) {
  // `tokcap --version` alone, as the program prints it, without loading the program or its
  // option table: a script's check of the version then starts about as fast as Node itself.
  const { tokcapVersion } = await import('../dist/src/version.js');
  process.stdout.write(`${tokcapVersion()}\n`);
} else {
  const bundle = new URL('../dist/cli/main.js', import.meta.url);
  const { main } = await import(existsSync(bundle) ? bundle.href : '../dist/commands/cli/main.js');
  process.exitCode = await main(process.argv);
}
