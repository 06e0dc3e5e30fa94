/**
 * `export --format parquet` read back by a real reader (DuckDB): a dataset written by N shard
 * processes at once into one directory equals, row for row, the dataset of one unsharded process
 * (N = 1, 3, 4), and its figures agree with `build --json` and `inspect --json`.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { rolloutStatus } from '../../../src/status/rollout-status.js';
import type { RolloutFacts } from '../../../src/facts/rollout-facts.js';
import { CALL_COLUMNS, ROLLOUT_COLUMNS } from '../../../src/export/parquet/schema.js';
import { BIN, cleanEnv, ensureBuilt } from '../../support/cli.js';

let root: string;
let dir: string;
let db: DuckDBConnection;

async function tokcap(args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [BIN, ...args], { env: cleanEnv(env), extendEnv: false, reject: false });
}

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await db.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

/** The Parquet files of a table directory (beside them: `_SUCCESS` and the parts' manifests). */
const parquetFiles = (path: string) =>
  readdirSync(path)
    .filter((n) => n.endsWith('.parquet'))
    .sort();
const partName = (k: number, n: number) => `part-${String(k).padStart(5, '0')}-of-${String(n).padStart(5, '0')}`;
const markers = (dataset: string) =>
  [join(dataset, '_SUCCESS'), join(dataset, 'calls', '_SUCCESS'), join(dataset, 'rollouts', '_SUCCESS')].map(
    existsSync,
  );

const calls = (dataset: string) => `read_parquet('${dataset}/calls/*.parquet')`;
const rollouts = (dataset: string) => `read_parquet('${dataset}/rollouts/*.parquet')`;

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'tokcap-parquet-'));
  dir = join(root, 'store');
  // Every shape (retries, dangling intents, markers, frozen, retired, torn tails), deltas among them.
  await generateStore({ dir }, { rollouts: 40, calls: 4, prompt: 12, gen: 4, turn: 3, seed: 11, mix: true });
  await generateStore(
    { dir },
    { rollouts: 8, calls: 3, prompt: 10, gen: 3, turn: 2, seed: 12, delta: true, prefix: 'd' },
  );
  writeFileSync(join(dir, 'r05.tokens.state.json'), '[1, 2]');
  db = await (await DuckDBInstance.create(':memory:')).connect();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Rows of A not in B plus rows of B not in A (a multiset difference, so duplicates count). */
async function difference(a: string, b: string): Promise<number> {
  const [r] = await rows(
    `select (select count(*) from (select * from ${a} except all select * from ${b})) + (select count(*) from (select * from ${b} except all select * from ${a})) as n`,
  );
  return Number(r.n);
}

describe('the Parquet dataset', () => {
  let whole: string;

  beforeAll(async () => {
    whole = join(root, 'whole');
    const r = await tokcap(['export', dir, '--format', 'parquet', '--out', whole, '--json']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ out: whole, format: 'parquet', rollouts: 48 });
  });

  it('has the declared columns, in order, and one part file per table named part-00000-of-00001', async () => {
    expect(parquetFiles(join(whole, 'calls'))).toEqual(['part-00000-of-00001.parquet']);
    expect(parquetFiles(join(whole, 'rollouts'))).toEqual(['part-00000-of-00001.parquet']);
    const callCols = await rows(`describe select * from ${calls(whole)}`);
    expect(callCols.map((c) => c.column_name)).toEqual(CALL_COLUMNS.map((c) => c.name));
    const types = Object.fromEntries(callCols.map((c) => [c.column_name, c.column_type]));
    expect(types.prompt_token_ids).toBe('UINTEGER[]');
    expect(types.generation_log_probs).toBe('DOUBLE[]');
    const rolloutCols = await rows(`describe select * from ${rollouts(whole)}`);
    expect(rolloutCols.map((c) => c.column_name)).toEqual(ROLLOUT_COLUMNS.map((c) => c.name));
  });

  for (const n of [1, 3, 4]) {
    it(`written by ${n} concurrent shard processes, equals the unsharded dataset row for row`, async () => {
      const sharded = join(root, `sharded-${n}`);
      const runs = await Promise.all(
        Array.from({ length: n }, (_, k) =>
          // Half the tasks take their shard from a Slurm array, half from --shard K/N.
          k % 2 === 0
            ? tokcap(['export', dir, '--format', 'parquet', '--out', sharded, '--shard', 'auto', '--json'], {
                SLURM_ARRAY_TASK_ID: String(100 + k),
                SLURM_ARRAY_TASK_MIN: '100',
                SLURM_ARRAY_TASK_COUNT: String(n),
              })
            : tokcap(['export', dir, '--format', 'parquet', '--out', sharded, '--shard', `${k}/${n}`, '--json']),
        ),
      );
      for (const r of runs) expect([r.exitCode, r.stderr]).toEqual([0, '']);
      expect(runs.reduce((sum, r) => sum + JSON.parse(r.stdout).rollouts, 0)).toBe(48);
      const names = Array.from(
        { length: n },
        (_, k) => `part-${String(k).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.parquet`,
      );
      // Each part beside its manifest, and the markers of a whole dataset, written by whichever task found it whole.
      for (const table of ['calls', 'rollouts']) {
        expect(readdirSync(join(sharded, table)).sort()).toEqual([
          '_SUCCESS',
          ...names.map((p) => `_${p.replace('.parquet', '.manifest.json')}`),
          ...names,
        ]);
      }
      expect(markers(sharded)).toEqual([true, true, true]);
      const merged = await tokcap(['merge', sharded, '--json']);
      expect([merged.exitCode, merged.stderr]).toEqual([0, '']);
      expect(JSON.parse(merged.stdout)).toMatchObject({
        complete: true,
        count: n,
        success: true,
        tables: { rollouts: { parts: n, missing: [], rows: 48 } },
      });
      expect(await difference(calls(sharded), calls(whole))).toBe(0);
      expect(await difference(rollouts(sharded), rollouts(whole))).toBe(0);
      const [count] = await rows(`select count(*) as n from ${calls(sharded)}`);
      expect(Number(count.n)).toBeGreaterThan(150);
    }, 180_000);
  }

  it('agrees with build --json: verdicts, mask_sample, token sums', async () => {
    const built = JSON.parse((await tokcap(['build', dir, '--json'])).stdout) as Record<string, any>[];
    const byId = new Map(built.map((b) => [b.rollout_id, b]));
    const table = await rows(
      `select rollout_id, mask_sample, could_not_be_built, n_calls, generated_tokens_captured, generated_tokens_delivered, tokens_delivered, [c.code for c in mask_causes] as codes from ${rollouts(whole)} order by rollout_id`,
    );
    expect(table.map((r) => r.rollout_id)).toEqual([...byId.keys()].sort());
    for (const r of table) {
      const b = byId.get(r.rollout_id)!;
      expect(r.mask_sample, String(r.rollout_id)).toBe(b.mask_sample);
      expect(r.could_not_be_built).toBe(b.rebuilt_response === null);
      expect(r.n_calls).toBe(b.metrics.n_calls);
      expect(r.generated_tokens_delivered).toBe(b.metrics.generated_tokens_delivered ?? null);
      expect(r.generated_tokens_captured).toBe(b.metrics.generated_tokens_captured ?? null);
      expect((r.codes as string[]).length > 0).toBe(b.mask_sample);
      if (b.rebuilt_response !== null) {
        const out = b.rebuilt_response.output as { prompt_token_ids?: number[]; generation_token_ids?: number[] }[];
        const last = out.filter((o) => o.prompt_token_ids).at(-1);
        expect(r.tokens_delivered).toBe(last ? last.prompt_token_ids!.length + last.generation_token_ids!.length : 0);
      }
    }
    // The calls table holds the tokens the builds counted.
    const sums = await rows(
      `select rollout_id, sum(generation_len) filter (where in_delivered_chain) as delivered, sum(generation_len) filter (where call_status = 'placed') as captured, sum(1 + duplicate_copies) as records from ${calls(whole)} group by rollout_id`,
    );
    expect(sums.length).toBeGreaterThan(30);
    for (const s of sums) {
      const b = byId.get(s.rollout_id)!;
      expect(Number(s.delivered ?? 0), String(s.rollout_id)).toBe(b.metrics.generated_tokens_delivered ?? 0);
      expect(Number(s.captured ?? 0)).toBe(b.metrics.generated_tokens_captured ?? 0);
      expect(Number(s.records)).toBe(b.metrics.n_calls);
    }
    // The delivered chain's tokens, as the build result's last output item has them.
    const [delivered] = await rows(
      `select sum(len(generation_token_ids)) as n from ${calls(whole)} where in_delivered_chain`,
    );
    expect(Number(delivered.n)).toBe(built.reduce((sum, b) => sum + (b.metrics.generated_tokens_delivered ?? 0), 0));
  });

  it('agrees with inspect --json: each rollout has the status and conditions of the library model', async () => {
    const facts = JSON.parse((await tokcap(['inspect', dir, '--json'])).stdout).rollouts as Record<
      string,
      RolloutFacts
    >;
    const table = await rows(
      `select rollout_id, status, conditions, snapshot_id, version from ${rollouts(whole)} order by rollout_id`,
    );
    expect(table.map((r) => r.rollout_id)).toEqual(Object.keys(facts));
    const seen = new Set<string>();
    for (const r of table) {
      const answer = rolloutStatus(facts[r.rollout_id as string]);
      expect([r.status, r.conditions], String(r.rollout_id)).toEqual([answer.status, answer.conditions]);
      seen.add(String(r.status));
    }
    expect(seen).toEqual(new Set(['live', 'frozen', 'retired']));
  });

  it('the line column names the record in the JSONL', async () => {
    const some = await rows(
      `select rollout_id, model_call_id, line from ${calls(whole)} where rollout_id in ('r00', 'd03', 'r03') order by rollout_id, line`,
    );
    expect(some.length).toBeGreaterThan(6);
    const { readFileSync } = await import('node:fs');
    for (const r of some) {
      const lines = readFileSync(join(dir, `${r.rollout_id}.tokens.jsonl`), 'utf8').split('\n');
      expect(JSON.parse(lines[(r.line as number) - 1]).model_call_id).toBe(r.model_call_id);
    }
    const stored = await rows(`select distinct stored from ${calls(whole)} order by 1`);
    expect(stored.map((s) => s.stored)).toEqual(['delta', 'full']);
  });

  it('refuses an existing part file without --force (exit 2, nothing written), replaces it with', async () => {
    const again = await tokcap(['export', dir, '--format', 'parquet', '--out', whole]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/part-00000-of-00001\.parquet already exists; use --force/);
    const forced = await tokcap(['export', dir, '--format', 'parquet', '--out', whole, '--force', '-q']);
    expect([forced.exitCode, forced.stderr]).toEqual([0, '']);
    expect(parquetFiles(join(whole, 'calls'))).toEqual(['part-00000-of-00001.parquet']);
  });

  it('refuses a part of another shard count (exit 3, nothing written); --force replaces the dataset', async () => {
    const dataset = join(root, 'recount');
    for (const k of [0, 1, 2, 3])
      expect(
        (await tokcap(['export', dir, '--format', 'parquet', '--out', dataset, '--shard', `${k}/4`, '-q'])).exitCode,
      ).toBe(0);
    const before = ['calls', 'rollouts'].map((t) => readdirSync(join(dataset, t)).sort());
    // A task rerun without its shard (the whole store, 0 of 1) would double every row.
    const rerun = await tokcap(['export', dir, '--format', 'parquet', '--out', dataset]);
    expect(rerun.exitCode).toBe(3);
    expect(rerun.stderr).toMatch(
      /^tokcap: .*recount: holds parts of 4 shards \(calls\/part-00000-of-00004\.parquet, \.\.\.\): a part of 1 would mix two runs; .*--force/,
    );
    expect(['calls', 'rollouts'].map((t) => readdirSync(join(dataset, t)).sort())).toEqual(before);
    const other = await tokcap(['export', dir, '--format', 'parquet', '--out', dataset, '--shard', '1/2']);
    expect(other.exitCode).toBe(3);
    expect(['calls', 'rollouts'].map((t) => readdirSync(join(dataset, t)).sort())).toEqual(before);
    // --force: the parts of 4 and their markers go, the new count's part comes.
    const forced = await tokcap([
      'export',
      dir,
      '--format',
      'parquet',
      '--out',
      dataset,
      '--shard',
      '1/2',
      '--force',
      '-q',
    ]);
    expect([forced.exitCode, forced.stderr]).toEqual([0, '']);
    expect(readdirSync(join(dataset, 'rollouts')).sort()).toEqual([
      `_${partName(1, 2)}.manifest.json`,
      `${partName(1, 2)}.parquet`,
    ]);
    expect(markers(dataset)).toEqual([false, false, false]);
  }, 180_000);

  it('_SUCCESS appears exactly when the last part is in place; merge names what is missing until then', async () => {
    const dataset = join(root, 'one-by-one');
    for (const k of [2, 0]) {
      expect(
        (await tokcap(['export', dir, '--format', 'parquet', '--out', dataset, '--shard', `${k}/3`, '-q'])).exitCode,
      ).toBe(0);
      expect(markers(dataset)).toEqual([false, false, false]);
    }
    const partial = await tokcap(['merge', dataset, '--json']);
    expect(partial.exitCode).toBe(3);
    expect(JSON.parse(partial.stdout)).toMatchObject({
      complete: false,
      count: 3,
      success: false,
      tables: { calls: { parts: 2, missing: [1] }, rollouts: { parts: 2, missing: [1] } },
    });
    expect(partial.stderr).toContain('calls: part 1 of 3 missing');
    expect(
      (await tokcap(['export', dir, '--format', 'parquet', '--out', dataset, '--shard', '1/3', '-q'])).exitCode,
    ).toBe(0);
    expect(markers(dataset)).toEqual([true, true, true]);
    // Each manifest describes its part: rows as DuckDB counts them, bytes, SHA-256, the store and selection.
    const manifest = JSON.parse(readFileSync(join(dataset, 'rollouts', `_${partName(1, 3)}.manifest.json`), 'utf8'));
    const [n] = await rows(`select count(*) as n from read_parquet('${dataset}/rollouts/${partName(1, 3)}.parquet')`);
    expect(manifest).toMatchObject({
      table: 'rollouts',
      part: `${partName(1, 3)}.parquet`,
      shard: { index: 1, count: 3 },
      rows: Number(n.n),
      store: dir,
      selection: { ids: 'all', freeze: false },
    });
    expect(manifest.sha256).toMatch(/^[0-9a-f]{64}$/);
    const complete = await tokcap(['merge', dataset]);
    expect([complete.exitCode, complete.stderr]).toEqual([0, '']);
    expect(complete.stdout).toMatch(/^complete: 3 of 3 parts in calls and rollouts .*_SUCCESS present/);
    // A part that no longer matches its manifest makes the dataset incomplete.
    writeFileSync(join(dataset, 'calls', `${partName(0, 3)}.parquet`), 'not parquet');
    const damaged = await tokcap(['merge', dataset]);
    expect(damaged.exitCode).toBe(3);
    expect(damaged.stderr).toContain(`calls/${partName(0, 3)}.parquet: does not match its manifest`);
  }, 180_000);
});
