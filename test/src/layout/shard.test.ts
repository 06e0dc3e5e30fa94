import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { assertValidShard, filterShard, partName, shardOf } from '../../../src/layout/shard.js';
import { shardListing } from '../../../src/layout/scan-directory.js';
import type { DirectoryListing } from '../../../src/layout/scan-directory.js';
import { parseShardOption, resolveShard } from '../../../commands/cli/shard.js';
import { TokcapError } from '../../../src/errors.js';

/** Shards as Python computes them from the definition of docs/cli.md#shards, independently of our code. */
function pythonShards(ids: readonly string[], counts: readonly number[]): number[][] {
  const script = [
    'import hashlib, json, sys',
    'ids, counts = json.load(sys.stdin)',
    'print(json.dumps([[int.from_bytes(hashlib.sha256(i.encode("utf-8")).digest()[:8], "big") % n for i in ids] for n in counts]))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', script], { input: JSON.stringify([ids, counts]) }).toString());
}

const IDS = [
  ...Array.from({ length: 300 }, (_, i) => `r-${String(i).padStart(5, '0')}`),
  'a',
  'A',
  'x.y_z-9',
  '0',
  // A name that is not a valid id (an invalid name is sharded by its own text): UTF-8 matters.
  'bad id ü.tokens.jsonl',
];

describe('shardOf', () => {
  it('is the function of docs/cli.md#shards: first 8 bytes of SHA-256, big-endian, mod N (checked against Python)', () => {
    // 99,999 and 65,537 exercise remainders whose quotient is far past 2^53: a double would drift.
    const counts = [1, 2, 3, 4, 7, 16, 1000, 65_537, 99_999];
    const expected = pythonShards(IDS, counts);
    counts.forEach((n, j) => {
      expect(IDS.map((id) => shardOf(id, n))).toEqual(expected[j]);
    });
  });

  it('partitions: every id in exactly one shard, each shard non-empty on 300 ids for N = 4', () => {
    const shards = [0, 1, 2, 3].map((index) => filterShard(IDS, { index, count: 4 }));
    expect(shards.flat().sort()).toEqual([...IDS].sort());
    for (const s of shards) expect(s.length).toBeGreaterThan(40);
  });

  it('splits a listing by rollout id, and names of no rollout by the name itself', () => {
    const files = new Set(['jsonl' as const]);
    const listing: DirectoryListing = {
      rollouts: new Map(IDS.slice(0, 300).map((id) => [id, files])),
      invalidNames: ['bad id ü.tokens.jsonl', 'x y.tokens.state.json'],
      tempStateFiles: ['.tokens-state-abcdefgh'],
      lockOnly: ['lonely'],
    };
    const parts = [0, 1, 2].map((index) => shardListing(listing, { index, count: 3 }));
    expect(parts.flatMap((p) => [...p.rollouts.keys()]).sort()).toEqual([...listing.rollouts.keys()].sort());
    expect(parts.flatMap((p) => p.invalidNames).sort()).toEqual(listing.invalidNames);
    expect(parts.flatMap((p) => p.tempStateFiles)).toEqual(listing.tempStateFiles);
    expect(parts.flatMap((p) => p.lockOnly)).toEqual(listing.lockOnly);
    expect(shardListing(listing, { index: 0, count: 1 })).toBe(listing);
  });

  it('names part files with five digits', () => {
    expect(partName(undefined)).toBe('part-00000-of-00001');
    expect(partName({ index: 3, count: 16 })).toBe('part-00003-of-00016');
    expect(() => assertValidShard({ index: 4, count: 4 })).toThrow(TokcapError);
  });
});

describe('--shard values', () => {
  it('parses K/N and auto, and refuses everything else as usage', () => {
    expect(parseShardOption('3/16')).toEqual({ index: 3, count: 16 });
    expect(parseShardOption('0/1')).toEqual({ index: 0, count: 1 });
    expect(parseShardOption('auto')).toBe('auto');
    for (const bad of ['4/4', '1/0', '-1/3', '1/3x', '01/3', '1 /3', '3', '', '0/100000', 'AUTO']) {
      expect(() => parseShardOption(bad), bad).toThrow(expect.objectContaining({ kind: 'usage' }));
    }
  });

  it('auto: a Slurm array (task id minus the array minimum) or a Kubernetes Indexed Job', () => {
    expect(
      resolveShard('auto', {
        SLURM_ARRAY_TASK_ID: '7',
        SLURM_ARRAY_TASK_MIN: '4',
        SLURM_ARRAY_TASK_COUNT: '4',
        SLURM_ARRAY_TASK_MAX: '7',
      }),
    ).toEqual({ index: 3, count: 4 });
    expect(resolveShard('auto', { JOB_COMPLETION_INDEX: '2', TOKCAP_SHARDS: '3' })).toEqual({ index: 2, count: 3 });
    // Slurm wins when both are set (a Kubernetes pod is never inside a Slurm array).
    expect(
      resolveShard('auto', {
        SLURM_ARRAY_TASK_ID: '0',
        SLURM_ARRAY_TASK_MIN: '0',
        SLURM_ARRAY_TASK_COUNT: '2',
        JOB_COMPLETION_INDEX: '5',
        TOKCAP_SHARDS: '9',
      }),
    ).toEqual({ index: 0, count: 2 });
    expect(resolveShard({ index: 1, count: 2 }, {})).toEqual({ index: 1, count: 2 });
    expect(resolveShard(undefined, { JOB_COMPLETION_INDEX: '1', TOKCAP_SHARDS: '2' })).toBeUndefined();
  });

  it('auto: usage errors that name the variables', () => {
    const message = (env: NodeJS.ProcessEnv) => {
      try {
        resolveShard('auto', env);
      } catch (e) {
        expect(e).toMatchObject({ kind: 'usage' });
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(message({})).toMatch(
      /SLURM_ARRAY_TASK_ID.*SLURM_ARRAY_TASK_MIN.*SLURM_ARRAY_TASK_COUNT.*JOB_COMPLETION_INDEX.*TOKCAP_SHARDS/,
    );
    expect(message({ JOB_COMPLETION_INDEX: '1' })).toMatch(/TOKCAP_SHARDS/);
    expect(message({ JOB_COMPLETION_INDEX: '3', TOKCAP_SHARDS: '3' })).toMatch(/K must be less than N/);
    expect(
      message({
        SLURM_ARRAY_TASK_ID: '2',
        SLURM_ARRAY_TASK_MIN: '0',
        SLURM_ARRAY_TASK_COUNT: '3',
        SLURM_ARRAY_TASK_MAX: '4',
      }),
    ).toMatch(/without a step/);
    expect(message({ SLURM_ARRAY_TASK_ID: 'x', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_COUNT: '3' })).toMatch(
      /SLURM_ARRAY_TASK_ID must be/,
    );
  });
});
