// Regenerates fixtures/demo-store: eight small rollouts, one of each shape `--mix` produces.
// Lock files are left out: read-only commands never need (or create) them.
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateStore } from '../src/fixture/generate-store.js';

const dir = resolve(import.meta.dirname ?? '.', '..', 'fixtures', 'demo-store');
rmSync(dir, { recursive: true, force: true });
await generateStore(
  { dir },
  { rollouts: 8, calls: 4, prompt: 40, gen: 8, turn: 6, mix: true, seed: 7, prefix: 'demo-' },
);
for (const n of readdirSync(dir)) if (n.endsWith('.tokens.lock')) rmSync(join(dir, n));
console.log(`demo store written to ${dir}`);
