import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';

/**
 * inspect, verify-digests, build and export spread rollouts over worker threads in the built
 * binary (never when running from sources). The output must be byte-identical with the workers
 * turned off. These stores are small, so TOKCAP_WORKERS=2 asks for workers explicitly (on their
 * own, verify, build and export start one only for about 96 MB of JSONL or more).
 */
let dir: string;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'tokcap-workers-'));
  // Many tiny rollouts (TOKCAP_WORKERS=2 asks for workers: on its own, inspect starts one only
  // from 20,000 rollouts, or 96 MB with --deep), a few damaged ones.
  await generateStore({ dir }, { rollouts: 2100, calls: 2, prompt: 6, gen: 2, turn: 2, seed: 5, fast: true });
  appendFileSync(join(dir, 'r0007.tokens.jsonl'), '{"torn');
  appendFileSync(join(dir, 'r1500.tokens.jsonl'), '{"model_call_id":"x"}\n');
  appendFileSync(join(dir, 'r2099.tokens.intents'), 'lost-call\n');
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('worker threads change nothing in the output', () => {
  for (const args of [
    ['inspect', '--json'],
    ['inspect', '--deep', '--json'],
    ['verify-digests', '--json'],
  ]) {
    it(
      args.join(' '),
      async () => {
        const withWorkers = await tokcap([args[0], dir, ...args.slice(1)], { env: { TOKCAP_WORKERS: '2' } });
        const without = await tokcap([args[0], dir, ...args.slice(1)], { env: { TOKCAP_WORKERS: '1' } });
        expect(withWorkers.exitCode).toBe(without.exitCode);
        expect(String(withWorkers.stdout)).toContain('r0007');
        expect(String(withWorkers.stdout)).toBe(String(without.stdout));
        expect(String(withWorkers.stderr)).toBe(String(without.stderr));
      },
      120_000,
    );
  }
});

describe('build on worker threads writes what one thread writes', () => {
  // A smaller store with every shape (--mix): masked, retired, torn, incomplete rollouts.
  let mixDir: string;
  beforeAll(async () => {
    mixDir = mkdtempSync(join(tmpdir(), 'tokcap-workers-build-'));
    await generateStore({ dir: mixDir }, { rollouts: 60, calls: 4, prompt: 20, gen: 5, turn: 6, seed: 9, mix: true });
    appendFileSync(join(mixDir, 'r0003.tokens.jsonl'), '{"model_call_id":"x"}\n');
  });
  afterAll(() => rmSync(mixDir, { recursive: true, force: true }));

  for (const args of [['--json'], [], ['--fail-on-mask']]) {
    it(`build ${args.join(' ') || '(human output)'}`, async () => {
      const withWorkers = await tokcap(['build', mixDir, ...args], { env: { TOKCAP_WORKERS: '2' } });
      const without = await tokcap(['build', mixDir, ...args], { env: { TOKCAP_WORKERS: '1' } });
      expect(withWorkers.exitCode).toBe(without.exitCode);
      expect(String(withWorkers.stdout)).toContain('r0003');
      expect(String(withWorkers.stdout)).toBe(String(without.stdout));
      expect(String(withWorkers.stderr)).toBe(String(without.stderr));
    });
  }

  it('build --all --freeze --json: the same results (snapshot ids aside) and the same states on disk', async () => {
    const copyA = mkdtempSync(join(tmpdir(), 'tokcap-workers-freeze-a-'));
    const copyB = mkdtempSync(join(tmpdir(), 'tokcap-workers-freeze-b-'));
    try {
      cpSync(mixDir, copyA, { recursive: true });
      cpSync(mixDir, copyB, { recursive: true });
      const withWorkers = await tokcap(['build', copyA, '--all', '--freeze', '--json'], {
        env: { TOKCAP_WORKERS: '2' },
      });
      const without = await tokcap(['build', copyB, '--all', '--freeze', '--json'], { env: { TOKCAP_WORKERS: '1' } });
      expect(withWorkers.exitCode).toBe(without.exitCode);
      const sid = /"snapshot_id":"[0-9a-f]{32}"/g;
      expect(String(withWorkers.stdout).replace(sid, 'SID')).toBe(String(without.stdout).replace(sid, 'SID'));
      expect(String(withWorkers.stdout)).toMatch(sid);
      expect(String(withWorkers.stderr)).toBe(String(without.stderr));
      for (const name of readdirSync(copyA).filter((n) => n.endsWith('.state.json'))) {
        const a = readFileSync(join(copyA, name), 'utf8').replace(sid, 'SID');
        const b = readFileSync(join(copyB, name), 'utf8').replace(sid, 'SID');
        expect(a, name).toBe(b);
      }
    } finally {
      rmSync(copyA, { recursive: true, force: true });
      rmSync(copyB, { recursive: true, force: true });
    }
  });
});

describe('export on worker threads writes what one thread writes', () => {
  let mixDir: string;
  let outDir: string;
  beforeAll(async () => {
    mixDir = mkdtempSync(join(tmpdir(), 'tokcap-workers-export-'));
    outDir = mkdtempSync(join(tmpdir(), 'tokcap-workers-export-out-'));
    await generateStore({ dir: mixDir }, { rollouts: 40, calls: 3, prompt: 12, gen: 4, turn: 5, seed: 11, mix: true });
  });
  afterAll(() => {
    rmSync(mixDir, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  });

  for (const args of [
    ['--format', 'jsonl'],
    ['--format', 'jsonl', '--trainable-only', '--fields', 'rollout_id,mask_sample,mask_causes'],
    ['--format', 'tinker', '--trainable-only'],
  ]) {
    it(`export ${args.join(' ')}`, async () => {
      const a = join(outDir, `a-${args.join('_')}`);
      const b = join(outDir, `b-${args.join('_')}`);
      const withWorkers = await tokcap(['export', mixDir, ...args, '--out', a], { env: { TOKCAP_WORKERS: '2' } });
      const without = await tokcap(['export', mixDir, ...args, '--out', b], { env: { TOKCAP_WORKERS: '1' } });
      expect(withWorkers.exitCode).toBe(without.exitCode);
      expect(String(withWorkers.stderr)).toBe(String(without.stderr));
      const read = (p: string) =>
        args[1] === 'tinker'
          ? readdirSync(p, { recursive: true })
              .map(String)
              .sort()
              .map((f) =>
                f.endsWith('.json') || f.endsWith('.jsonl')
                  ? `${f}\n${readFileSync(join(p, f), 'utf8').replace(/"created_at": "[^"]*"/, '')}`
                  : f,
              )
              .join('\n')
          : readFileSync(p, 'utf8');
      expect(read(a)).toBe(read(b));
      expect(read(a)).toContain('"r00"');
    });
  }
});

/**
 * A small generated store in a temp directory for the enclosing describe block (created before
 * its tests, `damage` applied, removed after them); call the returned function for its path.
 */
function useSmallStore(prefix: string, rollouts: number, seed: number, damage?: (dir: string) => void): () => string {
  let dir = '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    await generateStore({ dir }, { rollouts, calls: 2, prompt: 6, gen: 2, turn: 2, seed });
    damage?.(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}

describe('a result that cannot be written as JSON costs only its own rollout', () => {
  const store = useSmallStore('tokcap-workers-huge-', 12, 13, (hugeDir) => {
    // A root record whose prompt holds a token id past 2^64: no digest check rejects it (the
    // digest is absent), the builder keeps it, and no JSON writer can print it.
    const j = join(hugeDir, 'r05.tokens.jsonl');
    const first = readFileSync(j, 'utf8').split('\n')[0];
    const rec = JSON.parse(first) as Record<string, unknown>;
    const line = JSON.stringify({ ...rec, digest: null }).replace(
      '"prompt_token_ids":[',
      '"prompt_token_ids":[36893488147419103232,',
    );
    writeFileSync(j, `${line}\n`);
    rmSync(join(hugeDir, 'r05.tokens.state.json'), { force: true });
  });

  for (const workers of ['2', '1']) {
    it(`build --json (TOKCAP_WORKERS ${workers}): exit 3, one stderr line, every rollout in the document`, async () => {
      const res = await tokcap(['build', store(), '--json'], { env: { TOKCAP_WORKERS: workers } });
      expect(res.exitCode).toBe(3);
      const doc = JSON.parse(String(res.stdout)) as { rollout_id: string; error?: string }[];
      expect(doc.map((r) => r.rollout_id)).toEqual(
        Array.from({ length: 12 }, (_, i) => `r${String(i).padStart(2, '0')}`),
      );
      // The reference parses an integer past 2^64 as a float (orjson) and pydantic converts a
      // float to an int only inside i64: the record is rejected, as it is here.
      expect(doc[5].error).toMatch(/^ValidationError: /);
      expect(doc.filter((r) => r.error !== undefined)).toHaveLength(1);
      expect(String(res.stderr).trim().split('\n')).toHaveLength(1);
    });
  }
});

describe('workers start only when asked for or when the job is large', () => {
  const small = useSmallStore('tokcap-workers-small-', 20, 17);

  const workersOf = async (args: string[], env: Record<string, string>) =>
    String((await tokcap(args, { env: { TOKCAP_DEBUG: '1', ...env } })).stderr).match(/debug: (\d+) worker/)?.[1];

  for (const command of ['verify-digests', 'build']) {
    it(`${command}: none for a small store, one with TOKCAP_WORKERS=2, none with TOKCAP_WORKERS=1`, async () => {
      const args = [command, small(), '--json'];
      expect(await workersOf(args, {})).toBe('0');
      expect(await workersOf(args, { TOKCAP_WORKERS: '2' })).toBe('1');
      expect(await workersOf(args, { TOKCAP_WORKERS: '1' })).toBe('0');
    });
  }

  for (const deep of [[], ['--deep']]) {
    it(`${['inspect', ...deep].join(' ')}: none for 2,100 tiny rollouts, one with TOKCAP_WORKERS=2, none with TOKCAP_WORKERS=1`, async () => {
      const args = ['inspect', dir, ...deep, '--json'];
      expect(await workersOf(args, {})).toBe('0');
      expect(await workersOf(args, { TOKCAP_WORKERS: '2' })).toBe('1');
      expect(await workersOf(args, { TOKCAP_WORKERS: '1' })).toBe('0');
    });
  }
});
