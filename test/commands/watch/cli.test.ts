/**
 * `tokcap watch` through the built binary, without a terminal: --once --json, --once as text,
 * and the refusal (exit 2, suggesting inspect) without --once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, ensureBuilt } from '../../support/cli.js';
import { holdLock } from '../../support/reliability.js';
import { listing, makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

function tokcap(args: string[], env: Record<string, string> = {}) {
  return execa('node', [BIN, ...args], { env: cleanEnv(env), extendEnv: false, reject: false, stdin: 'ignore' });
}

beforeAll(async () => {
  await ensureBuilt();
});

describe('tokcap watch without a terminal', () => {
  it('exits 2 and suggests inspect (and --once)', async () => {
    const dir = tempDir();
    const r = await tokcap(['watch', dir]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^tokcap: watch: needs a terminal; .*--once.*'tokcap inspect'/);
  });

  it('--once --json gives the same bytes with the read worker and with TOKCAP_WORKERS=1 (one thread)', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 40 });
    const both = await tokcap(['watch', dir, '--once', '--json']);
    const one = await tokcap(['watch', dir, '--once', '--json'], { TOKCAP_WORKERS: '1' });
    expect(both.exitCode).toBe(0);
    expect(one.exitCode).toBe(0);
    expect(one.stdout).toBe(both.stdout);
    expect(Object.keys(JSON.parse(one.stdout).rollouts)).toHaveLength(40);
  });

  it('--once --json under a low limit on open files: the descriptors left for the worker to close stay within it', async () => {
    const dir = tempDir();
    // 400 rollouts of 3 files: a few batches' descriptors would pass 128 if all were left open.
    await makeStore(dir, { rollouts: 400, fast: true });
    const free = await tokcap(['watch', dir, '--once', '--json']);
    const limited = await execa(
      'sh',
      ['-c', 'ulimit -n 128 && exec node "$@"', 'sh', BIN, 'watch', dir, '--once', '--json'],
      {
        env: cleanEnv({}),
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      },
    );
    expect(free.exitCode).toBe(0);
    expect(limited.stderr).toBe('');
    expect(limited.exitCode).toBe(0);
    expect(limited.stdout).toBe(free.stdout);
    expect(Object.keys(JSON.parse(limited.stdout).rollouts)).toHaveLength(400);
    // Two loads of 400 rollouts: a loaded machine takes far longer than the default allows.
  }, 180_000);

  it('--once --json prints one snapshot of what the view shows and changes nothing', async () => {
    const dir = tempDir();
    await makeStore(dir);
    const before = listing(dir);
    const r = await tokcap(['watch', dir, '--once', '--json']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(['dir', 'totals', 'invalid_names', 'rollouts']);
    expect(doc.dir).toBe(dir);
    expect(doc.totals).toEqual({
      rollouts: 8,
      status: { live: 6, frozen: 1, retired: 1, unavailable: 0 },
      conditions: {
        corrupt: 0,
        dangling: 3,
        incomplete: 1,
        missing_state: 0,
        refused: 0,
        retired_with_records: 0,
        torn_tail: 1,
        unindexed_tail: 1,
      },
      verdicts: { trainable: 2, masked: 6, unavailable: 0, could_not_be_built: 1 },
      invalid_names: 0,
      temp_state_files: 0,
    });
    expect(Object.keys(doc.rollouts)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    const r2 = doc.rollouts.r2;
    expect(Object.keys(r2)).toEqual([
      'status',
      'conditions',
      'verdict',
      'calls',
      'frozen',
      'retired',
      'incomplete_flag',
      'incomplete_marker_calls',
      'dangling_intents',
      'torn_tail',
      'version',
      'snapshot_id',
      'mtime_ms',
      'would_mask',
      'mask_causes',
    ]);
    expect(r2).toMatchObject({
      status: 'live',
      conditions: ['dangling', 'incomplete'],
      verdict: 'masked',
      incomplete_flag: true,
      incomplete_marker_calls: ['call-001'],
      dangling_intents: ['call-001'],
      would_mask: true,
    });
    expect(r2.mask_causes.map((c: { code: string }) => c.code)).toEqual(['dangling_intents', 'capture_incomplete']);
    expect(r2.mask_causes[0].calls).toEqual(['call-001']);
    expect(doc.rollouts.r6).toMatchObject({
      status: 'retired',
      conditions: [],
      verdict: 'masked',
      would_mask: true,
      build_error: 'RuntimeError: Token capture for rollout r6 is retired',
    });
    expect(doc.rollouts.r7).toMatchObject({
      status: 'live',
      conditions: ['dangling', 'torn_tail', 'unindexed_tail'],
      torn_tail: true,
    });
    expect(doc.rollouts.r0).toMatchObject({
      status: 'live',
      conditions: [],
      verdict: 'trainable',
      would_mask: false,
      mask_causes: [],
    });
    expect(listing(dir)).toEqual(before);
  });

  it('--once --json reports an unreadable rollout inline and on stderr (exit 3), the others still shown', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 2, mix: false });
    fs.mkdirSync(path.join(dir, 'bad.tokens.state.json'));
    fs.writeFileSync(path.join(dir, 'bad.tokens.intents'), 'c\n');
    const r = await tokcap(['watch', dir, '--once', '--json']);
    expect(r.exitCode).toBe(3);
    const doc = JSON.parse(r.stdout);
    expect(doc.rollouts.bad.error.kind).toBe('io');
    expect(doc.rollouts.bad).toMatchObject({
      status: 'unavailable',
      conditions: [],
      verdict: 'unavailable',
      would_mask: null,
    });
    expect(doc.rollouts.r0.would_mask).toBe(false);
    expect(r.stderr).toMatch(/^tokcap: bad: /);
  });

  it('--once prints the directory view as plain text, every row', async () => {
    const dir = tempDir();
    await makeStore(dir);
    const r = await tokcap(['watch', dir, '--once']);
    expect(r.exitCode).toBe(0);
    const out = r.stdout.split('\n');
    expect(out[0]).toMatch(new RegExp(`^tokcap watch ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +up to date$`));
    expect(out[1]).toBe(
      '8 rollouts  6 live  1 frozen  1 retired  0 unavailable  2 trainable  6 masked (1 could not be built)',
    );
    expect(out[2]).toBe(
      '0 could not be read  3 dangling  1 incomplete  1 torn_tail  1 unindexed_tail  0 invalid names',
    );
    expect(out[3]).toMatch(/^sort: recent first {2}filter: none +1-8 of 8$/);
    expect(out[4]).toBe('  ROLLOUT STATUS      CALLS DANG INC  VER  AGE WOULD MASK');
    const rows = out
      .slice(5)
      .filter(Boolean)
      .map((l) => l.replace(/ +\d+[smhd] /, ' <age> '));
    expect(rows).toEqual([
      '  r7      live            3    1   0    3 <age> masked: dangling intents',
      '  r6      retired         0    0   0    3 <age> masked: build failed',
      '  r5      frozen          3    0   0    4 <age> no',
      '  r4      live            3    0   0    3 <age> masked: unresolved parent +2',
      '  r3      live            4    0   0    4 <age> masked: unresolved retry',
      '  r2      live            2    1   1    3 <age> masked: dangling intents +1',
      '  r1      live            3    1   0    3 <age> masked: dangling intents',
      '  r0      live            3    0   0    3 <age> no',
    ]);
    // eslint-disable-next-line no-control-regex -- no escape sequence at all
    expect(r.stdout).not.toMatch(/\u001b/);
  });

  it('--once marks no row as changed, also one whose read waited for a lock held elsewhere', async () => {
    // A single snapshot has nothing earlier to compare with: the mark column stays blank.
    const dir = tempDir();
    await makeStore(dir);
    const holder = await holdLock(dir, 'r3', 'ex', 1.5);
    try {
      const r = await tokcap(['watch', dir, '--once', '--lock-wait', '30s']);
      expect(r.exitCode).toBe(0);
      const rows = r.stdout.split('\n').slice(5).filter(Boolean);
      expect(rows).toHaveLength(8);
      expect(rows.find((l) => /^..r3 /.test(l))).toMatch(/^ {2}r3 +live /);
      expect(rows.filter((l) => l.slice(0, 2) !== '  ')).toEqual([]);
    } finally {
      holder.child.kill('SIGKILL');
      await holder.done;
    }
  });

  it('--once on an empty directory exits 3 (no capture files) unless --allow-empty', async () => {
    const dir = tempDir();
    const r = await tokcap(['watch', dir, '--once']);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`tokcap: ${dir}: no capture files`);
    const rj = await tokcap(['watch', dir, '--once', '--json']);
    expect(rj.exitCode).toBe(3);
    expect(rj.stdout).toBe('');
    expect(rj.stderr).toBe(`tokcap: ${dir}: no capture files`);
    const a = await tokcap(['watch', dir, '--once', '--allow-empty']);
    expect(a.exitCode).toBe(0);
    expect(a.stdout).toContain('0 rollouts');
    expect(a.stdout).toContain('no rollouts in this directory');
    const j = await tokcap(['watch', dir, '--once', '--json', '--allow-empty']);
    expect(j.exitCode).toBe(0);
    expect(JSON.parse(j.stdout).rollouts).toEqual({});
  });

  it('--once on a missing directory fails with exit 3', async () => {
    const dir = path.join(tempDir(), 'nope');
    const r = await tokcap(['watch', dir, '--once', '--json']);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`tokcap: ${dir}: no such directory`);
  });
});
