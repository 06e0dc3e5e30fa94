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
    // Takes and releases the locks of r1..r20 one after the other; returns when each finished (ms since epoch).
    const lockMany = `
      const done = [];
      for (let i = 1; i <= 20; i++) {
        await lock.withRolloutLock(workerData.dir + '/r' + i + '.tokens.lock', 'r' + i, 'shared', { waitMs: 5000 }, () => undefined);
        done.push(Date.now());
      }
      return done;`;

    async function storeWithHeldR0() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-worker-turns-'));
      dirs.push(dir);
      for (let i = 0; i <= 20; i++) fs.writeFileSync(path.join(dir, `r${i}.tokens.lock`), '');
      const holder = await holdLock(dir, 'r0', 'ex', 60);
      return { dir, holder };
    }

    it('a worker waiting for a rollout python3 holds does not stall the main thread', async () => {
      const { dir, holder } = await storeWithHeldR0();
      try {
        const turns = await import(dist('lock-turns.js'));
        const lock = await import(dist('rollout-lock.js'));
        const started = Date.now();
        const worker = inWorker(
          `const turns = await import(workerData.turns);
           turns.joinLockTurns(workerData.memory, 0);
           try { await lock.withRolloutLock(workerData.dir + '/r0.tokens.lock', 'r0', 'shared', { waitMs: 1500 }, () => 'locked'); return 'locked'; }
           catch (e) { return [e.kind, Date.now()]; }`,
          { dir, turns: dist('lock-turns.js'), memory: turns.lockTurnsMemory() },
        );
        // Meanwhile this (main) thread takes 20 other rollouts' locks, one after the other.
        const done: number[] = [];
        for (let i = 1; i <= 20; i++) {
          await lock.withRolloutLock(
            path.join(dir, `r${i}.tokens.lock`),
            `r${i}`,
            'shared',
            { waitMs: 5000 },
            () => undefined,
          );
          done.push(Date.now());
        }
        const reply = (await worker) as { ok: boolean; value: [string, number] };
        expect(reply.ok).toBe(true);
        expect(reply.value[0]).toBe('lock_timeout');
        expect(reply.value[1] - started).toBeGreaterThanOrEqual(1400);
        // All 20 were taken while the worker was still waiting for r0.
        expect(done[19]).toBeLessThan(reply.value[1]);
      } finally {
        holder.child.kill('SIGKILL');
        await holder.done;
      }
    }, 60_000);

    it('the main thread waiting for a rollout python3 holds does not stall a worker', async () => {
      const { dir, holder } = await storeWithHeldR0();
      try {
        const turns = await import(dist('lock-turns.js'));
        const lock = await import(dist('rollout-lock.js'));
        const worker = inWorker(
          `const turns = await import(workerData.turns); turns.joinLockTurns(workerData.memory, 0);${lockMany}`,
          {
            dir,
            turns: dist('lock-turns.js'),
            memory: turns.lockTurnsMemory(),
          },
        );
        const kind = await lock
          .withRolloutLock(path.join(dir, 'r0.tokens.lock'), 'r0', 'shared', { waitMs: 1500 }, () => 'locked')
          .catch((e: { kind?: string }) => e.kind);
        const timedOutAt = Date.now();
        expect(kind).toBe('lock_timeout');
        const reply = (await worker) as { ok: boolean; value: number[] };
        expect(reply.ok).toBe(true);
        expect(reply.value).toHaveLength(20);
        expect(reply.value[19]).toBeLessThan(timedOutAt);
      } finally {
        holder.child.kill('SIGKILL');
        await holder.done;
      }
    }, 60_000);
  });
});
