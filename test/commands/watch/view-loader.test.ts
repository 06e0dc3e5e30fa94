/**
 * The live view is loaded from its one-file bundle only while the bundle's stamp matches every
 * input it was made from; otherwise from the modules (commands/watch/view-loader.ts).
 */
import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { currentBundle, loadLiveView } from '../../../commands/watch/view-loader.js';
import { useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

const sig = (file: string): [number, number] => {
  const s = statSync(file);
  return [s.size, s.mtimeMs];
};

/** A directory like dist/commands/watch/ with a bundle, one input beside it and one elsewhere. */
function bundled(): { dir: string; url: URL; input: string; outer: string } {
  const root = tempDir();
  const dir = join(root, 'view');
  mkdirSync(dir);
  const input = join(dir, 'App.js');
  const outer = join(root, 'package-record.json');
  writeFileSync(input, 'export {};\n');
  writeFileSync(outer, '{}\n');
  writeFileSync(join(dir, 'live.bundle.js'), "export const runLive = 'from the bundle';\n");
  const stamp = { bundle: sig(join(dir, 'live.bundle.js')), inputs: { 'App.js': sig(input), '../package-record.json': sig(outer) } };
  writeFileSync(join(dir, 'live.bundle.json'), JSON.stringify(stamp));
  return { dir, url: pathToFileURL(`${dir}/`), input, outer };
}

describe('the live view from its bundle', () => {
  it('is loaded from the bundle while every input is as when it was made', async () => {
    const b = bundled();
    expect(currentBundle(b.url)?.href).toBe(pathToFileURL(join(b.dir, 'live.bundle.js')).href);
    const { view, source } = await loadLiveView(b.url);
    expect(source).toBe('bundle');
    expect(view.runLive).toBe('from the bundle');
  });

  it('is loaded from the modules when an input, the bundle or the stamp changed or is missing', async () => {
    const later = (file: string) => utimesSync(file, new Date(), new Date(statSync(file).mtimeMs + 5000));
    const cases: Array<(b: ReturnType<typeof bundled>) => void> = [
      (b) => later(b.input), // a new tsc
      (b) => writeFileSync(b.outer, '{"changed":1}\n'), // another npm install
      (b) => later(join(b.dir, 'live.bundle.js')),
      (b) => writeFileSync(join(b.dir, 'live.bundle.json'), '{"bundle":'),
      (b) => writeFileSync(join(b.dir, 'live.bundle.json'), '{}'),
      (b) => writeFileSync(join(b.dir, 'live.bundle.json'), JSON.stringify({ bundle: sig(join(b.dir, 'live.bundle.js')), inputs: { 'gone.js': [1, 1] } })),
    ];
    for (const change of cases) {
      const b = bundled();
      change(b);
      expect(currentBundle(b.url)).toBeUndefined();
    }
    const b = bundled();
    later(b.input);
    const { view, source } = await loadLiveView(b.url);
    expect(source).toBe('modules');
    expect(typeof view.runLive).toBe('function');
  });
});
