// Runs the compiled exportStore (dist/) on a store with --expose-gc and samples the live heap
// (heapUsed right after a full collection) ten times across the export. Prints JSON:
// {"samples": [[done, heapUsedBytes], ...], "rollouts": n}.
//   node --expose-gc heap-probe.mjs DIR OUT FORMAT
import { exportStore } from '../../dist/src/export/index.js';

const [dir, out, format] = process.argv.slice(2);
const samples = [];
const sample = (done) => {
  globalThis.gc();
  samples.push([done, process.memoryUsage().heapUsed]);
};
const summary = await exportStore(
  { dir, out, format, freeze: false, force: false, trainableOnly: false },
  {
    onRollout(done, total) {
      if (done === 1 || done % Math.max(1, Math.floor(total / 10)) === 0) sample(done);
    },
  },
);
sample(summary.rollouts);
process.stdout.write(JSON.stringify({ samples, rollouts: summary.rollouts }) + '\n');
