import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { expect } from 'vitest';
import { buildRollout } from '../../src/chains/build-rollout.js';
import { maskCauses, type MaskCauseCode } from '../../src/chains/mask-causes.js';
import type { ConsumerResult } from '../../src/chains/consumer-result.js';
import { buildChains } from '../../src/chains/chain-builder.js';
import { orderedJson } from '../../src/json/canonical-json.js';
import { scanDirectory, sortedRolloutIds } from '../../src/layout/scan-directory.js';
import { readSnapshotReadOnly } from '../../src/ops/read-snapshot.js';
import { ROOT } from './cli.js';
import { readRolloutStatus } from '../../src/rollout-read/read-status.js';
import { CONDITIONS, ROLLOUT_STATUSES, type RolloutStatusAnswer } from '../../src/status/rollout-status.js';

export const DEMO_STORE = join(ROOT, 'fixtures', 'demo-store');
export const READ_TINKER = join(ROOT, 'test', 'support', 'read_tinker.py');

export function scratch(label: string): string {
  return mkdtempSync(join(tmpdir(), `tokcap-export-${label}-`));
}

/** A writable copy of a store directory (dot-files included). */
export function copyStore(src: string, label = 'store'): string {
  const dst = join(scratch(label), 'store');
  cpSync(src, dst, { recursive: true });
  return dst;
}

/** Every name in `dir` with its bytes and mtime: compared before/after to prove nothing changed. */
export function treeSnapshot(dir: string): Record<string, { bytes: string; mtimeMs: number; mode: number }> {
  const out: Record<string, { bytes: string; mtimeMs: number; mode: number }> = {};
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    out[name] = {
      bytes: st.isFile() ? readFileSync(p).toString('base64') : '<dir>',
      mtimeMs: st.mtimeMs,
      mode: st.mode,
    };
  }
  return out;
}

export function readLines(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text === '' ? [] : text.slice(0, -1).split('\n');
}

export async function allIds(dir: string): Promise<string[]> {
  return sortedRolloutIds(await scanDirectory(dir));
}

/** What the library builds for each rollout (read-only preview), in rollout-id order. */
export async function libraryBuilds(dir: string, ids?: readonly string[]): Promise<ConsumerResult[]> {
  const out: ConsumerResult[] = [];
  for (const id of ids ?? (await allIds(dir))) out.push(await buildRollout({ dir }, id, { freeze: false }));
  return out;
}

const CAUSE_CODES: readonly MaskCauseCode[] = [
  'no_records',
  'build_error',
  'capture_incomplete',
  'dangling_intents',
  'unresolved_retries',
  'unresolved_parent_calls',
  'roots_not_one',
  'chains_not_one',
  'empty_delivery',
];

/**
 * Checks one exported jsonl line against the library's build result: the line is exactly the
 * result as the library's ordered writer prints it, with `mask_causes`, `status` and `conditions`
 * added as the last keys; the causes are well-formed and agree with the result; the status is
 * the rollout-status model's (`status`, when given: `readRolloutStatus`'s answer).
 */
export function expectLineMatchesBuild(line: string, result: ConsumerResult, status?: RolloutStatusAnswer): void {
  const parsed = JSON.parse(line) as Record<string, unknown>;
  expect(Object.keys(parsed)[0]).toBe('rollout_id');
  // The build result, its mask causes, then the rollout's status fields (docs/cli.md#status).
  const tail = ['status', 'conditions', 'verdict', ...('error_kind' in parsed ? ['error_kind'] : [])];
  expect(Object.keys(parsed).slice(-tail.length - 1)).toEqual(['mask_causes', ...tail]);
  expect(ROLLOUT_STATUSES).toContain(parsed.status);
  const conditions = parsed.conditions as string[];
  expect(conditions).toEqual([...conditions].sort());
  for (const c of conditions) expect(CONDITIONS).toContain(c);
  if (status)
    expect({ status: parsed.status, conditions }).toEqual({ status: status.status, conditions: status.conditions });
  expect(parsed.verdict).toBe(result.mask_sample ? 'masked' : 'trainable');
  const causes = parsed.mask_causes as { code: string; message: string; calls?: string[] }[];
  const statusJson = JSON.stringify(Object.fromEntries(tail.map((k) => [k, parsed[k]]))).slice(1, -1);
  expect(line).toBe(`${orderedJson(result).slice(0, -1)},"mask_causes":${JSON.stringify(causes)},${statusJson}}`);
  expect(causes.length > 0).toBe(result.mask_sample);
  for (const c of causes) {
    expect(Object.keys(c).slice(0, 2)).toEqual(['code', 'message']);
    expect(CAUSE_CODES).toContain(c.code);
    expect(typeof c.message).toBe('string');
    if ('calls' in c) expect(c.calls!.every((x) => typeof x === 'string')).toBe(true);
  }
  // The causes that need no context are exactly the library's.
  const contextFree = (codes: string[]) => codes.filter((c) => c !== 'dangling_intents' && c !== 'capture_incomplete');
  expect(contextFree(causes.map((c) => c.code))).toEqual(contextFree(maskCauses(result).map((c) => c.code)));
  if ((result.metrics as Record<string, unknown>).capture_incomplete === true) {
    expect(causes.some((c) => c.code === 'dangling_intents' || c.code === 'capture_incomplete')).toBe(true);
  }
}

/** The rollout-status model's answer for each rollout, in the order given. */
export async function libraryStatuses(dir: string, ids: readonly string[]): Promise<RolloutStatusAnswer[]> {
  const out: RolloutStatusAnswer[] = [];
  for (const id of ids) out.push((await readRolloutStatus({ dir }, id)).status);
  return out;
}

/** The main chain of a rollout as (prompt length, generated length, call id), independently of export. */
export async function mainChainSteps(dir: string, id: string): Promise<[number, number, string][]> {
  const snap = await readSnapshotReadOnly({ dir }, id);
  const chains = buildChains(snap.entries);
  return (chains.mainChain?.links ?? []).map((l) => [
    l.prompt_token_ids.length,
    l.generation_token_ids.length,
    l.model_call_id,
  ]);
}

export interface TinkerRead {
  config: Record<string, unknown> & { source: Record<string, unknown> };
  metrics: Record<string, number>[];
  iterations: number[];
  rollouts: {
    rollout_id: string;
    group_idx: number;
    traj_idx: number;
    masked: number;
    steps: [number, number, string][];
  }[];
}

/** Opens a tinker export with the stdlib Python reader (test/support/read_tinker.py). */
export async function readTinker(dir: string): Promise<TinkerRead> {
  const r = await execa('python3', [READ_TINKER, dir], { reject: false });
  if (r.exitCode !== 0) throw new Error(`read_tinker.py failed (${r.exitCode}): ${r.stderr}`);
  return JSON.parse(r.stdout) as TinkerRead;
}
