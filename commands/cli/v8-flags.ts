/**
 * The V8 settings tokcap makes for its own process, in one place (the library leaves its host's
 * process alone). Each is set by the command line where its work starts; the records say why.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Inlines less into each optimized function (a budget of 300 bytes of bytecode, not 920):
 * tokcap's per-rollout code is then optimized sooner, in smaller compiles that are dropped less.
 * Set by bin/tokcap.js before any command loads; it tunes compilation only, in every thread
 * (docs/decisions/0001-v8-inlining-budget.md).
 */
export function tuneCompiler(): void {
  setFlagsFromString('--max-inlined-bytecode-size-cumulative=300');
}

/**
 * The heap's growing factor: 1.5 (`slowly`), which keeps a load's garbage to about half of what is
 * live, or V8's own choice again. V8 reads it at each full collection
 * (docs/decisions/0009-watch-heap-growing-factor.md).
 */
export function growHeap(how: 'slowly' | 'as-v8-chooses'): void {
  setFlagsFromString(how === 'slowly' ? '--heap-growing-percent=50' : '--heap-growing-percent=0');
}

/**
 * WebAssembly compiled by the baseline compiler only, never recompiled by TurboFan on background
 * threads; before the module is compiled (docs/decisions/0010-parquet-process-settings.md).
 */
export function baselineWasmOnly(): void {
  setFlagsFromString('--liftoff-only');
}
