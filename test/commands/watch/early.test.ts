/**
 * `tokcap watch DIR` starts its read worker and the listing of DIR before the command line is
 * parsed (commands/watch/early.ts), only when DIR is plain to see; the command takes them for
 * that same DIR only.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scanDirectory } from '../../../src/layout/scan-directory.js';
import { startEarly as startFromSources, takeEarlyView, takeEarlyWorkers as takeFromSources } from '../../../commands/watch/early.js';
import { ensureBuilt, ROOT } from '../../support/cli.js';
import { makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

async function takenFor(args: string[], env: NodeJS.ProcessEnv, dir: string, tty = true): Promise<boolean> {
  startFromSources(args, env, tty);
  const workers = takeFromSources(dir);
  await workers?.close(0);
  return workers !== undefined;
}

describe('the live view started early', () => {
  it('starts only when DIR is plain to see, and hands the workers to that DIR only', async () => {
    expect(await takenFor(['/data/c'], {}, '/data/c')).toBe(true);
    expect(await takenFor(['--allow-empty', '/data/c', '--no-color', '--lock-wait=5', '-q'], {}, '/data/c')).toBe(true);
    expect(await takenFor([], { TOKCAP_DIR: '/data/env' }, '/data/env')).toBe(true);
    // Another DIR than the command's: not taken (and stopped).
    expect(await takenFor(['/data/c'], {}, '/data/other')).toBe(false);
    // An option whose value is the next word, or one that leaves the live view: not started.
    expect(await takenFor(['--lock-wait', '5', '/data/c'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', '--once'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', '--json'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', '--help'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', 'r1'], {}, '/data/c')).toBe(false);
    expect(await takenFor([], {}, '')).toBe(false);
    expect(await takenFor(['/data/c'], {}, '/data/c', false)).toBe(false);
    expect(await takenFor(['/data/c'], { TOKCAP_WORKERS: '1' }, '/data/c')).toBe(false);
    // Taken once.
    startFromSources(['/data/c'], {}, true);
    const first = takeFromSources('/data/c');
    expect(takeFromSources('/data/c')).toBeUndefined();
    await first?.close(0);
  });

  it('loads the live view meanwhile, in the production build unless NODE_ENV says otherwise', async () => {
    const env: NodeJS.ProcessEnv = {};
    startFromSources(['/data/c'], env, true);
    await takeFromSources('/data/c')?.close(0);
    expect(env.NODE_ENV).toBe('production');
    const loading = takeEarlyView();
    expect(takeEarlyView()).toBeUndefined();
    expect(typeof (await loading!).view.runLive).toBe('function');
    const test: NodeJS.ProcessEnv = { NODE_ENV: 'test' };
    startFromSources(['/data/c'], test, true);
    await takeFromSources('/data/c')?.close(0);
    expect(test.NODE_ENV).toBe('test');
    await takeEarlyView();
    // Not started, nothing loading.
    startFromSources(['/data/c', '--once'], {}, true);
    expect(takeEarlyView()).toBeUndefined();
  });

  it("lists DIR in the worker for the load's first scan, as the directory is", async () => {
    await ensureBuilt();
    const compiled = (await import(pathToFileURL(path.join(ROOT, 'dist', 'commands', 'watch', 'early.js')).href)) as typeof import('../../../commands/watch/early.js');
    const dir = tempDir();
    await makeStore(dir, { rollouts: 30, calls: 1, prompt: 2, gen: 1, turn: 1, mix: false });
    compiled.startEarly([dir], {}, true);
    const workers = compiled.takeEarlyWorkers(dir)!;
    try {
      const load = await workers.scanForLoad(dir);
      expect(load).toBeDefined();
      expect({ ...load!.listing, rollouts: new Map(load!.listing.rollouts) }).toEqual(await scanDirectory(dir));
      await load!.stat();
      // The next load of DIR lists it again.
      expect((await workers.scanForLoad(dir))?.ids).toEqual(load!.ids);
    } finally {
      await workers.close();
    }
  });
});
