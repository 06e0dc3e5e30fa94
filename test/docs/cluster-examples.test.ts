/**
 * The job scripts of docs/cluster.md, run as their schedulers would run them: each task with the
 * environment variables Slurm (or Kubernetes) sets, tokcap as the spawned binary. Their outputs
 * combine as the doc says: the `jq -s` gate over the verify reports, one Parquet dataset.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { BIN, ROOT, cleanEnv, ensureBuilt } from '../support/cli.js';

let root: string;
let store: string;
const TOKCAP = `${process.execPath} ${BIN}`;

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'tokcap-cluster-'));
  store = join(root, 'store');
  await generateStore({ dir: store }, { rollouts: 24, calls: 3, prompt: 8, gen: 3, turn: 2, seed: 21, mix: true });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function slurmTask(id: number, min: number, count: number): Record<string, string> {
  return cleanEnv({
    TOKCAP,
    SLURM_ARRAY_TASK_ID: String(id),
    SLURM_ARRAY_TASK_MIN: String(min),
    SLURM_ARRAY_TASK_MAX: String(min + count - 1),
    SLURM_ARRAY_TASK_COUNT: String(count),
  });
}

/** The gate job of docs/cluster.md, examples/slurm/merge.sbatch, run as Slurm would run it. */
function gate(...args: string[]) {
  return execa('bash', [join(ROOT, 'examples/slurm/merge.sbatch'), ...args], {
    env: cleanEnv({ TOKCAP }),
    extendEnv: false,
    reject: false,
  });
}

const parquetFiles = (path: string) =>
  readdirSync(path)
    .filter((n) => n.endsWith('.parquet'))
    .sort();

describe('examples/slurm', () => {
  it('verify.sbatch: one report per task; the merge.sbatch gate passes on them, fails on a finding or a missing shard', async () => {
    const reports = join(root, 'reports');
    const tasks = await Promise.all(
      [3, 4, 5].map((id) =>
        execa('bash', [join(ROOT, 'examples/slurm/verify.sbatch'), store, reports], {
          env: slurmTask(id, 3, 3),
          extendEnv: false,
          reject: false,
        }),
      ),
    );
    for (const t of tasks) expect(t.exitCode, t.stderr).toBe(0);
    expect(readdirSync(reports).sort()).toEqual(['verify-0.json', 'verify-1.json', 'verify-2.json']);
    const whole = JSON.parse(
      (await execa(process.execPath, [BIN, 'verify-digests', store, '--json'], { reject: false, env: cleanEnv() }))
        .stdout,
    );
    const passed = await gate(reports, '--json');
    // The mixed store has warnings only (torn tails): ok, and every finding of the whole run, in its order.
    expect(whole.ok).toBe(true);
    expect(passed.exitCode, passed.stderr).toBe(0);
    expect(JSON.parse(passed.stdout)).toMatchObject({ ok: true, findings: whole.findings, shards: 3, rollouts: 24 });
    // One shard with an error finding fails the gate (exit 1, as verify-digests would).
    const report = JSON.parse(readFileSync(join(reports, 'verify-1.json'), 'utf8'));
    writeFileSync(
      join(reports, 'verify-1.json'),
      JSON.stringify({
        ...report,
        ok: false,
        findings: [{ rollout_id: 'r99', code: 'digest_mismatch', severity: 'error', message: 'x' }],
      }),
    );
    const failed = await gate(reports);
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toContain('r99  error digest_mismatch: x');
    // A task that left no report fails it (exit 3), naming the shard.
    rmSync(join(reports, 'verify-2.json'));
    const missing = await gate(reports);
    expect(missing.exitCode).toBe(3);
    expect(missing.stderr).toBe('tokcap: merge: shard 2 of 3 missing');
  });

  it('export.sbatch: the tasks of an array write one dataset, one part per task', async () => {
    const dataset = join(root, 'dataset');
    const tasks = await Promise.all(
      [0, 1, 2, 3].map((id) =>
        execa('bash', [join(ROOT, 'examples/slurm/export.sbatch'), store, dataset], {
          env: slurmTask(id, 0, 4),
          extendEnv: false,
          reject: false,
        }),
      ),
    );
    for (const t of tasks) expect(t.exitCode, t.stderr).toBe(0);
    expect(tasks.reduce((n, t) => n + JSON.parse(t.stdout).rollouts, 0)).toBe(24);
    const parts = [
      'part-00000-of-00004.parquet',
      'part-00001-of-00004.parquet',
      'part-00002-of-00004.parquet',
      'part-00003-of-00004.parquet',
    ];
    expect(parquetFiles(join(dataset, 'calls'))).toEqual(parts);
    expect(parquetFiles(join(dataset, 'rollouts'))).toEqual(parts);
    const whole = await gate(dataset);
    expect([whole.exitCode, whole.stderr]).toEqual([0, '']);
    expect(whole.stdout).toMatch(/^complete: 4 of 4 parts/);
  }, 180_000);

  it('verify.sbatch rerun as a one-task array with TOKCAP_SHARD=K/N writes verify-K.json of shard K', async () => {
    const reports = join(root, 'rerun-reports');
    const env = { ...slurmTask(7, 7, 1), TOKCAP_SHARD: '1/3' };
    const task = await execa('bash', [join(ROOT, 'examples/slurm/verify.sbatch'), store, reports], {
      env,
      extendEnv: false,
      reject: false,
    });
    expect(task.exitCode, task.stderr).toBe(0);
    expect(readdirSync(reports)).toEqual(['verify-1.json']);
    const shard = await execa(process.execPath, [BIN, 'verify-digests', store, '--shard', '1/3', '--json'], {
      reject: false,
      env: cleanEnv(),
    });
    expect(JSON.parse(readFileSync(join(reports, 'verify-1.json'), 'utf8'))).toEqual(JSON.parse(shard.stdout));
  });

  it('a task outside a job array, or in an array with a step, fails as a usage error (exit 2)', async () => {
    const none = await execa('bash', [join(ROOT, 'examples/slurm/export.sbatch'), store, join(root, 'nothing')], {
      env: cleanEnv({ TOKCAP }),
      extendEnv: false,
      reject: false,
    });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/SLURM_ARRAY_TASK_ID/);
    const stepped = await execa('bash', [join(ROOT, 'examples/slurm/export.sbatch'), store, join(root, 'nothing')], {
      env: cleanEnv({
        TOKCAP,
        SLURM_ARRAY_TASK_ID: '2',
        SLURM_ARRAY_TASK_MIN: '0',
        SLURM_ARRAY_TASK_MAX: '4',
        SLURM_ARRAY_TASK_COUNT: '3',
      }),
      extendEnv: false,
      reject: false,
    });
    expect(stepped.exitCode).toBe(2);
    expect(stepped.stderr).toMatch(/without a step/);
  });
});

describe('examples/k8s/export-job.yaml', () => {
  it("its container command, run as the Job's pods (JOB_COMPLETION_INDEX, TOKCAP_SHARDS), writes one dataset", async () => {
    const yaml = readFileSync(join(ROOT, 'examples/k8s/export-job.yaml'), 'utf8');
    const command = JSON.parse(/command: (\[.*\])/.exec(yaml)![1]) as string[];
    const completions = Number(/completions: (\d+)/.exec(yaml)![1]);
    const shards = /name: TOKCAP_SHARDS\s+value: "(\d+)"/.exec(yaml)![1];
    expect(Number(shards)).toBe(completions);
    expect(command[0]).toBe('tokcap');
    const dataset = join(root, 'k8s-dataset');
    const args = command
      .slice(1)
      .map((a) => (a === '/captures/run-0001' ? store : a === '/datasets/run-0001' ? dataset : a));
    // Every pod of the Job, a few at a time (16 processes at once would only measure the machine).
    for (let k = 0; k < completions; k += 4) {
      const pods = await Promise.all(
        [k, k + 1, k + 2, k + 3].map((index) =>
          execa(process.execPath, [BIN, ...args], {
            env: cleanEnv({ JOB_COMPLETION_INDEX: String(index), TOKCAP_SHARDS: shards }),
            extendEnv: false,
            reject: false,
          }),
        ),
      );
      for (const p of pods) expect(p.exitCode, p.stderr).toBe(0);
    }
    expect(parquetFiles(join(dataset, 'rollouts'))).toHaveLength(completions);
    expect(parquetFiles(join(dataset, 'calls'))).toHaveLength(completions);
    // The gate Job's command says the dataset is whole.
    const gateYaml = readFileSync(join(ROOT, 'examples/k8s/merge-job.yaml'), 'utf8');
    const gateCommand = JSON.parse(/command: (\[.*\])/.exec(gateYaml)![1]) as string[];
    expect(gateCommand.slice(0, 2)).toEqual(['tokcap', 'merge']);
    const merged = await execa(
      process.execPath,
      [BIN, ...gateCommand.slice(1).map((a) => (a === '/datasets/run-0001' ? dataset : a))],
      { env: cleanEnv(), extendEnv: false, reject: false },
    );
    expect([merged.exitCode, merged.stderr]).toEqual([0, '']);
  }, 300_000);
});
