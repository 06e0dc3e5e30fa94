import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedVersion: string | undefined;

/**
 * The version in tokcap's package.json, found by walking up from this module: works from the
 * sources, from dist/ and from a global install.
 */
export function tokcapVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'tokcap' && typeof pkg.version === 'string') return (cachedVersion = pkg.version);
    } catch {
      // not here; keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return (cachedVersion = '0.0.0');
    dir = parent;
  }
}
