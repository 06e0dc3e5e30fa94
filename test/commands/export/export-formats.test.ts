/**
 * Exports the demo store and every conformance case's store in both formats (through the CLI,
 * in-process) and checks every line and record against the library's own build results
 * (`buildRollout(..., { freeze: false })`), with the tinker directory opened by a stdlib Python
 * reader the way TrainingRunStore reads it.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { round4 } from '../../../src/json/round4.js';
import { loadCases, materializeStore } from '../../support/conformance-corpus.js';
import { cli } from '../../support/cli.js';
import {
  DEMO_STORE,
  allIds,
  copyStore,
  expectLineMatchesBuild,
  libraryBuilds,
  libraryStatuses,
  mainChainSteps,
  readLines,
  readTinker,
  scratch,
  treeSnapshot,
} from '../../support/export.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

interface StoreCase {
  name: string;
  dir: () => string;
}

const stores: StoreCase[] = [
  { name: 'demo-store', dir: () => copyStore(DEMO_STORE, 'demo') },
  ...loadCases().map((c) => ({ name: `conformance ${c.dirName}`, dir: () => materializeStore(c) })),
];

async function checkJsonl(storeDir: string): Promise<void> {
  const out = join(scratch('out'), 'export.jsonl');
  cleanup.push(storeDir);
  const before = treeSnapshot(storeDir);
  const r = await cli(['export', storeDir, '--out', out, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  // Read-only: nothing in the store changed, no lock file was created.
  expect(treeSnapshot(storeDir)).toEqual(before);

  const ids = await allIds(storeDir);
  const builds = await libraryBuilds(storeDir, ids);
  const lines = readLines(out);
  expect(lines.length).toBe(ids.length);
  const statuses = await libraryStatuses(storeDir, ids);
  lines.forEach((line, i) => expectLineMatchesBuild(line, builds[i], statuses[i]));
  expect(lines.map((l) => (JSON.parse(l) as { rollout_id: string }).rollout_id)).toEqual(ids);

  const summary = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(summary).toEqual({
    out,
    format: 'jsonl',
    rollouts: ids.length,
    trainable: builds.filter((b) => !b.mask_sample).length,
    masked: builds.filter((b) => b.mask_sample).length,
    failed: builds.filter((b) => 'error' in b).length,
    exported: ids.length,
  });
  expect(Object.keys(summary).slice(0, 6)).toEqual(['out', 'format', 'rollouts', 'trainable', 'masked', 'failed']);
  // Nothing but the target beside it.
  expect(readdirSync(join(out, '..'))).toEqual(['export.jsonl']);
}

async function checkTinker(storeDir: string): Promise<void> {
  const out = join(scratch('out'), 'run');
  cleanup.push(storeDir);
  const before = treeSnapshot(storeDir);
  const r = await cli(['export', storeDir, '--format', 'tinker', '--out', out, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(treeSnapshot(storeDir)).toEqual(before);
  expect(readdirSync(join(out, '..'))).toEqual(['run']);
  expect(readdirSync(out).sort()).toEqual(['config.json', 'iteration_000000', 'metrics.jsonl']);
  expect(readdirSync(join(out, 'iteration_000000'))).toEqual(['train_rollout_summaries.jsonl']);

  const ids = await allIds(storeDir);
  const builds = await libraryBuilds(storeDir, ids);
  const read = await readTinker(out);
  expect(read.iterations).toEqual([0]);
  expect(read.rollouts.map((x) => x.rollout_id)).toEqual(ids);
  for (let i = 0; i < ids.length; i++) {
    const rec = read.rollouts[i];
    const b = builds[i];
    expect(rec.masked).toBe(b.mask_sample ? 1 : 0);
    const expected = b.rebuilt_response === null ? [] : await mainChainSteps(storeDir, ids[i]);
    expect(rec.steps).toEqual(expected);
    if (b.rebuilt_response !== null) {
      // The steps are the main chain: their actions are the delivered generated tokens.
      expect(rec.steps.reduce((n, s) => n + s[1], 0)).toBe(b.metrics.generated_tokens_delivered);
      expect(rec.steps[0]?.[0]).toBe(b.rebuilt_response.usage.input_tokens);
    }
  }
  const captured = builds.reduce(
    (n, b) => n + ((b.metrics as { generated_tokens_captured?: number }).generated_tokens_captured ?? 0),
    0,
  );
  const delivered = builds.reduce(
    (n, b) => n + ((b.metrics as { generated_tokens_delivered?: number }).generated_tokens_delivered ?? 0),
    0,
  );
  const masked = builds.filter((b) => b.mask_sample).length;
  expect(read.metrics).toEqual([
    {
      step: 0,
      rollouts: ids.length,
      exported: ids.length,
      trainable: ids.length - masked,
      masked,
      failed_builds: builds.filter((b) => 'error' in b).length,
      masked_fraction: ids.length === 0 ? 0 : round4(masked / ids.length),
      delivered_fraction: captured === 0 ? 0 : round4(delivered / captured),
      generated_tokens_captured: captured,
      generated_tokens_delivered: delivered,
    },
  ]);
  expect(read.config).toMatchObject({
    exporter: 'tokcap',
    format: 'tinker',
    source: { capture_dir: storeDir, selection: 'all', freeze: false },
    rollouts: ids.length,
    exported: ids.length,
  });
  expect(JSON.parse(r.stdout)).toMatchObject({ out, format: 'tinker', rollouts: ids.length, masked });
}

describe('export --format jsonl: every line is the library build result plus mask_causes, status and conditions', () => {
  for (const s of stores) {
    it(s.name, async () => {
      await checkJsonl(s.dir());
    });
  }
});

describe('export --format tinker: TrainingRunStore layout, steps = main chain calls', () => {
  for (const s of stores) {
    it(s.name, async () => {
      await checkTinker(s.dir());
    });
  }
});

describe('export selection', () => {
  it('exports given ids in rollout-id order, and ids without records as failed builds', async () => {
    const dir = copyStore(DEMO_STORE, 'ids');
    cleanup.push(dir);
    const out = join(scratch('out'), 'some.jsonl');
    const r = await cli(['export', dir, 'demo-5', 'demo-1', 'demo-5', 'nope', '--out', out, '--json']);
    expect(r.code).toBe(0);
    const lines = readLines(out);
    const ids = lines.map((l) => (JSON.parse(l) as { rollout_id: string }).rollout_id);
    expect(ids).toEqual(['demo-1', 'demo-5', 'nope']);
    const builds = await libraryBuilds(dir, ids);
    lines.forEach((l, i) => expectLineMatchesBuild(l, builds[i]));
    expect(JSON.parse(lines[2])).toMatchObject({
      error: 'capture contains no token records',
      mask_sample: true,
      preview: true,
    });
    expect(existsSync(join(dir, 'nope.tokens.lock'))).toBe(false);
  });
});
