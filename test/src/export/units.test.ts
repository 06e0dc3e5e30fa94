/** Unit tests of the export library: field selection, tinker helpers, atomic output. */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonFloat } from '../../../src/json/value.js';
import { TokcapError } from '../../../src/errors.js';
import { AtomicOutput, isTemporaryOutputName, tempPathFor } from '../../../src/export/atomic-output.js';
import { applyFieldSelection, parseFieldSelection, selectsEverything } from '../../../src/export/fields.js';
import { GroupIndexer, iterationDirName, prettyJson, rolloutGroupKey } from '../../../src/export/tinker.js';
import { scratch } from '../../support/export.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});
function dir(label: string): string {
  const d = scratch(label);
  cleanup.push(d);
  return d;
}

describe('field selection', () => {
  const record = {
    rollout_id: 'r',
    builder: 'prefix_merging',
    rebuilt_response: {
      id: 'proj-r',
      output: [
        {
          content: 'x',
          type: 'message',
          prompt_token_ids: [1, 2, 3],
          generation_token_ids: [4],
          generation_log_probs: [-0.5],
          routed_experts: [[1]],
        },
        { type: 'function_call', name: 'f' },
      ],
      usage: { input_tokens: 3, output_tokens: 1 },
    },
    metrics: { n_calls: 1 },
    mask_sample: false,
    mask_causes: [],
    status: 'frozen',
    conditions: [],
  };

  it('no selection keeps everything', () => {
    expect(selectsEverything(parseFieldSelection([]))).toBe(true);
    expect(applyFieldSelection(record, parseFieldSelection([]))).toEqual(record);
  });

  it('keeps named keys in record order, rollout_id always first, the status fields always', () => {
    const out = applyFieldSelection(record, parseFieldSelection(['mask_sample', 'metrics', 'error']));
    expect(Object.keys(out)).toEqual(['rollout_id', 'metrics', 'mask_sample', 'status', 'conditions']);
  });

  it('drops named keys', () => {
    const out = applyFieldSelection(record, parseFieldSelection(['-rebuilt_response', '-builder']));
    expect(Object.keys(out)).toEqual(['rollout_id', 'metrics', 'mask_sample', 'mask_causes', 'status', 'conditions']);
  });

  it('-tokens: counts in place of the token arrays; log probs and routed experts removed', () => {
    const out = applyFieldSelection(record, parseFieldSelection(['-tokens'])) as typeof record;
    expect(out.rebuilt_response.output).toEqual([
      { content: 'x', type: 'message', prompt_token_count: 3, generation_token_count: 1 },
      { type: 'function_call', name: 'f' },
    ]);
    expect(Object.keys(out.rebuilt_response.output[0])).toEqual([
      'content',
      'type',
      'prompt_token_count',
      'generation_token_count',
    ]);
    expect(out.rebuilt_response.usage).toEqual(record.rebuilt_response.usage);
    // the input is not changed
    expect(record.rebuilt_response.output[0].prompt_token_ids).toEqual([1, 2, 3]);
    // a failed build has no response to slim
    expect(applyFieldSelection({ rollout_id: 'r', rebuilt_response: null }, parseFieldSelection(['-tokens']))).toEqual({
      rollout_id: 'r',
      rebuilt_response: null,
    });
  });

  it.each([
    [['nope']],
    [['tokens']],
    [['-rollout_id']],
    [['-status']],
    [['-conditions']],
    [['metrics', '-metrics']],
    [['-rebuilt_response', '-tokens']],
    [['metrics', '-tokens']],
  ])('refuses %j with a usage error', (items) => {
    let err: unknown;
    try {
      parseFieldSelection(items);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TokcapError);
    expect((err as TokcapError).kind).toBe('usage');
  });

  it('rollout_id as a kept name is accepted and changes nothing', () => {
    expect(Object.keys(applyFieldSelection(record, parseFieldSelection(['rollout_id', 'metrics'])))).toEqual([
      'rollout_id',
      'metrics',
      'status',
      'conditions',
    ]);
  });
});

describe('tinker helpers', () => {
  it('groups <task>-r<repeat>[-a<attempt>] ids by task; others are groups of their own', () => {
    expect(rolloutGroupKey('t12-r3')).toBe('t12');
    expect(rolloutGroupKey('t12-r3-a1')).toBe('t12');
    expect(rolloutGroupKey('exp.v2_math-r10')).toBe('exp.v2_math');
    expect(rolloutGroupKey('demo-0')).toBe('demo-0');
    expect(rolloutGroupKey('r000')).toBe('r000');
    expect(rolloutGroupKey('t1-r')).toBe('t1-r');
    const g = new GroupIndexer();
    const got = ['t1-r0-a0', 't1-r1-a0', 't1-r1-a1', 't10-r0', 't2-r0', 'solo', 't2-r1'].map((id) => g.assign(id));
    expect(got).toEqual([
      { group_idx: 0, traj_idx: 0 },
      { group_idx: 0, traj_idx: 1 },
      { group_idx: 0, traj_idx: 2 },
      { group_idx: 1, traj_idx: 0 },
      { group_idx: 2, traj_idx: 0 },
      { group_idx: 3, traj_idx: 0 },
      { group_idx: 2, traj_idx: 1 },
    ]);
    expect(g.groupCount).toBe(4);
  });

  it('iteration directories are iteration_%06d', () => {
    expect(iterationDirName(0)).toBe('iteration_000000');
    expect(iterationDirName(123)).toBe('iteration_000123');
  });

  it("prettyJson is Python's json.dumps(indent=2, ensure_ascii=False)", async () => {
    const value = {
      a: 1,
      b: [1, 2, { c: [] }],
      d: {},
      e: 'ünï "q"',
      f: new JsonFloat(0),
      g: 0.8929,
      h: null,
      i: true,
      j: [[], {}],
      k: { l: { m: [1.5, -0.25] } },
    };
    const text = prettyJson(value);
    const py = await execa(
      'python3',
      [
        '-c',
        'import json,sys; v=json.loads(sys.stdin.read()); sys.stdout.write(json.dumps(v, indent=2, ensure_ascii=False))',
      ],
      {
        input: text,
      },
    );
    expect(text).toBe(py.stdout);
  });
});

describe('AtomicOutput', () => {
  it('temporary names are dot-files beside the target with a tokcap-tmp suffix', () => {
    const t = tempPathFor('/x/y/train.jsonl');
    expect(t).toMatch(/^\/x\/y\/\.train\.jsonl\.tokcap-tmp-[0-9a-f]{12}$/);
    expect(isTemporaryOutputName(t.split('/').pop()!)).toBe(true);
    expect(isTemporaryOutputName('train.jsonl')).toBe(false);
  });

  it('discard removes the temporary output; commit after discard is refused', async () => {
    const d = dir('atomic');
    const out = await AtomicOutput.create(join(d, 'f.jsonl'), { kind: 'file', force: false });
    expect(readdirSync(d)).toHaveLength(1);
    await out.discard();
    expect(readdirSync(d)).toEqual([]);
    await expect(out.commit()).rejects.toThrow();
    const dd = await AtomicOutput.create(join(d, 'run'), { kind: 'directory', force: false });
    writeFileSync(join(dd.tempPath, 'x'), 'x');
    dd.discardSync();
    expect(readdirSync(d)).toEqual([]);
  });

  it('a target created while the export ran is not overwritten without force', async () => {
    const d = dir('atomic-race');
    const target = join(d, 'f.jsonl');
    const out = await AtomicOutput.create(target, { kind: 'file', force: false });
    writeFileSync(out.tempPath, 'new\n');
    writeFileSync(target, 'someone else\n');
    const err = await out.commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokcapError);
    expect((err as TokcapError).kind).toBe('usage');
    expect(readFileSync(target, 'utf8')).toBe('someone else\n');
    expect(readdirSync(d)).toEqual(['f.jsonl']);
  });

  it('force replaces a file by a directory, and a directory export by a new one, leaving nothing aside', async () => {
    const d = dir('atomic-force');
    const target = join(d, 'run');
    writeFileSync(target, 'a file');
    const out = await AtomicOutput.create(target, { kind: 'directory', force: true });
    writeFileSync(join(out.tempPath, 'config.json'), '{"exporter": "tokcap"}\n');
    await out.commit();
    expect(readdirSync(target)).toEqual(['config.json']);
    const again = await AtomicOutput.create(target, {
      kind: 'directory',
      force: true,
      replaceableDirectory: async () => true,
    });
    mkdirSync(join(again.tempPath, 'iteration_000000'));
    await again.commit();
    expect(readdirSync(target)).toEqual(['iteration_000000']);
    expect(readdirSync(d)).toEqual(['run']);
    expect(existsSync(join(d, 'run', 'config.json'))).toBe(false);
  });
});
