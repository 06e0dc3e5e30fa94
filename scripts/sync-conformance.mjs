#!/usr/bin/env node
// Copies ../shared/conformance into fixtures/conformance so a fresh clone tests itself.
// File modes are normalised (the shared copy is read-only) and dot-files are kept.
import { cpSync, rmSync, existsSync, chmodSync, readdirSync, statSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = resolve(root, '..', 'shared', 'conformance');
const dst = join(root, 'fixtures', 'conformance');
if (!existsSync(src)) {
  console.error(`sync-conformance: ${src} not found; nothing to sync`);
  process.exit(1);
}
rmSync(dst, { recursive: true, force: true });
cpSync(src, dst, { recursive: true });
const fix = (p) => {
  const st = statSync(p);
  chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
  if (st.isDirectory()) for (const n of readdirSync(p)) fix(join(p, n));
};
fix(dst);
console.log(`sync-conformance: copied ${readdirSync(join(dst, 'cases')).length} cases to fixtures/conformance`);
