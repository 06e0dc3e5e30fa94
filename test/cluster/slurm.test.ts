/**
 * The Slurm job scripts of docs/cluster.md, submitted to a real Slurm (`sbatch --wait --array`):
 * a one-node cluster that scripts/start-slurm.sh starts (`npm run test:cluster`; CI runs it).
 * The combined results of the array equal one unsharded run: the verify reports through the
 * merge.sbatch gate, a job that depends on the array (afterany), and the Parquet dataset row for
 * row (DuckDB), whole by the same gate. A failed task rerun alone (docs/cluster.md) writes its own
 * shard's part, not a part of the whole store. doctor.sbatch runs as one job of two tasks (here on
 * the one node: the probe says so).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { BIN, ROOT, cleanEnv, ensureBuilt } from '../support/cli.js';

let root: string;
let store: string;
let db: DuckDBConnection;
const TOKCAP = `${process.execPath} ${BIN}`;

beforeAll(async () => {
  await ensureBuilt();
  const sinfo = await execa('sinfo', ['-h', '-o', '%t'], { reject: false });
  if (sinfo.exitCode !== 0 || !/idle|mix|alloc/.test(sinfo.stdout)) {
    throw new Error(
      `no Slurm node is up (sinfo: ${sinfo.stdout || sinfo.stderr || sinfo.exitCode}); start one with scripts/start-slurm.sh (root)`,
    );
  }
  root = mkdtempSync(join(tmpdir(), 'tokcap-slurm-'));
  store = join(root, 'store');
  await generateStore({ dir: store }, { rollouts: 30, calls: 3, prompt: 8, gen: 3, turn: 2, seed: 31, mix: true });
  db = await (await DuckDBInstance.create(':memory:')).connect();
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/**
 * `sbatch --wait` of an example script from `root`; TOKCAP reaches the tasks through sbatch's
 * default --export=ALL. One CPU per task instead of the scripts' two, so that a small node runs
 * tasks side by side (and shards write into one dataset at once).
 */
async function sbatch(options: string[], script: string, args: string[], env: Record<string, string> = {}) {
  const r = await execa(
    'sbatch',
    ['--wait', '--chdir', root, '--cpus-per-task=1', ...options, join(ROOT, 'examples/slurm', script), ...args],
    {
      env: cleanEnv({ TOKCAP, ...env }),
      extendEnv: false,
      reject: false,
    },
  );
  const job = /Submitted batch job (\d+)/.exec(r.stdout)?.[1];
  const logs = job ? readdirSync(root).filter((f) => f.includes(`-${job}_`) || f.endsWith(`-${job}.log`)) : [];
  const text = logs.map((f) => `${f}:\n${readFileSync(join(root, f), 'utf8')}`).join('\n');
  return { exitCode: r.exitCode, job, logs, text: `${r.stderr}\n${text}` };
}

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await db.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

/** Rows of A not in B plus rows of B not in A (a multiset difference). */
async function difference(a: string, b: string): Promise<number> {
  const [r] = await rows(
    `select (select count(*) from (select * from ${a} except all select * from ${b})) + (select count(*) from (select * from ${b} except all select * from ${a})) as n`,
  );
  return Number(r.n);
}

const table = (dataset: string, name: string) => `read_parquet('${dataset}/${name}/*.parquet')`;
const parquetFiles = (path: string) =>
  readdirSync(path)
    .filter((n) => n.endsWith('.parquet'))
    .sort();
const part = (k: number, n: number) => `part-${String(k).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.parquet`;

// Concurrent: each test mostly waits for sbatch --wait, which polls the controller every few seconds.
describe.concurrent('examples/slurm on a real Slurm', () => {
  it('verify.sbatch --array=0-3, then merge.sbatch as a dependent job: the gate prints what one unsharded run finds', async () => {
    const reports = join(root, 'reports');
    // As docs/cluster.md submits them: the array, then the gate depending on it (afterany).
    const array = await execa(
      'sbatch',
      [
        '--parsable',
        '--chdir',
        root,
        '--cpus-per-task=1',
        '--array=0-3',
        join(ROOT, 'examples/slurm/verify.sbatch'),
        store,
        reports,
      ],
      {
        env: cleanEnv({ TOKCAP }),
        extendEnv: false,
      },
    );
    const job = array.stdout.trim().split(';')[0];
    const gate = await sbatch([`--dependency=afterany:${job}`], 'merge.sbatch', [reports, '--json']);
    expect(gate.exitCode, gate.text).toBe(0);
    expect(readdirSync(reports).sort()).toEqual(['verify-0.json', 'verify-1.json', 'verify-2.json', 'verify-3.json']);
    const whole = JSON.parse(
      (await execa(process.execPath, [BIN, 'verify-digests', store, '--json'], { reject: false, env: cleanEnv() }))
        .stdout,
    );
    expect(whole.ok).toBe(true);
    const log = readFileSync(join(root, gate.logs[0]), 'utf8');
    expect(JSON.parse(log)).toMatchObject({
      command: 'verify-digests',
      ok: true,
      findings: whole.findings,
      shards: 4,
      rollouts: 30,
    });
  }, 300_000);

  it('the gate fails (exit 3, naming the shard) when a task left no report', async () => {
    const reports = join(root, 'reports-missing');
    const run = await sbatch(['--array=0-2'], 'verify.sbatch', [store, reports]);
    expect(run.exitCode, run.text).toBe(0);
    rmSync(join(reports, 'verify-1.json'));
    const gate = await sbatch([], 'merge.sbatch', [reports]);
    expect(gate.exitCode).not.toBe(0);
    expect(gate.text).toContain('tokcap: merge: shard 1 of 3 missing');
  }, 300_000);

  it('doctor.sbatch: one job of two tasks, the one-node checks on each, then --hold and --probe', async () => {
    const dir = join(root, 'doctor');
    mkdirSync(dir);
    // One node here: both tasks on it (the script asks for two nodes; options given to sbatch win).
    const run = await sbatch(['--nodes=1', '--ntasks-per-node=2'], 'doctor.sbatch', [dir], { TOKCAP_HOLD: '10s' });
    expect(run.exitCode, run.text).toBe(0);
    const log = readFileSync(join(root, run.logs[0]), 'utf8');
    expect(log.match(/^nothing found that makes tokcap unsafe/gm)).toHaveLength(2);
    expect(log).toMatch(/the lock excludes \(held on .*, tried on .*\), but both run on the same node/);
    expect(log).toMatch(/released the lock on .*\.tokcap-doctor-hold after 10s/);
    expect(readdirSync(dir)).toEqual([]);
  }, 300_000);

  it('export.sbatch --array=0-2: one dataset, one part per task, equal row for row to an unsharded export', async () => {
    const dataset = join(root, 'dataset');
    const whole = join(root, 'whole');
    const [run, one] = await Promise.all([
      sbatch(['--array=0-2'], 'export.sbatch', [store, dataset]),
      execa(process.execPath, [BIN, 'export', store, '--format', 'parquet', '--out', whole, '--json'], {
        reject: false,
        env: cleanEnv(),
      }),
    ]);
    expect(run.exitCode, run.text).toBe(0);
    expect(run.logs).toHaveLength(3);
    expect(one.exitCode, one.stderr).toBe(0);
    for (const name of ['calls', 'rollouts']) {
      expect(parquetFiles(join(dataset, name))).toEqual([0, 1, 2].map((k) => part(k, 3)));
      expect(await difference(table(dataset, name), table(whole, name))).toBe(0);
    }
    const gate = await sbatch([], 'merge.sbatch', [dataset]);
    expect(gate.exitCode, gate.text).toBe(0);
    expect(gate.text).toMatch(/complete: 3 of 3 parts in calls and rollouts .*_SUCCESS present/);
  }, 300_000);

  it('a task rerun alone as docs/cluster.md says (a one-task array naming TOKCAP_SHARD) writes that shard, not the whole store', async () => {
    const rerun = join(root, 'rerun');
    const direct = join(root, 'direct');
    const [run, one] = await Promise.all([
      sbatch(['--array=1', '--export=ALL,TOKCAP_SHARD=1/3'], 'export.sbatch', [store, rerun]),
      execa(
        process.execPath,
        [BIN, 'export', store, '--format', 'parquet', '--shard', '1/3', '--out', direct, '--json'],
        { reject: false, env: cleanEnv() },
      ),
    ]);
    expect(run.exitCode, run.text).toBe(0);
    expect(one.exitCode, one.stderr).toBe(0);
    for (const name of ['calls', 'rollouts']) {
      expect(parquetFiles(join(rerun, name))).toEqual([part(1, 3)]);
      expect(await difference(table(rerun, name), table(direct, name))).toBe(0);
    }
    const [n] = await rows(`select count(*) as n from ${table(rerun, 'rollouts')}`);
    expect(Number(n.n)).toBeGreaterThan(0);
    expect(Number(n.n)).toBeLessThan(30);
  }, 300_000);
});
