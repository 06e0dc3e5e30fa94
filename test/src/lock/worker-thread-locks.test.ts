/**
 * Rollout locks in worker threads (docs/format.md#lock-mechanism: one at a time per process). A worker that
 * refuses locks and asks for one anyway gets an internal error, and nothing is locked or created.
 * A worker that joined the process's lock turns (src/lock/lock-turns.ts) takes locks in turn with
 * the main thread; a rollout a python3 process holds delays only the thread that waits for it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../../support/cli.js';
import { holdLock } from '../../support/reliability.js';

beforeAll(async () => {
  await ensureBuilt();
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/**
 * Runs `body` (an async function body, `lock` = the compiled rollout-lock module) in a worker
 * thread; `note()` in the body posts a message to `onNote`.
 */
function inWorker(body: string, data: unknown, onNote?: () => void): Promise<unknown> {
  const lockModule = pathToFileURL(path.join(ROOT, 'dist', 'src', 'lock', 'rollout-lock.js')).href;
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const note = () => parentPort.postMessage({ note: true });
    import(${JSON.stringify(lockModule)}).then(async (lock) => {
      try { parentPort.postMessage({ ok: true, value: await (async () => { ${body} })() }); }
      catch (e) { parentPort.postMessage({ ok: false, message: String(e && e.message) }); }
    });`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: data });
    w.on('message', (m: { note?: boolean }) => {
      if (m.note) return onNote?.();
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
    expect(reply).toEqual({
      ok: false,
      message: expect.stringMatching(/^internal: a worker thread asked for the lock of rollout r0/),
    });
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('a worker that does not refuse them (a library user of its own) still takes one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-worker-locks-'));
    dirs.push(dir);
    const lockPath = path.join(dir, 'r0.tokens.lock');
    const reply = await inWorker(
      `return lock.withRolloutLock(workerData.lockPath, 'r0', 'exclusive', { waitMs: 0 }, () => 'locked');`,
      { lockPath },
    );
    expect(reply).toEqual({ ok: true, value: 'locked' });
    expect(fs.existsSync(lockPath)).toBe(true);
  });

  describe('in turn with the main thread (lock turns)', () => {
    const dist = (f: string) => pathToFileURL(path.join(ROOT, 'dist', 'src', 'lock', f)).href;
    // Takes and releases the locks of r1..r20 one after the other.
    const lockMany = `
      let taken = 0;
      for (let i = 1; i <= 20; i++) {
        await lock.withRolloutLock(workerData.dir + '/r' + i + '.tokens.lock', 'r' + i, 'shared', { waitMs: 60000 }, () => undefined);
        taken++;
      }
      return taken;`;

    async function storeWithHeldR0() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-worker-turns-'));
      dirs.push(dir);
      for (let i = 0; i <= 20; i++) fs.writeFileSync(path.join(dir, `r${i}.tokens.lock`), '');
      const holder = await holdLock(dir, 'r0', 'ex', 600);
      return { dir, holder };
    }

    // Each side waits for r0 until python3 lets it go, which happens only once the other side
    // took its 20 locks: a waiting thread that held up the other would never let it finish.
    it('a worker waiting for a rollout python3 holds does not stall the main thread', async () => {
      const { dir, holder } = await storeWithHeldR0();
      try {
        const turns = await import(dist('lock-turns.js'));
        const lock = await import(dist('rollout-lock.js'));
        let answered = false;
        let started!: () => void;
        const waitStarted = new Promise<void>((resolve) => (started = resolve));
        // note() just before the call: the worker is waiting for r0 by the time this thread reads it.
        const worker = inWorker(
          `const turns = await import(workerData.turns);
           turns.joinLockTurns(workerData.memory, 0);
           note();
           return await lock.withRolloutLock(workerData.dir + '/r0.tokens.lock', 'r0', 'shared', { waitMs: 600000 }, () => 'locked');`,
          { dir, turns: dist('lock-turns.js'), memory: turns.lockTurnsMemory() },
          () => started(),
        ).finally(() => (answered = true));
        await waitStarted;
        // Meanwhile this (main) thread takes 20 other rollouts' locks, one after the other.
        for (let i = 1; i <= 20; i++) {
          expect(
            await lock.withRolloutLock(
              path.join(dir, `r${i}.tokens.lock`),
              `r${i}`,
              'shared',
              { waitMs: 60_000 },
              () => i,
            ),
          ).toBe(i);
        }
        expect(answered).toBe(false);
        holder.child.kill('SIGKILL');
        expect(await worker).toEqual({ ok: true, value: 'locked' });
      } finally {
        holder.child.kill('SIGKILL');
        await holder.done;
      }
    });

    it('the main thread waiting for a rollout python3 holds does not stall a worker', async () => {
      const { dir, holder } = await storeWithHeldR0();
      try {
        const turns = await import(dist('lock-turns.js'));
        const lock = await import(dist('rollout-lock.js'));
        let settled = false;
        const waiting = lock
          .withRolloutLock(path.join(dir, 'r0.tokens.lock'), 'r0', 'shared', { waitMs: 600_000 }, () => 'locked')
          .finally(() => (settled = true));
        const reply = await inWorker(
          `const turns = await import(workerData.turns); turns.joinLockTurns(workerData.memory, 0);${lockMany}`,
          {
            dir,
            turns: dist('lock-turns.js'),
            memory: turns.lockTurnsMemory(),
          },
        );
        expect(reply).toEqual({ ok: true, value: 20 });
        expect(settled).toBe(false);
        holder.child.kill('SIGKILL');
        expect(await waiting).toBe('locked');
      } finally {
        holder.child.kill('SIGKILL');
        await holder.done;
      }
    });
  });
});
