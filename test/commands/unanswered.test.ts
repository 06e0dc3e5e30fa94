/**
 * docs/cli.md#unavailable:
 * - verify-digests with a rollout whose lock a real Python writer holds: the rollout is listed in
 *   `unchecked`, `ok` is false, the text never says it was verified, exit 3;
 * - a read-only command over a DIR without capture files exits 3 (`tokcap: DIR: no capture
 *   files`) unless --allow-empty; a named id without capture files is a `not_found` error for
 *   inspect and verify-digests, while build keeps the reference's "no records" result.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendEntry } from '../../src/ops/writer.js';
import { holdersKilledAfterEach } from '../support/reliability.js';
import { entry, useTempDirs } from '../support/store.js';
import { cli } from '../support/cli.js';

const temp = useTempDirs('tokcap-unanswered-');

async function twoRollouts(): Promise<string> {
  const dir = temp();
  const store = { dir, lockWaitMs: 5000 };
  await appendEntry(store, entry('c1', { rollout: 'A' }));
  await appendEntry(store, entry('c1', { rollout: 'B' }));
  return dir;
}

const holders = holdersKilledAfterEach();

describe('verify-digests with a rollout it could not read', () => {
  it('--json: the rollout is unchecked, ok is false, exit 3', async () => {
    const dir = await twoRollouts();
    await holders.lock(dir, 'A', 'ex', 3600);
    const { code, stdout, stderr } = await cli(['verify-digests', dir, 'A', 'B', '--lock-wait', '1s', '--json']);
    const doc = JSON.parse(stdout);
    expect(doc.ok).toBe(false);
    expect(doc.unchecked).toEqual(['A']);
    expect(
      doc.errors.map((e: { rollout_id: string; error: { kind: string } }) => [e.rollout_id, e.error.kind]),
    ).toEqual([['A', 'lock_timeout']]);
    expect(code).toBe(3);
    expect(stderr).toMatch(/^tokcap: A: /m);
  });

  it('text: says the rollout could not be read, never that it was verified', async () => {
    const dir = await twoRollouts();
    await holders.lock(dir, 'A', 'ex', 3600);
    const { code, stdout } = await cli(['verify-digests', dir, '--lock-wait', '1s']);
    expect(code).toBe(3);
    expect(stdout).toContain('1 rollout verified');
    expect(stdout).toContain('1 rollout could not be read (not verified): A');
    expect(stdout).not.toContain('2 rollouts verified');
  });

  it('every rollout read: ok is true and nothing is unchecked', async () => {
    const dir = await twoRollouts();
    const { code, stdout } = await cli(['verify-digests', dir, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, unchecked: [] });
  });
});

describe('a DIR without capture files', () => {
  const readOnly: [string, (dir: string) => string[]][] = [
    ['inspect', (dir) => ['inspect', dir]],
    ['inspect --json', (dir) => ['inspect', dir, '--json']],
    ['build', (dir) => ['build', dir]],
    ['verify-digests', (dir) => ['verify-digests', dir]],
    ['verify-digests --json', (dir) => ['verify-digests', dir, '--json']],
    ['export', (dir) => ['export', dir, '--out', join(dir, '..', `${Math.random().toString(36).slice(2)}.jsonl`)]],
    ['watch --once', (dir) => ['watch', dir, '--once']],
    ['watch --once --json', (dir) => ['watch', dir, '--once', '--json']],
  ];
  for (const [name, args] of readOnly) {
    it(`${name}: exit 3, "tokcap: DIR: no capture files"; --allow-empty: exit 0`, async () => {
      const dir = temp();
      // Neither a lock file alone nor a foreign file is a capture file.
      writeFileSync(join(dir, 'A.tokens.lock'), '');
      writeFileSync(join(dir, 'notes.txt'), 'x');
      const refused = await cli(args(dir));
      expect(refused.code).toBe(3);
      expect(refused.stderr).toBe(`tokcap: ${dir}: no capture files\n`);
      expect(refused.stdout).toBe('');
      const allowed = await cli([...args(dir), '--allow-empty']);
      expect(allowed.stderr).toBe('');
      expect(allowed.code).toBe(0);
    });
  }

  it('a missing DIR is still an I/O error naming it', async () => {
    const dir = join(temp(), 'nope');
    const { code, stderr } = await cli(['verify-digests', dir]);
    expect(code).toBe(3);
    expect(stderr).toBe(`tokcap: ${dir}: no such directory\n`);
  });
});

describe('a named rollout without capture files', () => {
  it('inspect: a not_found error inline, exit 3; the other rollout is still reported', async () => {
    const dir = await twoRollouts();
    const { code, stdout, stderr } = await cli(['inspect', dir, 'A', 'Z', '--json']);
    expect(code).toBe(3);
    const doc = JSON.parse(stdout);
    expect(doc.rollouts.Z).toEqual({
      rollout_id: 'Z',
      error: { kind: 'not_found', message: expect.stringMatching(/^no such rollout in .* \(no capture files\)$/) },
    });
    expect(doc.rollouts.A.entries).toBe(1);
    expect(stderr).toBe(`tokcap: Z: no such rollout in ${dir} (no capture files)\n`);
  });

  it('verify-digests: not_found, unchecked, ok false, exit 3', async () => {
    const dir = await twoRollouts();
    const { code, stdout, stderr } = await cli(['verify-digests', dir, 'A', 'Z', '--json']);
    expect(code).toBe(3);
    const doc = JSON.parse(stdout);
    expect(doc).toMatchObject({ ok: false, unchecked: ['Z'] });
    expect(doc.errors).toEqual([
      {
        rollout_id: 'Z',
        error: { kind: 'not_found', message: expect.stringMatching(/^no such rollout in .* \(no capture files\)$/) },
      },
    ]);
    expect(stderr).toBe(`tokcap: Z: no such rollout in ${dir} (no capture files)\n`);
  });

  it('build keeps the reference answer: a masked "no records" result', async () => {
    const dir = await twoRollouts();
    const { stdout } = await cli(['build', dir, 'Z', '--json']);
    const [result] = JSON.parse(stdout);
    expect(result).toMatchObject({ rollout_id: 'Z', mask_sample: true, error: 'capture contains no token records' });
  });
});
