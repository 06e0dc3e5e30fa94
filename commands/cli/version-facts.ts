/**
 * `tokcap --version --json`: the facts a bug report needs about this copy of tokcap: its version,
 * the commit it was built from (recorded at build time in dist/build-info.json by
 * scripts/build-info.mjs; null when not built in a git checkout), the Node running it, the
 * platform, the C library it calls and whether file locking works here (src/lock/flock.ts).
 */
import { readFileSync } from 'node:fs';
import { lockBackend } from '../../src/lock/flock.js';
import { tokcapVersion } from '../../src/version.js';

export interface VersionFacts {
  version: string;
  commit: string | null;
  node: string;
  platform: string;
  /** The C library file tokcap calls flock(2) in; null when none could be loaded. */
  libc: string | null;
  /** "flock", or null where locking cannot work (`lock_error` says why). */
  lock_backend: 'flock' | null;
  lock_error?: string;
}

/** Whether the arguments (after node and the script) are exactly the program's version flag and --json. */
export function asksVersionJson(args: readonly string[]): boolean {
  return args.length === 2 && args.includes('--json') && (args.includes('--version') || args.includes('-V'));
}

function builtCommit(): string | null {
  try {
    // dist/build-info.json, beside dist/commands/ (a bundled module keeps its own import.meta.url).
    const { commit } = JSON.parse(readFileSync(new URL('../../build-info.json', import.meta.url), 'utf8')) as {
      commit?: unknown;
    };
    return typeof commit === 'string' ? commit : null;
  } catch {
    return null; // not built by scripts/bundle-cli.mjs
  }
}

export function versionFacts(): VersionFacts {
  const lock = lockBackend();
  return {
    version: tokcapVersion(),
    commit: builtCommit(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    libc: lock.backend === 'flock' ? lock.libc : null,
    lock_backend: lock.backend,
    ...(lock.backend === null ? { lock_error: lock.reason } : {}),
  };
}
