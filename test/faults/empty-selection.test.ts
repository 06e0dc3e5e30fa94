/**
 * An empty selection is not "ok" (docs/cli.md#unavailable): inspect, verify-digests, build and
 * export over no rollouts (--ids-from of no ids, comment-only standard input, a shard with nothing
 * in it) exit 3 with `tokcap: DIR: no rollouts selected` and print no document that passes a gate;
 * --allow-empty makes it an answer (exit 0).
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { shardOf } from '../../src/layout/shard.js';
import { cli, fakeIo } from '../support/cli.js';
import { DEMO_STORE, allIds, copyStore, scratch } from '../support/export.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const dir = copyStore(DEMO_STORE, 'empty-selection');
cleanup.push(join(dir, '..'));

/** A shard of the demo store with no rollout in it. */
async function emptyShard(): Promise<string> {
  const ids = await allIds(dir);
  const count = 64;
  const used = new Set(ids.map((id) => shardOf(id, count)));
  const k = [...Array(count).keys()].find((i) => !used.has(i))!;
  return `${k}/${count}`;
}

type Selection = { name: string; args: () => Promise<string[]>; stdin?: string };
const SELECTIONS: Selection[] = [
  { name: '--ids-from /dev/null', args: async () => ['--ids-from', '/dev/null'] },
  { name: 'comment-only standard input', args: async () => ['--ids-from', '-'], stdin: '#x\n\n' },
  { name: 'an empty shard', args: async () => ['--shard', await emptyShard()] },
];

const COMMANDS: { name: string; args: (out: string) => string[]; out?: boolean }[] = [
  { name: 'inspect', args: () => ['inspect', dir] },
  { name: 'verify-digests', args: () => ['verify-digests', dir] },
  { name: 'build', args: () => ['build', dir] },
  { name: 'export (jsonl)', args: (out) => ['export', dir, '--out', out], out: true },
  { name: 'export (parquet)', args: (out) => ['export', dir, '--format', 'parquet', '--out', out], out: true },
  { name: 'export (store)', args: (out) => ['export', dir, '--format', 'store', '--out', out], out: true },
  { name: 'export (tinker)', args: (out) => ['export', dir, '--format', 'tinker', '--out', out], out: true },
];

describe('an empty selection', () => {
  for (const c of COMMANDS) {
    for (const sel of SELECTIONS) {
      for (const json of [false, true]) {
        it(`${c.name}${json ? ' --json' : ''} over ${sel.name}: exit 3, no rollouts selected, nothing written`, async () => {
          const outDir = scratch('empty-out');
          cleanup.push(outDir);
          const out = join(outDir, 'x');
          const r = await cli(
            [...c.args(out), ...(await sel.args()), ...(json ? ['--json'] : [])],
            fakeIo({ stdin: sel.stdin }),
          );
          expect(r.code).toBe(3);
          expect(r.stderr.trim()).toBe(`tokcap: ${dir}: no rollouts selected`);
          expect(r.stdout).not.toMatch(/"ok":\s*true/);
          expect(r.stdout).toBe('');
          if (c.out) expect(existsSync(out)).toBe(false);
        });
      }
    }
    it(`${c.name} over an empty selection with --allow-empty: exit 0`, async () => {
      const outDir = scratch('empty-out');
      cleanup.push(outDir);
      const r = await cli([...c.args(join(outDir, 'x')), '--ids-from', '/dev/null', '--allow-empty']);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    });
  }
});
