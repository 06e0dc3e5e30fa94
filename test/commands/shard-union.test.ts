import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { compareFindings, type Finding } from '../../src/verify/findings.js';
import { shardOf } from '../../src/layout/shard.js';
import { cli, fakeIo } from '../support/cli.js';

/**
 * docs/cli.md#shards: the union of N sharded runs equals the unsharded run, row for row. A store
 * with every shape (--mix: dangling intents, markers, retries, frozen, retired, torn tails), an
 * unreadable state and an invalid name, so the shards' reports have something to disagree on.
 */
let root: string;
let dir: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tokcap-shard-union-'));
  dir = join(root, 'store');
  await generateStore({ dir }, { rollouts: 48, calls: 3, prompt: 8, gen: 3, turn: 2, seed: 5, mix: true });
  writeFileSync(join(dir, 'r05.tokens.state.json'), '[1, 2]');
  writeFileSync(join(dir, 'bad id!.tokens.jsonl'), '');
  writeFileSync(join(dir, 'other id?.tokens.intents'), '');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function json(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; doc: any }> {
  const r = await cli([...args, '--json'], fakeIo({ env }));
  return { code: r.code, doc: JSON.parse(r.stdout) };
}

const SHARD_COUNTS = [1, 3, 4];

describe.each(SHARD_COUNTS)('N = %i: the union of the shards is the whole', (n) => {
  const shards = Array.from({ length: n }, (_, k) => `${k}/${n}`);

  it('inspect --json (rollouts and invalid names, each once)', async () => {
    for (const deep of [[], ['--deep']]) {
      const whole = await json(['inspect', dir, ...deep]);
      const parts = await Promise.all(shards.map((s) => json(['inspect', dir, ...deep, '--shard', s])));
      const rollouts = Object.assign({}, ...parts.map((p) => p.doc.rollouts));
      expect(Object.keys(rollouts).sort()).toEqual(Object.keys(whole.doc.rollouts));
      expect(rollouts).toEqual(whole.doc.rollouts);
      expect(parts.flatMap((p) => p.doc.invalid_names).sort()).toEqual(whole.doc.invalid_names);
      for (const [k, p] of parts.entries())
        for (const id of Object.keys(p.doc.rollouts)) expect(shardOf(id, n)).toBe(k);
      expect(Math.max(...parts.map((p) => p.code))).toBe(whole.code);
      // Each report says which shard it covers and how many rollouts that is (docs/cli.md#sharded-runs).
      expect(parts.map((p) => p.doc.shard)).toEqual(
        parts.map((p, k) => ({ index: k, count: n, selected: Object.keys(p.doc.rollouts).length })),
      );
      expect(whole.doc.shard).toBeUndefined();
    }
  });

  it('verify-digests --json (findings, ok, exit code)', async () => {
    const whole = await json(['verify-digests', dir]);
    const parts = await Promise.all(shards.map((s) => json(['verify-digests', dir, '--shard', s])));
    const findings: Finding[] = parts.flatMap((p) => p.doc.findings).sort(compareFindings);
    expect(findings).toEqual(whole.doc.findings);
    expect(whole.doc.findings.length).toBeGreaterThan(0);
    expect(parts.every((p) => p.doc.ok)).toBe(whole.doc.ok);
    expect(Math.max(...parts.map((p) => p.code))).toBe(whole.code);
    expect(parts.map((p) => p.doc.shard.index)).toEqual(shards.map((_, k) => k));
    expect(parts.reduce((sum, p) => sum + p.doc.shard.selected, 0)).toBe(48);
  });

  it('build --json (every result, in id order after a sort)', async () => {
    const whole = await json(['build', dir]);
    const parts = await Promise.all(shards.map((s) => json(['build', dir, '--shard', s])));
    // Sharded, the array is the report's `results`, beside its `shard`.
    const results = parts
      .flatMap((p) => p.doc.results)
      .sort((a: any, b: any) => (a.rollout_id < b.rollout_id ? -1 : 1));
    expect(results).toEqual(whole.doc);
    expect(whole.doc.length).toBe(48);
    expect(parts.map((p) => p.doc.shard)).toEqual(
      parts.map((p, k) => ({ index: k, count: n, selected: p.doc.results.length })),
    );
  });

  it('export --format jsonl (the lines of the shards are the lines of the whole)', async () => {
    const out = join(root, `export-${n}`);
    expect((await cli(['export', dir, '--out', `${out}-all.jsonl`])).code).toBe(0);
    for (const s of shards)
      expect((await cli(['export', dir, '--shard', s, '--out', `${out}-${s.replace('/', 'of')}.jsonl`])).code).toBe(0);
    const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const union = shards.flatMap((s) => lines(`${out}-${s.replace('/', 'of')}.jsonl`)).sort();
    expect(union).toEqual(lines(`${out}-all.jsonl`).sort());
  });

  it('freeze --all --json (each rollout frozen by exactly one shard, as freeze --all does)', async () => {
    const sharded = join(root, `freeze-${n}`);
    const whole = join(root, `freeze-${n}-whole`);
    cpSync(dir, sharded, { recursive: true });
    cpSync(dir, whole, { recursive: true });
    // Snapshot ids are fresh per freeze: compare everything else.
    const strip = (r: any) => ({ ...r, snapshot_id: typeof r.snapshot_id });
    const parts = await Promise.all(shards.map((s) => json(['freeze', sharded, '--all', '--shard', s])));
    const all = await json(['freeze', whole, '--all']);
    const union = parts.flatMap((p) => p.doc.results).sort((a: any, b: any) => (a.rollout_id < b.rollout_id ? -1 : 1));
    expect(union.map(strip)).toEqual(all.doc.map(strip));
    expect(parts.map((p) => p.doc.shard.index)).toEqual(shards.map((_, k) => k));
    expect(all.doc.length).toBeGreaterThan(30);
    expect(Math.max(...parts.map((p) => p.code))).toBe(all.code);
  });
});

describe('--shard with ids and with auto', () => {
  it('narrows given ids to the shard (one --ids-from list shared by every task)', async () => {
    const ids = ['r00', 'r01', 'r02', 'r03', 'r04', 'r06', 'r07'];
    const list = join(root, 'ids.txt');
    writeFileSync(list, ids.join('\n'));
    const seen: string[] = [];
    for (let k = 0; k < 3; k++) {
      const { doc } = await json(['build', dir, '--ids-from', list, '--shard', `${k}/3`]);
      expect(doc.shard).toEqual({ index: k, count: 3, selected: doc.results.length });
      for (const r of doc.results) {
        expect(shardOf(r.rollout_id, 3)).toBe(k);
        seen.push(r.rollout_id);
      }
    }
    expect(seen.sort()).toEqual(ids);
  });

  it('auto reads a Slurm array and a Kubernetes Indexed Job; without either it is a usage error (exit 2)', async () => {
    const explicit = await json(['inspect', dir, '--shard', '2/4']);
    const slurm = await json(['inspect', dir, '--shard', 'auto'], {
      SLURM_ARRAY_TASK_ID: '12',
      SLURM_ARRAY_TASK_MIN: '10',
      SLURM_ARRAY_TASK_COUNT: '4',
    });
    const k8s = await json(['inspect', dir, '--shard', 'auto'], { JOB_COMPLETION_INDEX: '2', TOKCAP_SHARDS: '4' });
    expect(slurm.doc).toEqual(explicit.doc);
    expect(k8s.doc).toEqual(explicit.doc);
    const none = await cli(['verify-digests', dir, '--shard', 'auto']);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^tokcap: --shard auto: .*SLURM_ARRAY_TASK_ID.*JOB_COMPLETION_INDEX.*TOKCAP_SHARDS/);
    const bad = await cli(['build', dir, '--shard', '4/4']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--shard: invalid value '4\/4': K must be less than N/);
  });
});
