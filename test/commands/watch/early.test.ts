/**
 * `tokcap watch DIR` starts its read worker and the listing of DIR before the command line is
 * parsed (commands/watch/early.ts), only when the plan (commands/cli/plan.ts) shows DIR plainly; the
 * command takes them for that same DIR only.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scanDirectory } from '../../../src/layout/scan-directory.js';
import {
  startEarly as startFromSources,
  takeEarlyView,
  takeEarlyWorkers as takeFromSources,
} from '../../../commands/watch/early.js';
import { planOf } from '../../../commands/cli/plan.js';
import { readSettings } from '../../../commands/cli/settings.js';
import { ensureBuilt, ROOT } from '../../support/cli.js';
import { makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

/** `tokcap watch ARGS` started early, as commands/cli/main.ts does. */
function start(args: string[], env: NodeJS.ProcessEnv, tty: boolean, startEarly = startFromSources): void {
  startEarly(planOf(['node', 'tokcap', 'watch', ...args]), readSettings(env), env, tty);
}

async function takenFor(args: string[], env: NodeJS.ProcessEnv, dir: string, tty = true): Promise<boolean> {
  start(args, env, tty);
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
    // An option's value in the next word is not DIR.
    expect(await takenFor(['--lock-wait', '5s', '/data/c', '--color', 'never'], {}, '/data/c')).toBe(true);
    // An option that leaves the live view, or one the option table does not know: not started.
    expect(await takenFor(['/data/c', '--nosuch'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', '--once'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', '--json'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', '--help'], {}, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c', 'r1'], {}, '/data/c')).toBe(false);
    expect(await takenFor([], {}, '')).toBe(false);
    expect(await takenFor(['/data/c'], {}, '/data/c', false)).toBe(false);
    expect(await takenFor(['/data/c'], { TOKCAP_WORKERS: '1' }, '/data/c')).toBe(false);
    expect(await takenFor(['/data/c'], { TOKCAP_WORKERS: '0' }, '/data/c')).toBe(true);
    // Taken once.
    start(['/data/c'], {}, true);
    const first = takeFromSources('/data/c');
    expect(takeFromSources('/data/c')).toBeUndefined();
    await first?.close(0);
  });

  it('loads the live view meanwhile, in the production build unless NODE_ENV says otherwise', async () => {
    const env: NodeJS.ProcessEnv = {};
    start(['/data/c'], env, true);
    await takeFromSources('/data/c')?.close(0);
    expect(env.NODE_ENV).toBe('production');
    const loading = takeEarlyView();
    expect(takeEarlyView()).toBeUndefined();
    expect(typeof (await loading!).view.runLive).toBe('function');
    const test: NodeJS.ProcessEnv = { NODE_ENV: 'test' };
    start(['/data/c'], test, true);
    await takeFromSources('/data/c')?.close(0);
    expect(test.NODE_ENV).toBe('test');
    await takeEarlyView();
    // Not started, nothing loading.
    start(['/data/c', '--once'], {}, true);
    expect(takeEarlyView()).toBeUndefined();
  });

  it("lists DIR in the worker for the load's first scan, as the directory is", async () => {
    await ensureBuilt();
    const compiled = (await import(
      pathToFileURL(path.join(ROOT, 'dist', 'commands', 'watch', 'early.js')).href
    )) as typeof import('../../../commands/watch/early.js');
    const dir = tempDir();
    await makeStore(dir, { rollouts: 30, calls: 1, prompt: 2, gen: 1, turn: 1, mix: false });
    start([dir], {}, true, compiled.startEarly);
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
