import { createHash } from 'node:crypto';
import { cpSync, lstatSync, mkdtempSync, readdirSync, readFileSync, chmodSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A full picture of a directory: names (dot-files included), sizes, modes, mtimes, content hashes. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const st = lstatSync(join(dir, name));
    const hash = st.isFile()
      ? createHash('sha256')
          .update(readFileSync(join(dir, name)))
          .digest('hex')
      : st.isSymbolicLink()
        ? 'symlink'
        : 'other';
    out[name] = `${st.size} ${st.mode.toString(8)} ${st.mtimeMs} ${hash}`;
  }
  return out;
}

/** A writable copy of a fixture store in a fresh temp dir. */
export function copyStore(src: string, prefix = 'tokcap-e2e-'): string {
  const dst = mkdtempSync(join(tmpdir(), prefix));
  cpSync(src, dst, { recursive: true });
  for (const n of readdirSync(dst)) chmodSync(join(dst, n), statSync(join(dst, n)).isDirectory() ? 0o755 : 0o644);
  return dst;
}
