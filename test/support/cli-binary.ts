import { execa, type Result } from 'execa';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { projectRoot } from './conformance-corpus.js';

export const BIN = join(projectRoot, 'bin', 'tokcap.js');

function newestMtime(dir: string): number {
  let m = 0;
  for (const n of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, n.name);
    if (n.isDirectory()) m = Math.max(m, newestMtime(p));
    else if (/\.tsx?$/.test(n.name)) m = Math.max(m, statSync(p).mtimeMs);
  }
  return m;
}

/** Builds dist/ when it is missing or older than the sources (npm test builds it first anyway). */
export function ensureBuilt(): void {
  const marker = join(projectRoot, 'dist', 'commands', 'cli', 'run.js');
  const stale =
    !existsSync(marker) ||
    statSync(marker).mtimeMs <
      Math.max(newestMtime(join(projectRoot, 'src')), newestMtime(join(projectRoot, 'commands')));
  if (stale) execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: projectRoot, stdio: 'inherit' });
}

/** Runs the built binary; never rejects on a non-zero exit. */
export function tokcap(
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string } = {},
): Promise<Result> {
  return execa('node', [BIN, ...args], {
    reject: false,
    env: { NO_COLOR: '', TOKCAP_DIR: '', ...options.env },
    input: options.input,
    cwd: options.cwd,
    timeout: 60_000,
    stripFinalNewline: false,
  }) as Promise<Result>;
}
