/**
 * `export --format parquet` read back by a real reader (DuckDB): a dataset written by N shard
 * processes at once into one directory equals, row for row, the dataset of one unsharded process
 * (N = 1, 3, 4), and its figures agree with `build --json` and `inspect --json`.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

const calls = (dataset: string) => `read_parquet('${dataset}/calls/*.parquet')`;
const rollouts = (dataset: string) => `read_parquet('${dataset}/rollouts/*.parquet')`;

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'tokcap-parquet-'));
  dir = join(root, 'store');
  // Every shape (retries, dangling intents, markers, frozen, retired, torn tails), deltas among them.
  await generateStore({ dir }, { rollouts: 40, calls: 4, prompt: 12, gen: 4, turn: 3, seed: 11, mix: true });
  await generateStore({ dir }, { rollouts: 8, calls: 3, prompt: 10, gen: 3, turn: 2, seed: 12, delta: true, prefix: 'd' });
  writeFileSync(join(dir, 'r05.tokens.state.json'), '[1, 2]');
  db = await (await DuckDBInstance.create(':memory:')).connect();
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Rows of A not in B plus rows of B not in A (a multiset difference, so duplicates count). */
async function difference(a: string, b: string): Promise<number> {
  const [r] = await rows(`select (select count(*) from (select * from ${a} except all select * from ${b})) + (select count(*) from (select * from ${b} except all select * from ${a})) as n`);
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
  }, 120_000);

  it('has the declared columns, in order, and one part file per table named part-00000-of-00001', async () => {
    expect(readdirSync(join(whole, 'calls'))).toEqual(['part-00000-of-00001.parquet']);
    expect(readdirSync(join(whole, 'rollouts'))).toEqual(['part-00000-of-00001.parquet']);
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
      const names = Array.from({ length: n }, (_, k) => `part-${String(k).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.parquet`);
      expect(readdirSync(join(sharded, 'calls')).sort()).toEqual(names);
      expect(readdirSync(join(sharded, 'rollouts')).sort()).toEqual(names);
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
    const [delivered] = await rows(`select sum(len(generation_token_ids)) as n from ${calls(whole)} where in_delivered_chain`);
    expect(Number(delivered.n)).toBe(built.reduce((sum, b) => sum + (b.metrics.generated_tokens_delivered ?? 0), 0));
  });

  it('agrees with inspect --json: each rollout has the status and conditions of the library model', async () => {
    const facts = JSON.parse((await tokcap(['inspect', dir, '--json'])).stdout).rollouts as Record<string, RolloutFacts>;
    const table = await rows(`select rollout_id, status, conditions, snapshot_id, version from ${rollouts(whole)} order by rollout_id`);
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
    const some = await rows(`select rollout_id, model_call_id, line from ${calls(whole)} where rollout_id in ('r00', 'd03', 'r03') order by rollout_id, line`);
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
    expect(readdirSync(join(whole, 'calls'))).toEqual(['part-00000-of-00001.parquet']);
    // Another shard count beside it is another part: not refused.
    const other = await tokcap(['export', dir, '--format', 'parquet', '--out', whole, '--shard', '1/2', '-q']);
    expect(other.exitCode).toBe(0);
    expect(readdirSync(join(whole, 'rollouts')).sort()).toEqual(['part-00000-of-00001.parquet', 'part-00001-of-00002.parquet']);
  }, 120_000);
});
