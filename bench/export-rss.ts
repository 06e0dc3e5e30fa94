// Peak RSS of `tokcap export` on generated stores of growing size (memory is bounded by the
// largest rollout, not the directory). Needs a build (npx tsc -p tsconfig.json).
//
//   npx tsx bench/export-rss.ts [ROLLOUTS...]      default: 200 2000
//
// Each store: 6 calls per rollout, prompts of 1000 tokens growing by 500 per call, the mixed
// shapes of generateStore (retries, boundaries, incomplete, retired, torn tails).
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateStore } from '../src/fixture/generate-store.js';
import { tokcapPeakRss } from '../test/support/rss.js';

const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(200, 2000);

function duBytes(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) n += statSync(join(dir, name)).size;
  return n;
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
console.log('rollouts  store       format  output      peak RSS');
for (const n of sizes) {
  const root = mkdtempSync(join(tmpdir(), `tokcap-rss-${n}-`));
  try {
    const dir = join(root, 'store');
    await generateStore({ dir }, { rollouts: n, calls: 6, mix: true, seed: 7 });
    for (const format of ['jsonl', 'tinker'] as const) {
      const out = join(root, format === 'jsonl' ? 'out.jsonl' : 'out.tinker');
      const r = await tokcapPeakRss(['export', dir, '--out', out, '--format', format, '-q']);
      if (r.exitCode !== 0) throw new Error(`export failed (${r.exitCode}): ${r.stderr}`);
      const outSize =
        format === 'jsonl'
          ? statSync(out).size
          : statSync(join(out, 'iteration_000000', 'train_rollout_summaries.jsonl')).size;
      console.log(
        `${String(n).padEnd(9)} ${mib(duBytes(dir)).padEnd(11)} ${format.padEnd(7)} ${mib(outSize).padEnd(11)} ${mib(r.maxRssKiB * 1024)}`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
