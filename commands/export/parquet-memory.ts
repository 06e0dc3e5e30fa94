/**
 * Process settings for `export --format parquet`, made by the command line for its own process
 * (the library leaves its host's process alone). Without them the peak RSS grows with the length
 * of the run, from ~170 MB at 800 rollouts of 12 calls to 220-235 MB at 6,000
 * (docs/decisions/0010-parquet-process-settings.md).
 *
 * - The writer is WebAssembly (parquet-wasm). V8 compiles it with its baseline compiler (Liftoff)
 *   and later recompiles hot functions with TurboFan on background threads, ~30 MB of compiler
 *   memory at a time. Baseline code only: the flag is set before the writer's module is loaded
 *   and compiled, which the export does lazily.
 * - glibc raises its mmap threshold each time a large block is freed (up to 32 MB). The writer's
 *   ~2 MB output chunks raise it past the ~1 MB Arrow IPC buffers of every batch, which then come
 *   from malloc's heaps and leave them fragmented. A fixed threshold (glibc's default, 128 KiB)
 *   keeps large blocks mapped and unmapped as they come and go.
 * - V8 sets the next full collection's limit at up to 4x what the last one left, so a run's
 *   garbage (copies, Arrow batches' JS side) sometimes piles up before one comes: on 800 rollouts
 *   4 runs in 4 peaked at 153-157 MB with a growing factor of 1.5, against 155-157 MB and once
 *   202 MB without (docs/decisions/0009-watch-heap-growing-factor.md).
 */
import { createRequire } from 'node:module';
import { baselineWasmOnly, growHeap } from '../cli/v8-flags.js';
import type KoffiModule from 'koffi';

/** glibc's <malloc.h>. */
const M_MMAP_THRESHOLD = -3;
const MMAP_THRESHOLD = 128 * 2 ** 10;

export function settleParquetMemory(): void {
  baselineWasmOnly();
  growHeap('slowly');
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof KoffiModule;
    const mallopt = koffi.load('libc.so.6').func('int mallopt(int param, int value)') as (
      param: number,
      value: number,
    ) => number;
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
  } catch {
    // Not glibc (no mallopt there): only the memory figure differs.
  }
}
