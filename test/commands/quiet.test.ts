/**
 * docs/cli.md#quiet: with -q, text mode prints nothing on stdout or stderr
 * except error lines (`tokcap: <subject>: <reason>`, never a warning); --json is unaffected. The
 * same for every command: freeze -q and inspect -q printed their tables.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, cli } from '../support/cli.js';
import { useTempDirs } from '../support/store.js';

const temp = useTempDirs('tokcap-quiet-');

function demo(): string {
  const dir = join(temp(), 'store');
  cpSync(join(ROOT, 'fixtures', 'demo-store'), dir, { recursive: true });
  return dir;
}

function expectOnlyErrorLines(stderr: string): void {
  for (const line of stderr.split('\n').filter(Boolean)) {
    expect(line).toMatch(/^tokcap: /);
    expect(line).not.toMatch(/^tokcap: warning:/);
  }
}

describe('-q prints nothing but error lines', () => {
  const runs: [string, (dir: string) => string[]][] = [
    ['inspect', (dir) => ['inspect', dir]],
    ['inspect ID', (dir) => ['inspect', dir, 'demo-0', 'demo-2']],
    ['build', (dir) => ['build', dir]],
    ['verify-digests', (dir) => ['verify-digests', dir]],
    ['freeze', (dir) => ['freeze', dir, 'demo-0', 'demo-1']],
    ['build --freeze', (dir) => ['build', dir, 'demo-1', '--freeze']],
    ['retire', (dir) => ['retire', dir, 'demo-0', 'nope']],
    ['delete', (dir) => ['delete', dir, 'demo-1']],
    ['sweep', (dir) => ['sweep', dir, '--older-than', '0s']],
    ['export', (dir) => ['export', dir, '--out', join(dir, '..', 'out.jsonl')]],
    ['watch --once', (dir) => ['watch', dir, '--once']],
    ['fixture', (dir) => ['fixture', join(dir, '..', 'new'), '--rollouts', '2', '--calls', '2']],
  ];
  for (const [name, args] of runs) {
    it(`${name} -q`, async () => {
      const dir = demo();
      const loud = await cli(args(dir));
      // The command has something to say without -q: the test would otherwise prove nothing.
      expect(loud.stdout.length).toBeGreaterThan(0);
      const quiet = await cli([...args(demo()), '-q']);
      expect(quiet.stdout).toBe('');
      expectOnlyErrorLines(quiet.stderr);
      expect(quiet.code).toBe(loud.code);
    });
  }

  it('--json output is not affected by -q', async () => {
    const dir = demo();
    const a = await cli(['inspect', dir, '--json']);
    const b = await cli(['inspect', dir, '--json', '-q']);
    expect(b.stdout).toBe(a.stdout);
  });
});
