/**
 * export never writes into the store it reads (docs/cli.md#export-formats): an --out that
 * resolves into DIR (symbolic links of its existing part resolved) is a usage error in every
 * format, with or without --force, and nothing in DIR changes.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../support/cli.js';
import { DEMO_STORE, copyStore, scratch, treeSnapshot } from '../support/export.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function demo(label: string): string {
  const dir = copyStore(DEMO_STORE, label);
  cleanup.push(join(dir, '..'));
  return dir;
}

type Target = (dir: string) => string;

const TARGETS: Record<string, [format: string, target: Target][]> = {
  jsonl: [
    ['jsonl', (d) => join(d, 'demo-0.tokens.jsonl')],
    ['jsonl', (d) => join(d, 'demo-0.tokens.state.json')],
    ['jsonl', (d) => join(d, 'train.tokens.jsonl')],
    ['jsonl', (d) => join(d, 'export.jsonl')],
  ],
  tinker: [['tinker', (d) => join(d, 'run')]],
  parquet: [
    ['parquet', (d) => d],
    ['parquet', (d) => join(d, 'dataset')],
  ],
  store: [['store', (d) => join(d, 'copy')]],
};

describe('export --out inside the capture directory', () => {
  for (const [name, cases] of Object.entries(TARGETS)) {
    for (const [format, target] of cases) {
      for (const force of [false, true]) {
        it(`${name}: --out ${target('DIR')}${force ? ' --force' : ''} is refused (exit 2), DIR unchanged`, async () => {
          const dir = demo(`in-${format}`);
          const before = treeSnapshot(dir);
          const out = target(dir);
          const r = await cli(['export', dir, '--format', format, '--out', out, ...(force ? ['--force'] : [])]);
          expect(r.code).toBe(2);
          expect(r.stderr).toMatch(/capture directory/);
          expect(r.stderr.trim().split('\n')).toHaveLength(1);
          expect(treeSnapshot(dir)).toEqual(before);
        });
      }
    }
  }

  it('a path through a symbolic link into DIR is refused, in a sub-directory too', async () => {
    const dir = demo('in-link');
    mkdirSync(join(dir, 'sub'));
    const before = treeSnapshot(dir);
    const links = scratch('links');
    cleanup.push(links);
    symlinkSync(dir, join(links, 'to-store'));
    for (const [format, out] of [
      ['jsonl', join(links, 'to-store', 'x.tokens.jsonl')],
      ['jsonl', join(links, 'to-store', 'sub', 'x.jsonl')],
      ['jsonl', join(links, 'to-store', 'sub', 'nosuch', 'x.jsonl')],
      ['parquet', join(links, 'to-store', 'sub')],
      ['tinker', join(links, 'to-store', 'sub', 'run')],
      ['store', join(links, 'to-store', 'sub', 'copy')],
    ]) {
      const r = await cli(['export', dir, '--format', format, '--out', out, '--force']);
      expect({ format, out, code: r.code }).toEqual({ format, out, code: 2 });
      expect(r.stderr).toMatch(/inside the capture directory/);
    }
    expect(treeSnapshot(dir)).toEqual(before);
  });

  it('--freeze is refused before anything is frozen', async () => {
    const dir = demo('in-freeze');
    const before = treeSnapshot(dir);
    const r = await cli(['export', dir, '--all', '--freeze', '--out', join(dir, 'x.jsonl')]);
    expect(r.code).toBe(2);
    expect(treeSnapshot(dir)).toEqual(before);
  });

  it('a target beside DIR, not in it, is still written', async () => {
    const dir = demo('beside');
    const out = join(dir, '..', 'store.jsonl');
    const r = await cli(['export', dir, '--out', out]);
    expect(r.code).toBe(0);
  });
});
