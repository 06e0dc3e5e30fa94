/**
 * The tinker export's records are the cookbook writer's own record. A stdlib Python
 * reader (read_cookbook_records.py) holds every record to the writer's keys, order and types,
 * and then uses them as a dashboard does (averages the trajectory metrics, sums rewards, counts
 * statuses); what it read is compared with the library's own builds.
 */
import { readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, ROOT } from '../../support/cli.js';
import { compareNatural } from '../../../src/layout/natural-order.js';
import { DEMO_STORE, copyStore, libraryBuilds, mainChainSteps, readTinker, scratch } from '../../support/export.js';

const READER = join(ROOT, 'test', 'support', 'read_cookbook_records.py');

interface CookbookRead {
  config: { model_name: string; training_type: string };
  metric_keys: string[];
  records: number;
  reward_sum: number;
  metric_means: Record<string, number>;
  statuses: Record<string, number>;
  error_types: Record<string, number>;
  groups: string[][];
  trajectories: {
    rollout_id: string;
    status: string;
    error_type: string | null;
    error_message: string | null;
    steps: [number, number][];
    call_ids: string[];
  }[];
}

async function readCookbook(dir: string): Promise<CookbookRead> {
  const r = await execa('python3', [READER, dir], { reject: false });
  if (r.exitCode !== 0) throw new Error(`read_cookbook_records.py failed (${r.exitCode}): ${r.stderr}`);
  return JSON.parse(r.stdout) as CookbookRead;
}

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** The demo store with NeMo Gym style ids: repeats of tasks, numbered past 9. */
const RENAMES: Record<string, string> = {
  'demo-0': 't1-r2',
  'demo-1': 't1-r10',
  'demo-2': 't10-r3',
  'demo-3': 't2-r0-a1',
  'demo-4': 't2-r0-a0',
  'demo-5': 'solo',
  'demo-6': 't1-r1',
  'demo-7': 't1-r10-a2',
};

function groupedStore(label: string): string {
  const dir = copyStore(DEMO_STORE, label);
  cleanup.push(dir);
  for (const name of readdirSync(dir)) {
    const id = name.slice(0, name.indexOf('.tokens'));
    if (RENAMES[id]) renameSync(join(dir, name), join(dir, RENAMES[id] + name.slice(id.length)));
  }
  return dir;
}

describe('export --format tinker: the cookbook writer’s record', () => {
  it('every record has the writer’s keys, order and types; statuses, errors and groups as built', async () => {
    const dir = groupedStore('cookbook');
    // One more rollout whose build fails on a corrupt line, and an id with no records.
    const corruptFrom = join(dir, 't2-r0-a1.tokens.jsonl');
    const corrupt = join(dir, 't2-r7.tokens.jsonl');
    // Not the last line, so not a torn tail: the build fails.
    writeFileSync(corrupt, `{"not json\n${readFileSync(corruptFrom, 'utf8')}`);
    rmSync(corruptFrom);
    const ids = [...Object.values(RENAMES).filter((id) => id !== 't2-r0-a1'), 't2-r7', 'nothing-here-r0'];
    const out = join(scratch('out'), 'run');
    cleanup.push(join(out, '..'));
    const r = await cli(['export', dir, ...ids, '--format', 'tinker', '--model', 'Qwen/Qwen3-8B', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);

    const read = await readCookbook(out);
    expect(read.config).toEqual({ model_name: 'Qwen/Qwen3-8B', training_type: 'rl' });
    expect(read.metric_keys[0]).toBe('step');
    expect(read.metric_keys.slice(1).every((k) => k.startsWith('tokcap/'))).toBe(true);
    expect(read.metric_keys).toContain('tokcap/masked_fraction');
    expect(read.records).toBe(ids.length);
    expect(read.reward_sum).toBe(0);
    // The averaged metrics are all numbers, among them the verdicts as 0/1.
    expect(Object.keys(read.metric_means)).toEqual(expect.arrayContaining(['masked', 'build_failed', 'n_calls']));

    // Natural order: t1-r2 before t1-r10, the task's repeats one group, in repeat order.
    const natural = [...ids].sort(compareNatural);
    expect(read.trajectories.map((t) => t.rollout_id)).toEqual(natural);
    expect(read.groups).toEqual([
      ['nothing-here-r0'],
      ['solo'],
      ['t1-r1', 't1-r2', 't1-r10', 't1-r10-a2'],
      ['t2-r0-a0', 't2-r7'],
      ['t10-r3'],
    ]);

    const builds = await libraryBuilds(dir, natural);
    const errorTypes: Record<string, number> = {};
    for (const [i, t] of read.trajectories.entries()) {
      const b = builds[i];
      expect(t.rollout_id).toBe(b.rollout_id);
      if ('error' in b) {
        expect(t.status).toBe('error');
        expect(t.steps).toEqual([]);
        // error_type and error_message together are the reference's error string.
        expect(b.error === t.error_message || b.error === `${t.error_type}: ${t.error_message}`).toBe(true);
        errorTypes[t.error_type!] = (errorTypes[t.error_type!] ?? 0) + 1;
      } else {
        expect(t.status).toBe('ok');
        expect(t.error_type).toBeNull();
        const chain = await mainChainSteps(dir, t.rollout_id);
        expect(t.steps).toEqual(chain.map(([ob, ac]) => [ob, ac]));
        expect(t.call_ids).toEqual(chain.map((s) => s[2]));
      }
    }
    // The retired rollout, the corrupt line and the id without records.
    expect(errorTypes).toEqual({ RuntimeError: 1, JSONDecodeError: 1, no_records: 1 });
    expect(read.error_types).toEqual(errorTypes);
    expect(read.statuses).toEqual({ ok: ids.length - 3, error: 3 });

    // The TrainingRunStore-style reader still opens it.
    const run = await readTinker(out);
    expect(run.rollouts.map((x) => x.rollout_id)).toEqual(natural);
  });

  it('the reader rejects a record that breaks one of the writer’s facts', async () => {
    const out = join(scratch('old'), 'run');
    cleanup.push(join(out, '..'));
    const dir = groupedStore('old');
    expect((await cli(['export', dir, '--format', 'tinker', '--out', out])).code).toBe(0);
    const path = join(out, 'iteration_000000', 'train_rollout_summaries.jsonl');
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    const bad = (edit: (rec: Record<string, unknown>) => Record<string, unknown>) =>
      writeFileSync(
        path,
        [JSON.stringify(edit(JSON.parse(lines[0]) as Record<string, unknown>)), ...lines.slice(1)].join('\n') + '\n',
      );
    const cases: [string, (rec: Record<string, unknown>) => Record<string, unknown>][] = [
      [
        'a string metric',
        (rec) => ({ ...rec, trajectory_metrics: { ...(rec.trajectory_metrics as object), rollout_id: 'x' } }),
      ],
      ['keys out of order', ({ split, schema_version, ...rest }) => ({ split, schema_version, ...rest })],
      ['an int reward', (rec) => ({ ...rec, total_reward: 0 })],
      ['a missing key', ({ tags: _tags, ...rest }) => rest],
    ];
    for (const [what, edit] of cases) {
      bad(edit);
      const r = await execa('python3', [READER, out], { reject: false });
      expect(r.exitCode, what).toBe(1);
    }
  });
});

describe('natural order of ids', () => {
  it('numbers compare as numbers, the rest by code point, ties by code point', () => {
    const ids = [
      't1-r10',
      't1-r2',
      't10-r0',
      't1-r02',
      't1-r1-a3',
      't1-r1',
      't2',
      'T1',
      't1-r99999999999999999999',
      't1-r100000000000000000000',
    ];
    expect([...ids].sort(compareNatural)).toEqual([
      'T1',
      't1-r1',
      't1-r1-a3',
      't1-r02',
      't1-r2',
      't1-r10',
      't1-r99999999999999999999',
      't1-r100000000000000000000',
      't2',
      't10-r0',
    ]);
    expect(compareNatural('a', 'a')).toBe(0);
  });
});
