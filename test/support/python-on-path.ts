/**
 * vitest globalSetup: when `python3` on PATH is a version manager's shim (pyenv: a bash script
 * that runs `pyenv exec`, more bash), the tests start the interpreter it selects directly. The
 * shim cost more than the python3 it started (measured: 0.8 s of CPU against 0.15 s per start
 * on a loaded 2-core machine), and the suites start python3 several hundred times. A directory
 * holding only a `python3` link to that interpreter goes first on PATH, so nothing else found
 * through PATH changes; the interpreter, its version and its standard library are the same.
 * When `python3` already is the interpreter (a system python, a virtualenv), nothing changes.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export default function setup(): (() => void) | undefined {
  let exe: string;
  let onPath: string;
  try {
    exe = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    onPath = execFileSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined; // no python3: the tests that need it say so
  }
  if (!exe || realpathSync(onPath) === realpathSync(exe)) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'tokcap-python3-'));
  chmodSync(dir, 0o755); // searched by every uid (some tests run the binary as another user)
  symlinkSync(exe, join(dir, 'python3'));
  process.env.PATH = `${dir}${delimiter}${process.env.PATH ?? ''}`;
  return () => rmSync(dir, { recursive: true, force: true });
}
