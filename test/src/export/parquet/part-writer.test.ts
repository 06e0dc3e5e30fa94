/**
 * The Parquet part writer (part-writer.ts, arrow-batch.ts), read back with DuckDB: row groups
 * are bounded by bytes as well as rows (long prompts make a group of 2,048 calls tens of MB,
 * which the writer would hold in memory that never shrinks); token lists are copied into reused
 * buffers that grow for a call longer than a batch, as uint32 or, past 2^32, int64.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportStore } from '../../../../src/export/export-store.js';
import { BATCH_LIST_VALUES, ROW_GROUP_BYTES, ROW_GROUP_ROWS } from '../../../../src/export/parquet/part-writer.js';
import { generateStore } from '../../../../src/fixture/generate-store.js';
import { canonicalLine, entry } from '../../../support/store.js';

let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tokcap-row-groups-'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the Parquet part writer', () => {
  it('hold at most ROW_GROUP_ROWS rows and about ROW_GROUP_BYTES of compressed pages, however long the prompts', async () => {
    const dir = join(root, 'store');
    // 720 calls with prompts of 1,000 to 4,300 tokens: one row group by the row limit alone.
    await generateStore({ dir }, { rollouts: 60, calls: 12, seed: 9 });
    const out = join(root, 'dataset');
    const summary = await exportStore({
      dir,
      out,
      format: 'parquet',
      freeze: false,
      force: false,
      trainableOnly: false,
    });
    expect(summary.exported).toBe(60);
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const groups = (
      await db.runAndReadAll(
        `select row_group_id, any_value(row_group_num_rows) as n, sum(total_compressed_size) as compressed, sum(total_uncompressed_size) as uncompressed
         from parquet_metadata('${out}/calls/part-00000-of-00001.parquet') group by row_group_id order by row_group_id`,
      )
    ).getRowObjectsJson() as { n: string; compressed: string; uncompressed: string }[];
    const rows = groups.map((g) => Number(g.n));
    expect(rows.reduce((a, b) => a + b, 0)).toBe(720);
    expect(Math.max(...rows)).toBeLessThanOrEqual(ROW_GROUP_ROWS);
    // Split by bytes, not rows.
    expect(groups.length).toBeGreaterThan(1);
    // The writer checks the limit between batches: a group passes it by at most part of one batch.
    for (const g of groups) expect(Number(g.compressed)).toBeLessThanOrEqual(ROW_GROUP_BYTES + BATCH_LIST_VALUES * 8);
    const [all] = (
      await db.runAndReadAll(`select count(*) as n, sum(len(prompt_token_ids)) as tokens from '${out}/calls/*.parquet'`)
    ).getRowObjectsJson();
    expect(Number(all.n)).toBe(720);
    expect(Number(all.tokens)).toBeGreaterThan(720 * 1000);
  });

  it('a part with a token id past 2^32 is written with int64 lists; a call longer than a batch grows the buffers', async () => {
    const dir = join(root, 'wide');
    await generateStore({ dir }, { rollouts: 3, calls: 2, prompt: 20, gen: 3, turn: 2, seed: 4 });
    const long = Array.from({ length: BATCH_LIST_VALUES + 1000 }, (_, i) => (i * 7919) % 150_000);
    const big = 2 ** 32 + 5;
    const lines = [
      canonicalLine(entry('c0', { rollout: 'wide', prompt: [1, big, 3], gen: [4, 5] })),
      canonicalLine(entry('c1', { rollout: 'wide', prompt: [1, big, 3, 4, 5, ...long], gen: [6], parent: 'c0' })),
    ];
    writeFileSync(join(dir, 'wide.tokens.jsonl'), Buffer.concat(lines));
    const out = join(root, 'wide-dataset');
    const summary = await exportStore({
      dir,
      out,
      format: 'parquet',
      freeze: false,
      force: false,
      trainableOnly: false,
    });
    expect(summary.exported).toBe(4);
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const calls = `'${out}/calls/*.parquet'`;
    const types = (
      await db.runAndReadAll(`describe select prompt_token_ids, generation_token_ids from ${calls}`)
    ).getRowObjectsJson();
    expect(types.map((t) => t.column_type)).toEqual(['BIGINT[]', 'BIGINT[]']);
    const wide = (
      await db.runAndReadAll(
        `select model_call_id, prompt_token_ids[2] as second, len(prompt_token_ids) as n, prompt_token_ids[-1] as last from ${calls} where rollout_id = 'wide' order by 1`,
      )
    ).getRowObjectsJson();
    expect(wide).toEqual([
      { model_call_id: 'c0', second: String(big), n: '3', last: '3' },
      { model_call_id: 'c1', second: String(big), n: String(5 + long.length), last: String(long.at(-1)) },
    ]);
    // The other rollouts' rows, before and after the long call, are intact.
    const [sums] = (
      await db.runAndReadAll(
        `select count(*) as n, sum(len(generation_token_ids)) as gen from ${calls} where rollout_id <> 'wide'`,
      )
    ).getRowObjectsJson();
    expect(Number(sums.n)).toBe(6);
    expect(Number(sums.gen)).toBe(18);
  });
});
