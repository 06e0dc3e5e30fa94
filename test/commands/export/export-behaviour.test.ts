/**
 * export's options and edges through the CLI (in-process): --trainable-only, --fields, an
 * existing target and --force, exit codes, --freeze, lock timeouts, human output.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRollout } from '../../../src/chains/build-rollout.js';
import { orderedJson } from '../../../src/json/canonical-json.js';
import { rolloutPaths } from '../../../src/layout/file-names.js';
import { cli, fakeIo } from '../../support/cli.js';
import {
  DEMO_STORE,
  allIds,
  copyStore,
  expectLineMatchesBuild,
  libraryBuilds,
  readLines,
  readTinker,
  scratch,
  treeSnapshot,
} from '../../support/export.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function demo(label: string): string {
  const dir = copyStore(DEMO_STORE, label);
  cleanup.push(join(dir, '..'));
  return dir;
}

function outDir(label: string): string {
  const d = scratch(label);
  cleanup.push(d);
  return d;
}

const plain = (v: unknown): unknown => JSON.parse(orderedJson(v));
const rec = (line: string) => JSON.parse(line) as Record<string, unknown> & { rollout_id: string };

describe('--trainable-only', () => {
  it('jsonl: leaves exactly the masked rollouts out and still counts them', async () => {
    const dir = demo('trainable');
    const out = join(outDir('o'), 't.jsonl');
    const r = await cli(['export', dir, '--out', out, '--trainable-only', '--json']);
    expect(r.code).toBe(0);
    const builds = await libraryBuilds(dir);
    const trainable = builds.filter((b) => !b.mask_sample);
    expect(trainable.length).toBeGreaterThan(0);
    expect(trainable.length).toBeLessThan(builds.length);
    const lines = readLines(out);
    expect(lines.map((l) => rec(l).rollout_id)).toEqual(trainable.map((b) => b.rollout_id));
    lines.forEach((l, i) => expectLineMatchesBuild(l, trainable[i]));
    lines.forEach((l) => expect(rec(l).mask_causes).toEqual([]));
    expect(JSON.parse(r.stdout)).toMatchObject({
      rollouts: builds.length,
      trainable: trainable.length,
      masked: builds.length - trainable.length,
      exported: trainable.length,
    });
  });

  it('tinker: only trainable summaries, dense indices, metrics over every rollout', async () => {
    const dir = demo('trainable-tinker');
    const out = join(outDir('o'), 'run');
    const r = await cli(['export', dir, '--format', 'tinker', '--out', out, '--trainable-only']);
    expect(r.code).toBe(0);
    const builds = await libraryBuilds(dir);
    const read = await readTinker(out);
    expect(read.rollouts.map((x) => x.rollout_id)).toEqual(
      builds.filter((b) => !b.mask_sample).map((b) => b.rollout_id),
    );
    expect(read.rollouts.every((x) => x.masked === 0)).toBe(true);
    expect(read.rollouts.map((x) => x.group_idx)).toEqual(read.rollouts.map((_, i) => i));
    expect(read.metrics[0]).toMatchObject({ rollouts: builds.length, exported: read.rollouts.length });
    expect(read.config).toMatchObject({ trainable_only: true });
  });
});

describe('--fields', () => {
  it('NAME,NAME keeps rollout_id, the named keys and the status fields, in the record order', async () => {
    const dir = demo('fields');
    const out = join(outDir('o'), 'f.jsonl');
    const r = await cli(['export', dir, '--out', out, '--fields', 'mask_causes,metrics,mask_sample,error']);
    expect(r.code).toBe(0);
    const builds = await libraryBuilds(dir);
    const lines = readLines(out);
    expect(lines.length).toBe(builds.length);
    lines.forEach((l, i) => {
      const o = rec(l);
      const b = builds[i] as Record<string, unknown>;
      const expectedKeys = [
        'rollout_id',
        'metrics',
        'mask_sample',
        ...('error' in b ? ['error'] : []),
        'mask_causes',
        'status',
        'conditions',
      ];
      // Failed builds have error before metrics (the reference's order).
      expect(Object.keys(o).sort()).toEqual(expectedKeys.sort());
      expect(Object.keys(o)).toEqual(
        Object.keys(b)
          .concat('mask_causes', 'status', 'conditions')
          .filter((k) => expectedKeys.includes(k)),
      );
      expect(o.metrics).toEqual(plain(b.metrics));
      expect(o.mask_sample).toBe(b.mask_sample);
    });
  });

  it('-NAME drops one key and keeps everything else', async () => {
    const dir = demo('fields-drop');
    const out = join(outDir('o'), 'f.jsonl');
    const r = await cli(['export', dir, '--out', out, '--fields', '-rebuilt_response,-preview']);
    expect(r.code).toBe(0);
    const full = join(outDir('o'), 'full.jsonl');
    expect((await cli(['export', dir, '--out', full])).code).toBe(0);
    const slim = readLines(out).map(rec);
    readLines(full)
      .map(rec)
      .forEach((f, i) => {
        delete f.rebuilt_response;
        delete f.preview;
        expect(slim[i]).toEqual(f);
        expect(Object.keys(slim[i])).toEqual(Object.keys(f));
      });
  });

  it('-tokens replaces the token arrays by their lengths and changes nothing else', async () => {
    const dir = demo('fields-tokens');
    const out = join(outDir('o'), 'f.jsonl');
    const r = await cli(['export', dir, '--out', out, '--fields', '-tokens']);
    expect(r.code).toBe(0);
    const builds = await libraryBuilds(dir);
    const lines = readLines(out);
    expect(lines.some((l) => l.includes('prompt_token_ids') || l.includes('generation_log_probs'))).toBe(false);
    lines.forEach((l, i) => {
      const o = rec(l);
      const b = plain(builds[i]) as Record<string, unknown>;
      expect(Object.keys(o)).toEqual([
        ...Object.keys(b),
        'mask_causes',
        'status',
        'conditions',
        'verdict',
        ...('error_kind' in o ? ['error_kind'] : []),
      ]);
      if (b.rebuilt_response === null) {
        expect(o.rebuilt_response).toBeNull();
        return;
      }
      const items = (b.rebuilt_response as { output: Record<string, unknown>[] }).output;
      const slim = (o.rebuilt_response as { output: Record<string, unknown>[] }).output;
      expect(slim.length).toBe(items.length);
      items.forEach((item, k) => {
        const expected: Record<string, unknown> = {};
        for (const [key, v] of Object.entries(item)) {
          if (key === 'generation_log_probs' || key === 'routed_experts') continue;
          if (key === 'prompt_token_ids' && Array.isArray(v)) expected.prompt_token_count = v.length;
          else if (key === 'generation_token_ids' && Array.isArray(v)) expected.generation_token_count = v.length;
          else expected[key] = v;
        }
        expect(slim[k]).toEqual(expected);
        expect(Object.keys(slim[k])).toEqual(Object.keys(expected));
      });
      for (const key of Object.keys(b)) if (key !== 'rebuilt_response') expect(o[key]).toEqual(b[key]);
    });
    // A line without tokens is much smaller.
    const full = join(outDir('o'), 'full.jsonl');
    await cli(['export', dir, '--out', full]);
    expect(statSync(out).size).toBeLessThan(statSync(full).size / 2);
  });

  it('rebuilt_response,mask_sample,-tokens: the trajectory shape only', async () => {
    const dir = demo('fields-shape');
    const out = join(outDir('o'), 'f.jsonl');
    expect((await cli(['export', dir, '--out', out, '--fields', 'rebuilt_response,mask_sample,-tokens'])).code).toBe(0);
    for (const o of readLines(out).map(rec)) {
      expect(Object.keys(o)).toEqual(['rollout_id', 'rebuilt_response', 'mask_sample', 'status', 'conditions']);
    }
  });

  it.each([
    [['--fields', 'metrics,nosuch'], "--fields: unknown field 'nosuch'"],
    [['--fields', 'tokens'], "'tokens' is only valid as '-tokens'"],
    [['--fields', '-rollout_id'], 'rollout_id is always exported'],
    [['--fields', 'metrics,-metrics'], "'metrics' is both kept and dropped"],
    [['--fields', 'metrics,-tokens'], '-tokens slims rebuilt_response'],
    [['--fields', 'metrics', '--format', 'tinker'], '--fields applies to --format jsonl only'],
    [['--fields', 'metrics,,x'], 'comma-separated list'],
  ])('usage error (exit 2, nothing written): %j', async (args, message) => {
    const dir = demo('fields-bad');
    const o = outDir('o');
    const out = join(o, 'f.jsonl');
    const r = await cli(['export', dir, '--out', out, ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(readdirSync(o)).toEqual([]);
  });
});

describe('the target', () => {
  it('an existing file is refused (exit 2, naming it, unchanged) unless --force replaces it', async () => {
    const dir = demo('target');
    const o = outDir('o');
    const out = join(o, 'x.jsonl');
    writeFileSync(out, 'keep me\n');
    const r = await cli(['export', dir, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`tokcap: --out ${out} already exists; use --force to replace it`);
    expect(readFileSync(out, 'utf8')).toBe('keep me\n');
    expect(readdirSync(o)).toEqual(['x.jsonl']);

    const f = await cli(['export', dir, '--out', out, '--force']);
    expect(f.code).toBe(0);
    expect(readLines(out).length).toBe((await allIds(dir)).length);
    expect(readdirSync(o)).toEqual(['x.jsonl']);
  });

  it('a symbolic link is refused, even with --force, and left as it was', async () => {
    const dir = demo('target-link');
    const o = outDir('o');
    const real = join(o, 'real.jsonl');
    const link = join(o, 'x.jsonl');
    writeFileSync(real, 'keep me\n');
    symlinkSync(real, link);
    for (const force of [[], ['--force']]) {
      const r = await cli(['export', dir, '--out', link, ...force]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(
        `tokcap: --out ${link}: is a symbolic link; not replacing it (name the file itself)`,
      );
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readFileSync(real, 'utf8')).toBe('keep me\n');
      expect(readdirSync(o).sort()).toEqual(['real.jsonl', 'x.jsonl']);
    }
  });

  it('tinker: an existing directory is refused; --force replaces a previous export, not other directories', async () => {
    const dir = demo('target-dir');
    const o = outDir('o');
    const out = join(o, 'run');
    expect((await cli(['export', dir, '--format', 'tinker', '--out', out])).code).toBe(0);
    const first = readFileSync(join(out, 'config.json'), 'utf8');
    const again = await cli(['export', dir, '--format', 'tinker', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`--out ${out} already exists`);
    writeFileSync(join(out, 'stale-extra-file'), 'x');
    const forced = await cli(['export', dir, '--format', 'tinker', '--out', out, '--force', '--trainable-only']);
    expect(forced.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['config.json', 'iteration_000000', 'metrics.jsonl']);
    expect(readFileSync(join(out, 'config.json'), 'utf8')).not.toBe(first);
    expect(readdirSync(o)).toEqual(['run']);

    const other = join(o, 'precious');
    mkdirSync(other);
    writeFileSync(join(other, 'data.txt'), 'x');
    const refused = await cli(['export', dir, '--format', 'tinker', '--out', other, '--force']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not empty and not a tokcap export');
    expect(readdirSync(other)).toEqual(['data.txt']);

    const empty = join(o, 'empty');
    mkdirSync(empty);
    expect((await cli(['export', dir, '--format', 'tinker', '--out', empty, '--force'])).code).toBe(0);
    expect(existsSync(join(empty, 'config.json'))).toBe(true);
  });

  it('refuses to replace the capture directory, even with --force', async () => {
    const dir = demo('target-self');
    const before = treeSnapshot(dir);
    const r = await cli(['export', dir, '--format', 'tinker', '--out', dir, '--force']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing to write over the capture directory');
    const up = await cli(['export', dir, '--format', 'tinker', '--out', join(dir, '..'), '--force']);
    expect(up.code).toBe(2);
    expect(treeSnapshot(dir)).toEqual(before);
  });

  it('a jsonl target that is a directory, or in a missing directory, is a usage error', async () => {
    const dir = demo('target-kind');
    const o = outDir('o');
    mkdirSync(join(o, 'd'));
    const r1 = await cli(['export', dir, '--out', join(o, 'd'), '--force']);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain('is a directory');
    const r2 = await cli(['export', dir, '--out', join(o, 'missing', 'x.jsonl')]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('does not exist');
  });
});

describe('exit codes and output', () => {
  it('exit 3 when DIR is missing or not a directory; nothing is written', async () => {
    const o = outDir('o');
    const r1 = await cli(['export', join(o, 'nope'), '--out', join(o, 'x.jsonl')]);
    expect(r1.code).toBe(3);
    expect(r1.stderr).toBe(`tokcap: ${join(o, 'nope')}: no such directory\n`);
    writeFileSync(join(o, 'file'), '');
    const r2 = await cli(['export', join(o, 'file'), 'r1', '--out', join(o, 'y.jsonl')]);
    expect(r2.code).toBe(3);
    expect(readdirSync(o)).toEqual(['file']);
  });

  it('failed builds are exported and counted, with exit 0', async () => {
    const dir = demo('failed');
    const out = join(outDir('o'), 'x.jsonl');
    const r = await cli(['export', dir, '--out', out]);
    expect(r.code).toBe(0);
    const failed = readLines(out)
      .map(rec)
      .filter((o) => 'error' in o);
    expect(failed.length).toBe(1);
    expect(failed[0]).toMatchObject({ rollout_id: 'demo-6', mask_sample: true, rebuilt_response: null });
    expect(r.stdout).toBe(`exported 8 rollouts to ${out} (jsonl): 2 trainable, 6 masked (1 could not be built)\n`);
  });

  it('-q prints nothing; --trainable-only says what was left out', async () => {
    const dir = demo('quiet');
    const o = outDir('o');
    const q = await cli(['export', dir, '--out', join(o, 'a.jsonl'), '-q']);
    expect(q.code).toBe(0);
    expect(q.stdout).toBe('');
    expect(q.stderr).toBe('');
    const t = await cli(['export', dir, '--out', join(o, 'b.jsonl'), '--trainable-only']);
    expect(t.stdout).toBe(
      `exported 2 of 8 rollouts to ${join(o, 'b.jsonl')} (jsonl): 2 trainable; 6 masked left out (1 could not be built)\n`,
    );
  });

  it('a progress bar on a TTY stderr, erased at the end; signal handlers removed afterwards', async () => {
    const dir = demo('progress');
    const listeners = ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s));
    const io = fakeIo({ stderrTTY: true });
    const r = await cli(['export', dir, '--out', join(outDir('o'), 'p.jsonl')], io);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('exporting');
    expect(r.stderr.endsWith('\r\x1b[2K')).toBe(true);
    expect(['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s))).toEqual(listeners);
    const quiet = await cli(
      ['export', dir, '--out', join(outDir('o'), 'q.jsonl'), '--json'],
      fakeIo({ stderrTTY: true }),
    );
    expect(quiet.stderr).toBe('');
  });

  it('an empty directory is refused (docs/cli.md#unavailable), and with --allow-empty exports an empty file', async () => {
    const o = outDir('o');
    mkdirSync(join(o, 'store'));
    const refused = await cli(['export', join(o, 'store'), '--out', join(o, 'x.jsonl'), '--json']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('no capture files');
    expect(existsSync(join(o, 'x.jsonl'))).toBe(false);
    const r = await cli(['export', join(o, 'store'), '--out', join(o, 'x.jsonl'), '--json', '--allow-empty']);
    expect(r.code).toBe(0);
    expect(readFileSync(join(o, 'x.jsonl'), 'utf8')).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ rollouts: 0, trainable: 0, masked: 0, failed: 0 });
  });
});

describe('--freeze', () => {
  it('needs ids, --ids-from or --all', async () => {
    const dir = demo('freeze-usage');
    const before = treeSnapshot(dir);
    const r = await cli(['export', dir, '--freeze', '--out', join(outDir('o'), 'x.jsonl')]);
    expect(r.code).toBe(2);
    expect(treeSnapshot(dir)).toEqual(before);
  });

  it('--all: each line is the reference consumer result (freeze, then build)', async () => {
    const a = demo('freeze-a');
    const b = demo('freeze-b');
    const out = join(outDir('o'), 'x.jsonl');
    const r = await cli(['export', a, '--freeze', '--all', '--out', out, '--json']);
    expect(r.code).toBe(0);
    const ids = await allIds(b);
    const lines = readLines(out);
    expect(lines.length).toBe(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const expected = await buildRollout({ dir: b }, ids[i], { freeze: true });
      const got = rec(lines[i]);
      expect(got.preview).toBeUndefined();
      // Snapshot ids are fresh random ids: compare them through the store that was frozen.
      if (expected._capture_snapshot) {
        const snap = got._capture_snapshot as { snapshot_id: string; version: number };
        expect(snap.version).toBe(expected._capture_snapshot.version);
        const state = JSON.parse(readFileSync(rolloutPaths(a, ids[i]).state, 'utf8')) as {
          snapshot_id: string;
          frozen: boolean;
        };
        expect(state).toMatchObject({ frozen: true, snapshot_id: snap.snapshot_id });
        expected._capture_snapshot.snapshot_id = snap.snapshot_id;
      }
      expectLineMatchesBuild(lines[i], expected);
    }
  });
});

describe('lock timeouts', () => {
  /** Runs `body` while a python3 process holds demo-3's lock in `dir`. */
  async function withDemo3Locked(dir: string, body: () => Promise<void>): Promise<void> {
    const lock = rolloutPaths(dir, 'demo-3').lock;
    const holder: ResultPromise = execa(
      'python3',
      [
        '-c',
        'import fcntl,sys,time\nf=open(sys.argv[1],"a")\nfcntl.flock(f,fcntl.LOCK_EX)\nprint("locked",flush=True)\ntime.sleep(30)',
        lock,
      ],
      { reject: false, buffer: false },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.once('data', () => resolve());
        holder.once('exit', () => reject(new Error('lock holder exited')));
      });
      await body();
    } finally {
      holder.kill('SIGKILL');
      await holder;
    }
  }

  it('a rollout whose lock cannot be had is left out, named on stderr, exit 3 (docs/cli.md#unavailable)', async () => {
    const dir = demo('lock');
    await withDemo3Locked(dir, async () => {
      const out = join(outDir('o'), 'x.jsonl');
      const r = await cli(['export', dir, '--out', out, '--lock-wait', '1s', '--json']);
      expect(r.code).toBe(3);
      expect(r.stderr.trim()).toBe('tokcap: demo-3: timed out after 1s waiting for the lock of rollout demo-3');
      const lines = readLines(out).map(rec);
      expect(lines.map((l) => l.rollout_id)).toEqual([
        'demo-0',
        'demo-1',
        'demo-2',
        'demo-4',
        'demo-5',
        'demo-6',
        'demo-7',
      ]);
      for (const l of lines) expect(['trainable', 'masked']).toContain(l.verdict);
      // Counted as could not be read: neither trainable nor masked nor a failed build.
      expect(JSON.parse(r.stdout)).toMatchObject({ rollouts: 8, trainable: 2, masked: 5, failed: 1 });
    });
  });

  it('its human summary says how many of the rollouts were written', async () => {
    const dir = demo('lock-text');
    await withDemo3Locked(dir, async () => {
      const out = join(outDir('o'), 'x.jsonl');
      const r = await cli(['export', dir, '--out', out, '--lock-wait', '1s']);
      expect(r.code).toBe(3);
      expect(readLines(out)).toHaveLength(7);
      expect(r.stdout).toBe(
        `exported 7 of 8 rollouts to ${out} (jsonl): 2 trainable, 5 masked (1 could not be built), 1 could not be read (left out)\n`,
      );
    });
  });

  it('parquet counts it the same way: left out, neither trainable nor masked nor a failed build', async () => {
    const dir = demo('lock-parquet');
    await withDemo3Locked(dir, async () => {
      const out = join(outDir('o'), 'x.parquet');
      const r = await cli(['export', dir, '--format', 'parquet', '--out', out, '--lock-wait', '1s', '--json']);
      expect(r.code).toBe(3);
      expect(r.stderr.trim()).toBe('tokcap: demo-3: timed out after 1s waiting for the lock of rollout demo-3');
      expect(JSON.parse(r.stdout)).toMatchObject({ rollouts: 8, exported: 7, trainable: 2, masked: 5, failed: 1 });
    });
  });
});
