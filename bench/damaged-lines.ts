// CPU of parsing a damaged line next to that of a valid line of the same size (the test counts
// the parser's work; this prints what it costs). Run: npx tsx bench/damaged-lines.ts [MB]
//
// Each shape of test/support/damaged-lines.ts, 8 MB by default: best of five CPU times of the
// damaged parse and of a valid parse, alternated, and their ratio. A linear read is within a
// few times a valid parse; BigInt of a long run of digits is ~50 times.
import { TokcapError } from '../src/errors.js';
import { JsonBytesReader } from '../src/json/parse-json.js';
import { DAMAGED } from '../test/support/damaged-lines.js';

const MB = 1024 * 1024;
const size = Number(process.argv[2] ?? 8) * MB;

function cpuMs(f: () => void): number {
  const t = process.cpuUsage();
  f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000;
}

function parseDamaged(bytes: Uint8Array): void {
  try {
    new JsonBytesReader().read(bytes);
  } catch (e) {
    if (e instanceof TokcapError) return;
    throw e;
  }
  throw new Error('expected a parse error');
}

/** A valid line of token ids, `n` bytes or so. */
function validLine(n: number): Buffer {
  const ids = Array.from({ length: Math.ceil(n / 7) }, (_, i) => 100000 + (i % 50000));
  const text = JSON.stringify({ a: ids }).slice(0, n - 1);
  return Buffer.from(`${text.slice(0, text.lastIndexOf(','))}]}`);
}

const valid = validLine(size);
new JsonBytesReader().read(valid);
console.log(`shape (${size / MB} MB)                          damaged   valid   ratio`);
for (const [name, make] of Object.entries(DAMAGED)) {
  const damaged = make(size);
  let bestDamaged = Infinity;
  let bestValid = Infinity;
  for (let i = 0; i < 5; i++) {
    bestDamaged = Math.min(
      bestDamaged,
      cpuMs(() => parseDamaged(damaged)),
    );
    bestValid = Math.min(
      bestValid,
      cpuMs(() => new JsonBytesReader().read(valid)),
    );
  }
  const ratio = bestDamaged / Math.max(bestValid, 1);
  console.log(
    `${name.padEnd(40)} ${bestDamaged.toFixed(0).padStart(5)} ms ${bestValid.toFixed(0).padStart(5)} ms ${ratio.toFixed(2).padStart(6)}`,
  );
}
