/**
 * The live view is loaded from its one-file bundle as built, whatever the files' times say (npm
 * writes new ones on install), and from the modules only where no bundle was built
 * (commands/watch/view-loader.ts). Whether a bundle still matches dist/ is a question for the build
 * and the tests, answered by content (scripts/bundle-stamp.mjs).
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadLiveView } from '../../../commands/watch/view-loader.js';
import { stampHolds, writeStamp } from '../../../scripts/bundle-stamp.mjs';
import { useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

/** A package like tokcap's with dist/commands/watch/ holding a bundle, its stamp and one input. */
function bundled(): { root: string; dir: string; url: URL; input: string; stamp: string } {
  const root = tempDir();
  const dir = join(root, 'dist', 'view');
  mkdirSync(dir, { recursive: true });
  mkdirSync(join(root, 'node_modules'));
  writeFileSync(join(root, 'node_modules', '.package-lock.json'), '{}\n');
  const input = join(dir, 'App.js');
  writeFileSync(input, 'export {};\n');
  const bundle = join(dir, 'live.bundle.js');
  writeFileSync(bundle, "export const runLive = 'from the bundle';\n");
  const stamp = join(dir, 'live.bundle.json');
  const metafile = { inputs: { 'dist/view/App.js': {} }, outputs: { 'dist/view/live.bundle.js': {} } };
  writeStamp({ root, dir, bundle, metafile, ours: join(root, 'dist'), stamp });
  return { root, dir, url: pathToFileURL(`${dir}/`), input, stamp };
}

describe('the live view from its bundle', () => {
  it('is loaded from the bundle as built, even when every file got a new time (an install)', async () => {
    const b = bundled();
    const later = new Date(Date.now() + 60_000);
    for (const f of [b.input, join(b.dir, 'live.bundle.js'), b.stamp]) utimesSync(f, later, later);
    const { view, source } = await loadLiveView(b.url);
    expect(source).toBe('bundle');
    expect(view.runLive).toBe('from the bundle');
  });

  it('is loaded from the modules where no bundle was built', async () => {
    const root = tempDir();
    const { view, source } = await loadLiveView(pathToFileURL(`${root}/`));
    expect(source).toBe('modules');
    expect(typeof view.runLive).toBe('function');
  });
});

describe("a bundle's stamp", () => {
  it('holds while its inputs have the bytes they were built from, whatever their times', () => {
    const b = bundled();
    expect(stampHolds(b.stamp)).toBe(true);
    const later = new Date(Date.now() + 60_000);
    utimesSync(b.input, later, later);
    expect(stampHolds(b.stamp)).toBe(true);
  });

  it("no longer holds when an input, the bundle or npm's record changed, or the stamp is unreadable", () => {
    const cases: Array<(b: ReturnType<typeof bundled>) => void> = [
      (b) => writeFileSync(b.input, 'export const changed = 1;\n'), // a new tsc
      (b) => writeFileSync(join(b.root, 'node_modules', '.package-lock.json'), '{"changed":1}\n'), // another npm install
      (b) => writeFileSync(join(b.dir, 'live.bundle.js'), 'export {};\n'),
      (b) => writeFileSync(b.stamp, '{"sha256":'),
      (b) => writeFileSync(b.stamp, '{}'),
      (b) => writeFileSync(b.stamp, JSON.stringify({ sha256: 'x', inputs: ['gone.js'] })),
    ];
    for (const change of cases) {
      const b = bundled();
      change(b);
      expect(stampHolds(b.stamp)).toBe(false);
    }
  });
});
