/**
 * tokcap's worker threads take no rollout lock (docs/format.md#lock-mechanism: one at a time per process; the
 * main thread takes them all). A worker that refuses locks and asks for one anyway gets an
 * internal error, and nothing is locked or created.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../../support/cli.js';

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Runs `body` (an async function body, `lock` = the compiled rollout-lock module) in a worker thread. */
function inWorker(body: string, data: unknown): Promise<unknown> {
  const lockModule = pathToFileURL(path.join(ROOT, 'dist', 'src', 'lock', 'rollout-lock.js')).href;
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(${JSON.stringify(lockModule)}).then(async (lock) => {
      try { parentPort.postMessage({ ok: true, value: await (async () => { ${body} })() }); }
      catch (e) { parentPort.postMessage({ ok: false, message: String(e && e.message) }); }
    });`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: data });
    w.once('message', (m) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

describe('rollout locks in a worker thread', () => {
  it('a worker that refuses them gets an internal error and locks nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-worker-locks-'));
    dirs.push(dir);
    const lockPath = path.join(dir, 'r0.tokens.lock');
    const reply = await inWorker(
      `lock.refuseRolloutLocksInThisThread();
       return lock.withRolloutLock(workerData.lockPath, 'r0', 'exclusive', { waitMs: 0 }, () => 'locked');`,
      { lockPath },
    );
    expect(reply).toEqual({ ok: false, message: expect.stringMatching(/^internal: a worker thread asked for the lock of rollout r0/) });
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('a worker that does not refuse them (a library user of its own) still takes one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-worker-locks-'));
    dirs.push(dir);
    const lockPath = path.join(dir, 'r0.tokens.lock');
    const reply = await inWorker(`return lock.withRolloutLock(workerData.lockPath, 'r0', 'exclusive', { waitMs: 0 }, () => 'locked');`, { lockPath });
    expect(reply).toEqual({ ok: true, value: 'locked' });
    expect(fs.existsSync(lockPath)).toBe(true);
  });
});
