import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { cli } from '../support/cli.js';

/**
 * docs/cli.md#merge: the reports of one sharded run combine into the report and the exit code of
 * one unsharded run; a missing, repeated or foreign shard is refused (exit 3). The store has an
 * error finding (a changed token), an unreadable state file and torn tails.
 */
let root: string;
let dir: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tokcap-merge-'));
  dir = join(root, 'store');
  await generateStore({ dir }, { rollouts: 36, calls: 3, prompt: 8, gen: 3, turn: 2, seed: 9, mix: true });
  const file = join(dir, 'r02.tokens.jsonl');
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[0] = lines[0].replace(/"prompt_token_ids":\[(\d+)/, (_, d: string) => `"prompt_token_ids":[${Number(d) + 1}`);
  writeFileSync(file, lines.join('\n'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs `args` with `--shard K/N` for every K, writing each --json report into a new directory. */
async function shardReports(name: string, args: string[], n: number): Promise<string> {
  const reports = join(root, name);
  mkdirSync(reports);
  for (let k = 0; k < n; k++)
    writeFileSync(join(reports, `${name}-${k}.json`), (await cli([...args, '--shard', `${k}/${n}`, '--json'])).stdout);
  return reports;
}

describe('merge of a whole run: the unsharded report and exit code', () => {
  it('verify-digests: ok, every finding in id order, exit 1 on an error finding', async () => {
    const whole = await cli(['verify-digests', dir, '--json']);
    const reports = await shardReports('verify', ['verify-digests', dir], 4);
    const merged = await cli(['merge', reports, '--json']);
    expect(whole.code).toBe(1);
    expect(merged.code).toBe(whole.code);
    const w = JSON.parse(whole.stdout);
    const m = JSON.parse(merged.stdout);
    expect(m).toMatchObject({
      command: 'verify-digests',
      ok: w.ok,
      findings: w.findings,
      unchecked: w.unchecked,
      shards: 4,
      rollouts: 36,
    });
    expect(
      w.findings.some(
        (f: { rollout_id: string; severity: string }) => f.rollout_id === 'r02' && f.severity === 'error',
      ),
    ).toBe(true);
    const text = await cli(['merge', reports]);
    expect(text.stdout).toMatch(/verify-digests, 4 shards: 36 rollouts verified: 2 errors, 4 warnings; ok: false\n$/);
  });

  it('inspect and build: one summary; exit 3 when a rollout could not be read or is damaged, as unsharded', async () => {
    writeFileSync(join(dir, 'r05.tokens.state.json'), '[1, 2]');
    try {
      const inspect = await cli(['inspect', dir, '--json']);
      const merged = await cli(['merge', await shardReports('inspect', ['inspect', dir], 3), '--json']);
      expect(merged.code).toBe(inspect.code);
      const m = JSON.parse(merged.stdout);
      expect(m.rollouts).toBe(Object.keys(JSON.parse(inspect.stdout).rollouts).length);
      // A state that does not parse leaves the rollout answered but damaged: exit 3 all the same.
      expect(inspect.code).toBe(3);
      expect(m.damaged).toEqual(['r05']);
      expect(m.unavailable.length + m.damaged.length > 0).toBe(inspect.code === 3);

      const build = await cli(['build', dir, '--json']);
      const built = await cli(['merge', await shardReports('build', ['build', dir], 3), '--json']);
      expect(built.code).toBe(build.code);
      const results = JSON.parse(build.stdout) as { verdict: string }[];
      expect(JSON.parse(built.stdout)).toMatchObject({
        command: 'build',
        rollouts: 36,
        trainable: results.filter((r) => r.verdict === 'trainable').length,
        masked: results.filter((r) => r.verdict === 'masked').length,
      });
    } finally {
      rmSync(join(dir, 'r05.tokens.state.json'));
    }
  });

  it('export: the counts of the shards added up', async () => {
    const reports = join(root, 'export-reports');
    mkdirSync(reports);
    for (let k = 0; k < 2; k++) {
      const r = await cli(['export', dir, '--shard', `${k}/2`, '--out', join(root, `part-${k}.jsonl`), '--json']);
      writeFileSync(join(reports, `export-${k}.json`), r.stdout);
    }
    const whole = JSON.parse((await cli(['export', dir, '--out', join(root, 'whole.jsonl'), '--json'])).stdout);
    const merged = await cli(['merge', join(reports, 'export-0.json'), join(reports, 'export-1.json'), '--json']);
    expect(merged.code).toBe(0);
    const m = JSON.parse(merged.stdout);
    for (const key of ['rollouts', 'trainable', 'masked', 'failed', 'exported']) expect(m[key]).toBe(whole[key]);
  });
});

describe('merge refuses what is not one whole run (exit 3)', () => {
  let reports: string;
  beforeAll(async () => {
    reports = await shardReports('refused', ['verify-digests', dir], 3);
  });
  const file = (k: number) => join(reports, `refused-${k}.json`);

  it('a missing shard', async () => {
    const r = await cli(['merge', file(0), file(2), '--json']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('tokcap: merge: shard 1 of 3 missing\n');
    expect(JSON.parse(r.stdout)).toMatchObject({ complete: false, count: 3, missing: [1] });
  });

  it('a shard given twice', async () => {
    const copy = join(root, 'copy-of-1.json');
    writeFileSync(copy, readFileSync(file(1)));
    const r = await cli(['merge', file(0), file(1), copy, file(2)]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`tokcap: merge: shard 1 of 3 given more than once (${file(1)}, ${copy})\n`);
    expect(r.stdout).toBe('');
  });

  it('a shard of another count', async () => {
    const foreign = join(root, 'foreign.json');
    writeFileSync(foreign, (await cli(['verify-digests', dir, '--shard', '1/4', '--json'])).stdout);
    const r = await cli(['merge', file(0), file(1), file(2), foreign]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`tokcap: merge: ${foreign}: a shard of 4, not of 3 (another run)\n`);
  });

  it('a report of an unsharded run', async () => {
    const plain = join(root, 'plain.json');
    writeFileSync(plain, (await cli(['verify-digests', dir, '--json'])).stdout);
    const r = await cli(['merge', file(0), file(1), file(2), plain]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${plain}: not the --json report of a sharded run`);
  });
});
