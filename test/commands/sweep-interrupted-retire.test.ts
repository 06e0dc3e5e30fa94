/**
 * Quiet is not silent about what needs a person (docs/cli.md#quiet): a retire interrupted between
 * its two phases (the state says retired, the records are still there) is found by `sweep`, which
 * skips it, exits 1 and prints a line that -q keeps, naming the real DIR in its hint.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../support/cli.js';
import { DEMO_STORE, copyStore } from '../support/export.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** A copy of the demo store in a directory whose name a shell must quote, with demo-0 half retired. */
function halfRetired(): string {
  const dir = copyStore(DEMO_STORE, "it's here");
  cleanup.push(join(dir, '..'));
  const state = join(dir, 'demo-0.tokens.state.json');
  const s = JSON.parse(readFileSync(state, 'utf8')) as Record<string, unknown>;
  writeFileSync(state, JSON.stringify({ ...s, retired: true, indexed_size: 0, entry_digests: {} }));
  return dir;
}

describe('sweep over an interrupted retire', () => {
  for (const quiet of [false, true]) {
    it(`${quiet ? '-q: ' : ''}exit 1 and a line naming the rollout and the real DIR`, async () => {
      const dir = halfRetired();
      const r = await cli(['sweep', dir, '--older-than', '0s', ...(quiet ? ['-q'] : [])]);
      expect(r.code).toBe(1);
      const quoted = `'${dir.replace(/'/g, `'\\''`)}'`;
      expect(r.stderr).toContain(
        `tokcap: demo-0: retired but its records are still there (an interrupted retire); run 'tokcap retire ${quoted} demo-0' to finish it, then sweep again`,
      );
      expect(r.stderr).not.toContain(' DIR ');
      if (quiet) expect(r.stdout).toBe('');
    });
  }

  it('--json lists it in skipped_with_records and exits 1', async () => {
    const dir = halfRetired();
    const r = await cli(['sweep', dir, '--older-than', '0s', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ skipped_with_records: ['demo-0'] });
  });

  it('once the retire is finished, sweep removes the tombstone and exits 0', async () => {
    const dir = halfRetired();
    expect((await cli(['retire', dir, 'demo-0', '-q'])).code).toBe(0);
    const r = await cli(['sweep', dir, '--older-than', '0s', '-q']);
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 0, stderr: '', stdout: '' });
  });
});
