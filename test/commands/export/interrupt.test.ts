/**
 * The real binary (bin/tokcap.js), interrupted half-way through a large export: nothing ever
 * appears at the target. Half-way is made certain, not raced: a python3 process holds the lock of
 * the 40th rollout with a capture file, so each export writes the rollouts before it and waits
 * there until it is killed. SIGTERM and SIGINT also remove the temporary output; SIGKILL cannot be
 * caught, so it may leave the temporary output, which is named so that nothing reads it as an
 * export (a dot-file with a `.tokcap-tmp-<hex>` suffix; a tinker directory without config.json).
 *
 * Also checks that memory is bounded by the largest rollout, not by the directory: the live heap
 * stays flat across the export (peak RSS against the store's size: bench/export-rss.ts).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { isTemporaryOutputName } from '../../../src/export/atomic-output.js';
import { BIN, cleanEnv, ensureBuilt } from '../../support/cli.js';
import { scratch } from '../../support/export.js';
import { holdLock, type SpawnRun } from '../../support/reliability.js';

const HEAP_PROBE = fileURLToPath(new URL('../../support/heap-probe.mjs', import.meta.url));

let root: string;
let store: string;
let holder: SpawnRun | undefined;

beforeAll(async () => {
  await ensureBuilt();
  root = scratch('interrupt');
  store = join(root, 'store');
  // 300 rollouts x 6 calls, prompts growing from 1000 tokens: a ~25 MiB jsonl export.
  await generateStore({ dir: store }, { rollouts: 300, calls: 6, mix: true, seed: 3 });
}, 180_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/**
 * Holds the lock of the store's 40th rollout with a capture file until the test ends: an export
 * started meanwhile writes the rollouts before it (a few MiB: past the first flush of the output)
 * and waits there.
 */
async function holdFortieth(): Promise<void> {
  const ids = readdirSync(store)
    .filter((n) => n.endsWith('.tokens.jsonl'))
    .sort()
    .map((n) => n.slice(0, -'.tokens.jsonl'.length));
  holder = await holdLock(store, ids[39], 'ex', 600);
}

afterEach(async () => {
  holder?.child.kill('SIGKILL');
  await holder?.done;
  holder = undefined;
});

/** An export that stops at the held rollout (it would wait ten minutes for it). */
function spawnHeldExport(args: string[]) {
  return spawnExport([...args, '--lock-wait', '600s']);
}

function spawnExport(args: string[]) {
  return execa('node', [BIN, 'export', store, ...args], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
}

function temporaries(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.includes('.tokcap-tmp-'));
}

/** Polls `dir` until `ready(name)` holds for a temporary output (the export waits at the held rollout), or the child ends. */
async function waitForTemporary(
  dir: string,
  child: { exitCode: number | null | undefined },
  ready: (path: string) => boolean,
): Promise<string> {
  for (;;) {
    const t = temporaries(dir).find((n) => ready(join(dir, n)));
    if (t !== undefined) return join(dir, t);
    if (child.exitCode !== null && child.exitCode !== undefined)
      throw new Error('export finished before it could be interrupted');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('an interrupted export leaves nothing at the target', () => {
  it('jsonl, SIGKILL half-way: no target; at most the dot-named temporary file', async () => {
    const o = join(root, 'kill-jsonl');
    mkdirSync(o);
    const out = join(o, 'train.jsonl');
    await holdFortieth();
    const child = spawnHeldExport(['--out', out]);
    const temp = await waitForTemporary(o, child, (p) => statSync(p).size > 0);
    child.kill('SIGKILL');
    const r = await child;
    expect(r.signal).toBe('SIGKILL');
    expect(existsSync(out)).toBe(false);
    const left = readdirSync(o);
    expect(left.length).toBeLessThanOrEqual(1);
    for (const name of left) {
      expect(join(o, name)).toBe(temp);
      expect(isTemporaryOutputName(name)).toBe(true);
      expect(name).toMatch(/^\.train\.jsonl\.tokcap-tmp-[0-9a-f]{12}$/);
      expect(name.endsWith('.jsonl')).toBe(false);
    }
  });

  it('jsonl, SIGTERM half-way: no target and no temporary file; dies of the signal', async () => {
    const o = join(root, 'term-jsonl');
    mkdirSync(o);
    const out = join(o, 'train.jsonl');
    await holdFortieth();
    const child = spawnHeldExport(['--out', out]);
    await waitForTemporary(o, child, (p) => statSync(p).size > 0);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.signal).toBe('SIGTERM');
    expect(readdirSync(o)).toEqual([]);
  });

  it('tinker, SIGINT half-way: no target directory and no temporary directory', async () => {
    const o = join(root, 'int-tinker');
    mkdirSync(o);
    const out = join(o, 'run');
    await holdFortieth();
    const child = spawnHeldExport(['--format', 'tinker', '--out', out]);
    await waitForTemporary(o, child, (p) => existsSync(join(p, 'iteration_000000', 'train_rollout_summaries.jsonl')));
    child.kill('SIGINT');
    const r = await child;
    expect(r.signal).toBe('SIGINT');
    expect(readdirSync(o)).toEqual([]);
  });

  it('tinker, SIGKILL half-way: no target; a leftover temporary directory has no config.json (no run)', async () => {
    const o = join(root, 'kill-tinker');
    mkdirSync(o);
    const out = join(o, 'run');
    await holdFortieth();
    const child = spawnHeldExport(['--format', 'tinker', '--out', out]);
    await waitForTemporary(o, child, (p) => existsSync(join(p, 'iteration_000000', 'train_rollout_summaries.jsonl')));
    child.kill('SIGKILL');
    const r = await child;
    expect(r.signal).toBe('SIGKILL');
    expect(existsSync(out)).toBe(false);
    for (const name of readdirSync(o)) {
      expect(isTemporaryOutputName(name)).toBe(true);
      expect(existsSync(join(o, name, 'config.json'))).toBe(false);
    }
  });

  it('--force, SIGKILL half-way: the previous export is still in place, untouched', async () => {
    const o = join(root, 'kill-force');
    mkdirSync(o);
    const out = join(o, 'train.jsonl');
    const first = await spawnExport(['--out', out, '--fields', '-tokens']);
    expect(first.exitCode).toBe(0);
    const before = statSync(out);
    await holdFortieth();
    const child = spawnHeldExport(['--out', out, '--force']);
    await waitForTemporary(o, child, (p) => statSync(p).size > 0);
    child.kill('SIGKILL');
    await child;
    const after = statSync(out);
    expect(after.ino).toBe(before.ino);
    expect(after.size).toBe(before.size);
    expect(after.mtimeMs).toBe(before.mtimeMs);
  });

  it('an uninterrupted export of the same store completes, every rollout in it', async () => {
    const o = join(root, 'complete');
    mkdirSync(o);
    const r = await spawnExport(['--out', join(o, 'train.jsonl'), '--json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rollouts: 300, exported: 300 });
    expect(readdirSync(o)).toEqual(['train.jsonl']);
    expect(statSync(join(o, 'train.jsonl')).size).toBeGreaterThan(8 << 20);
  });
});

describe('memory is bounded by the largest rollout, not the directory', () => {
  it('the live heap stays flat across the export (sampled after full collections)', async () => {
    for (const format of ['jsonl', 'tinker']) {
      const out = join(root, `heap.${format}`);
      const r = await execa('node', ['--expose-gc', HEAP_PROBE, store, out, format], {
        reject: false,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const { samples, rollouts } = JSON.parse(r.stdout) as { samples: [number, number][]; rollouts: number };
      expect(rollouts).toBe(300);
      const mib = samples.map(([, b]) => b / 1024 / 1024);
      console.log(`${format}: live heap (MiB) across 300 rollouts: ${mib.map((m) => m.toFixed(1)).join(' ')}`);
      // Keeping every rollout would add ~100 MiB of parsed token arrays; allow a few MiB of noise.
      expect(Math.max(...mib) - mib[0]).toBeLessThan(8);
    }
  });
});
