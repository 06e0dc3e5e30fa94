import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pyProbe } from '../../support/py-lock-probe.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TokcapError } from '../../../src/errors.js';
import { rolloutPaths } from '../../../src/layout/file-names.js';
import { giveLockTurn, tryTakeLockTurn } from '../../../src/lock/lock-turns.js';
import { NOT_NOW, withReadLockNow, withRolloutLock, withRolloutLockSyncFn } from '../../../src/lock/rollout-lock.js';

/**
 * A real Python lock holder (stdlib fcntl.flock only). argv: path, action, seconds.
 *   ex / sh       take LOCK_EX / LOCK_SH (blocking, like the reference), print "locked", hold
 *                 until stdin closes or `seconds` pass, then LOCK_UN + close.
 *   ex-unlink     like ex, but after `seconds` unlink the lock file (sweep) before releasing.
 *   ex-replace    like ex-unlink, then create a fresh lock file at the path before releasing.
 */
const HOLD_PY = `
import fcntl, os, select, sys
path, action, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
f = open(path, 'a+b')
fcntl.flock(f.fileno(), fcntl.LOCK_SH if action == 'sh' else fcntl.LOCK_EX)
print('locked', flush=True)
select.select([sys.stdin], [], [], secs)
if action in ('ex-unlink', 'ex-replace'):
    os.unlink(path)
    if action == 'ex-replace':
        open(path, 'a+b').close()
fcntl.flock(f.fileno(), fcntl.LOCK_UN)
f.close()
print('released', flush=True)
`;

type HoldAction = 'ex' | 'sh' | 'ex-unlink' | 'ex-replace';

interface PyHolder {
  child: ChildProcessWithoutNullStreams;
  /** Resolves when the holder printed "released" and exited. */
  done: Promise<void>;
  /** Close stdin: the holder releases now. */
  release(): Promise<void>;
}

const children = new Set<ChildProcessWithoutNullStreams>();

async function pyHold(file: string, action: HoldAction, seconds = 20): Promise<PyHolder> {
  const child = spawn('python3', ['-c', HOLD_PY, file, action, String(seconds)]);
  children.add(child);
  let out = '';
  let err = '';
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('locked\n')) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`python holder exited early (${code}): ${err}`)));
    child.on('error', reject);
  });
  const done = new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => {
      children.delete(child);
      if (code === 0 && out.includes('released\n')) resolve();
      else reject(new Error(`python holder failed (${code}): ${err}`));
    });
  });
  done.catch(() => undefined);
  await locked;
  return {
    child,
    done,
    release: async () => {
      child.stdin.end();
      await done;
    },
  };
}

async function rejection(p: Promise<unknown>): Promise<TokcapError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TokcapError);
    return e as TokcapError;
  }
  throw new Error('expected a rejection');
}

const RID = 'r-1.a';

describe('withRolloutLock', () => {
  let dir: string;
  let lock: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-lock-'));
    lock = rolloutPaths(dir, RID).lock;
  });
  afterEach(() => {
    for (const c of children) c.kill('SIGKILL');
    children.clear();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('against a Python LOCK_EX holder', () => {
    it('exclusive and shared waits time out, naming the rollout', async () => {
      const py = await pyHold(lock, 'ex', 600);
      for (const mode of ['exclusive', 'shared'] as const) {
        let ran = false;
        const err = await rejection(
          withRolloutLock(lock, RID, mode, { waitMs: 300 }, () => {
            ran = true;
          }),
        );
        expect(ran).toBe(false);
        expect(err.kind).toBe('lock_timeout');
        expect(err.message).toBe(`timed out after 300ms waiting for the lock of rollout ${RID}`);
        expect(err.rolloutId).toBe(RID);
        expect(err.file).toBe(lock);
        expect(err.pyClass).toBe('TimeoutError');
      }
      // read-only callers contend on the existing lock file too
      const err = await rejection(
        withRolloutLock(lock, RID, 'shared', { waitMs: 50, readOnly: true }, () => undefined),
      );
      expect(err.kind).toBe('lock_timeout');
      await py.release();
    });

    it('a wait leaves the event loop free: timers and I/O run until the holder releases', async () => {
      const py = await pyHold(lock, 'ex', 600);
      let settled = false;
      const waiting = withRolloutLock(lock, RID, 'exclusive', { waitMs: 600_000 }, ({ locked }) => locked).finally(
        () => (settled = true),
      );
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      // Only reachable while the wait yields: a timer fires, a child process runs and answers.
      while (ticks < 3) await sleep(5);
      expect(await pyProbe(lock, 'ex')).toBe('blocked');
      clearInterval(timer);
      expect(settled).toBe(false);
      await py.release();
      expect(await waiting).toBe(true);
    });

    it('waitMs 0 tries exactly once: it answers before any timer runs', async () => {
      const py = await pyHold(lock, 'ex', 600);
      // A second attempt would come after a backoff timer; this one is due first.
      let timerRan = false;
      setTimeout(() => (timerRan = true), 0);
      const err = await rejection(withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, () => 1));
      expect(err.kind).toBe('lock_timeout');
      expect(timerRan).toBe(false);
      await py.release();
    });

    it('an exclusive wait succeeds once Python releases', async () => {
      const py = await pyHold(lock, 'ex', 600);
      let settled = false;
      const waiting = withRolloutLock(lock, RID, 'exclusive', { waitMs: 600_000 }, async ({ locked }) => {
        expect(locked).toBe(true);
        return 'ok';
      }).finally(() => (settled = true));
      // A few attempts fail against the holder first.
      expect(await pyProbe(lock, 'sh')).toBe('blocked');
      expect(settled).toBe(false);
      await py.release();
      expect(await waiting).toBe('ok');
    });

    it('a call waiting for it holds up no other rollout’s lock in this process', async () => {
      const py = await pyHold(lock, 'ex', 60);
      const other = rolloutPaths(dir, 'other').lock;
      let waited: 'waiting' | 'done' = 'waiting';
      const waiting = withRolloutLock(lock, RID, 'shared', { waitMs: 60_000 }, () => 'late').finally(
        () => (waited = 'done'),
      );
      // Each kind of call, while the first still waits for the holder.
      expect(await withRolloutLock(other, 'other', 'exclusive', { waitMs: 0 }, () => 'other')).toBe('other');
      expect(await withRolloutLockSyncFn(other, 'other', 'shared', { waitMs: 0 }, () => 'sync')).toBe('sync');
      expect(withReadLockNow(other, 'other', () => 'now')).toBe('now');
      expect(waited).toBe('waiting');
      await py.release();
      expect(await waiting).toBe('late');
    });

    it('an abort signal ends the wait with its reason', async () => {
      const py = await pyHold(lock, 'ex', 600);
      const ac = new AbortController();
      const waiting = withRolloutLock(lock, RID, 'exclusive', { waitMs: 600_000, signal: ac.signal }, () => 1);
      // Aborted while it waits: a wait that ignored the signal would outlast the test.
      expect(await pyProbe(lock, 'sh')).toBe('blocked');
      ac.abort(new Error('stop waiting'));
      await expect(waiting).rejects.toThrow('stop waiting');
      await py.release();
    });
  });

  describe('against a Python LOCK_SH holder', () => {
    it('shared succeeds, exclusive times out', async () => {
      const py = await pyHold(lock, 'sh');
      expect(await withRolloutLock(lock, RID, 'shared', { waitMs: 1000 }, () => 'shared-ok')).toBe('shared-ok');
      expect(await withRolloutLock(lock, RID, 'shared', { waitMs: 1000, readOnly: true }, (h) => h.locked)).toBe(true);
      const err = await rejection(withRolloutLock(lock, RID, 'exclusive', { waitMs: 200 }, () => 1));
      expect(err.kind).toBe('lock_timeout');
      await py.release();
    });
  });

  describe('Python probes while tokcap holds the lock', () => {
    it('tokcap LOCK_EX: Python LOCK_EX|LOCK_NB and LOCK_SH|LOCK_NB both fail', async () => {
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, async () => {
        expect(await pyProbe(lock, 'ex')).toBe('blocked');
        expect(await pyProbe(lock, 'sh')).toBe('blocked');
      });
      expect(await pyProbe(lock, 'ex')).toBe('acquired');
    });

    it('tokcap LOCK_SH: Python LOCK_SH|LOCK_NB succeeds, LOCK_EX|LOCK_NB fails', async () => {
      await withRolloutLock(lock, RID, 'shared', { waitMs: 0 }, async () => {
        expect(await pyProbe(lock, 'sh')).toBe('acquired');
        expect(await pyProbe(lock, 'ex')).toBe('blocked');
      });
    });

    it('read-only shared lock on an existing file excludes a Python writer', async () => {
      fs.writeFileSync(lock, '');
      await withRolloutLock(lock, RID, 'shared', { waitMs: 0, readOnly: true }, async (h) => {
        expect(h.locked).toBe(true);
        expect(await pyProbe(lock, 'ex')).toBe('blocked');
      });
    });
  });

  describe('the lock file', () => {
    it('mutating callers create it empty, mode 0666 & ~umask, and never write it', async () => {
      expect(fs.existsSync(lock)).toBe(false);
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, ({ fd, locked }) => {
        expect(locked).toBe(true);
        expect(fd).toBeGreaterThanOrEqual(0);
      });
      const st = fs.statSync(lock);
      expect(st.size).toBe(0);
      expect(st.mode & 0o777).toBe(0o666 & ~process.umask());
      await withRolloutLock(lock, RID, 'shared', { waitMs: 0 }, () => undefined);
      expect(fs.statSync(lock).size).toBe(0);
      expect(fs.statSync(lock).ino).toBe(st.ino);
    });

    it('read-only with a missing lock file creates nothing and runs unlocked', async () => {
      const v = await withRolloutLock(lock, RID, 'shared', { waitMs: 0, readOnly: true }, (h) => h);
      expect(v).toEqual({ fd: -1, locked: false });
      expect(fs.existsSync(lock)).toBe(false);
      expect(fs.readdirSync(dir)).toEqual([]);
    });

    it('read-only with an existing lock file leaves it untouched (size 0, mtime unchanged)', async () => {
      fs.writeFileSync(lock, '');
      const old = new Date('2020-01-02T03:04:05Z');
      fs.utimesSync(lock, old, old);
      const before = fs.statSync(lock, { bigint: true });
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0, readOnly: true }, (h) => {
        expect(h.locked).toBe(true);
        expect(fs.fstatSync(h.fd).ino).toBe(Number(before.ino));
      });
      const after = fs.statSync(lock, { bigint: true });
      expect(after.size).toBe(0n);
      expect(after.mtimeNs).toBe(before.mtimeNs);
      expect(after.ctimeNs).toBe(before.ctimeNs);
      expect(after.ino).toBe(before.ino);
    });

    it('fs errors become io errors naming the lock file and rollout', async () => {
      const missingDir = path.join(dir, 'nope');
      const bad = rolloutPaths(missingDir, RID).lock;
      const err = await rejection(withRolloutLock(bad, RID, 'exclusive', { waitMs: 0 }, () => 1));
      expect(err.kind).toBe('io');
      expect(err.message).toMatch(/^ENOENT: /);
      expect(err.file).toBe(bad);
      expect(err.rolloutId).toBe(RID);
      // a read-only caller just finds no lock file there
      expect(await withRolloutLock(bad, RID, 'shared', { waitMs: 0, readOnly: true }, (h) => h.locked)).toBe(false);
    });
  });

  describe('release', () => {
    it('releases when fn throws (sync or async) and propagates fn’s error', async () => {
      await expect(
        withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, () => {
          throw new Error('sync boom');
        }),
      ).rejects.toThrow('sync boom');
      expect(await pyProbe(lock, 'ex')).toBe('acquired');
      await expect(
        withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, async () => {
          await sleep(5);
          throw new Error('async boom');
        }),
      ).rejects.toThrow('async boom');
      expect(await pyProbe(lock, 'ex')).toBe('acquired');
      // and it can be taken again at once
      expect(await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, () => 'again')).toBe('again');
    });

    it('closes the descriptor after release', async () => {
      let fd = -1;
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, (h) => {
        fd = h.fd;
        expect(() => fs.fstatSync(fd)).not.toThrow();
      });
      // the fd number may be reused by someone else later, but right now it is closed
      expect(() => fs.fstatSync(fd)).toThrow(/EBADF/);
    });

    it('a synchronous fn: lock and turn given back before any other queued work of this thread runs', async () => {
      // Held across a turn of the microtask queue, the process's lock turn would wait for
      // whatever this thread runs meanwhile (another rollout's parse), and so would the other
      // threads' copies.
      let turnFreeMeanwhile: boolean | undefined;
      let fd = -1;
      await withRolloutLock(lock, RID, 'shared', { waitMs: 0 }, (h) => {
        fd = h.fd;
        queueMicrotask(() => {
          turnFreeMeanwhile = tryTakeLockTurn();
          if (turnFreeMeanwhile) giveLockTurn();
          expect(() => fs.fstatSync(fd)).toThrow(/EBADF/);
        });
      });
      expect(turnFreeMeanwhile).toBe(true);
    });
  });

  describe('nesting guard', () => {
    it('rejects acquiring the same rollout inside fn, whatever the mode or path spelling', async () => {
      const spelled = `${dir}/./${path.basename(lock)}`;
      const link = path.join(os.tmpdir(), `tokcap-lock-link-${process.pid}-${Date.now()}`);
      fs.symlinkSync(dir, link);
      try {
        await withRolloutLock(lock, RID, 'shared', { waitMs: 0 }, async () => {
          for (const [p, mode, readOnly] of [
            [lock, 'shared', false],
            [lock, 'exclusive', false],
            [lock, 'shared', true],
            [spelled, 'exclusive', false],
            [rolloutPaths(link, RID).lock, 'exclusive', false],
          ] as const) {
            // Refused at once: a wait against itself would end in lock_timeout instead.
            const err = await rejection(withRolloutLock(p, RID, mode, { waitMs: 2000, readOnly }, () => 1));
            expect(err.kind).toBe('other');
            expect(err.message).toBe(`internal: nested lock of rollout ${RID}`);
          }
          // nor may another rollout's lock be taken inside fn: never two rollout locks at once
          const other = rolloutPaths(dir, 'other').lock;
          const err = await rejection(withRolloutLock(other, 'other', 'exclusive', { waitMs: 0 }, () => 'x'));
          expect(err.message).toBe('internal: nested lock of rollout other');
        });
      } finally {
        fs.unlinkSync(link);
      }
      // after the outer release the rollout is free again
      expect(await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, () => 'free')).toBe('free');
    });

    it('concurrent independent operations in one process are not "nested": they wait in turn', async () => {
      const events: string[] = [];
      const op = (name: string) =>
        withRolloutLock(lock, RID, 'exclusive', { waitMs: 60_000 }, async () => {
          events.push(`${name}+`);
          await sleep(60);
          events.push(`${name}-`);
          return name;
        });
      expect(await Promise.all([op('a'), op('b')])).toEqual(['a', 'b']);
      // never interleaved
      expect(events.join(' ')).toMatch(/^(a\+ a- b\+ b-|b\+ b- a\+ a-)$/);
    });

    it('work started inside fn that outlives fn is not treated as nested', async () => {
      let later: Promise<string> | undefined;
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, () => {
        later = sleep(20).then(() => withRolloutLock(lock, RID, 'exclusive', { waitMs: 60_000 }, () => 'later'));
      });
      expect(await later).toBe('later');
    });
  });

  describe('sweep race (docs/format.md#lock-file-lifetime, docs/format.md#lock-implementation)', () => {
    it('fn may unlink the lock file while holding it; the next caller creates a fresh one', async () => {
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, () => {
        fs.unlinkSync(lock);
      });
      expect(fs.existsSync(lock)).toBe(false);
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, async (h) => {
        expect(fs.fstatSync(h.fd).ino).toBe(fs.statSync(lock).ino);
        expect(await pyProbe(lock, 'ex')).toBe('blocked');
      });
      expect(fs.statSync(lock).size).toBe(0);
    });

    it('a waiter whose lock file was swept under it relocks the fresh lock file', async () => {
      const py = await pyHold(lock, 'ex-unlink', 0.15);
      await withRolloutLock(lock, RID, 'exclusive', { waitMs: 60_000 }, async (h) => {
        expect(h.locked).toBe(true);
        expect(fs.existsSync(lock)).toBe(true);
        expect(fs.fstatSync(h.fd).ino).toBe(fs.statSync(lock).ino);
        expect(await pyProbe(lock, 'ex')).toBe('blocked');
      });
      await py.done;
    });

    it('a waiter whose lock file was replaced under it locks the replacement', async () => {
      const py = await pyHold(lock, 'ex-replace', 0.15);
      const oldIno = fs.statSync(lock).ino;
      await withRolloutLock(lock, RID, 'shared', { waitMs: 60_000 }, async (h) => {
        const ino = fs.fstatSync(h.fd).ino;
        expect(ino).toBe(fs.statSync(lock).ino);
        expect(ino).not.toBe(oldIno);
        expect(await pyProbe(lock, 'ex')).toBe('blocked');
      });
      await py.done;
    });

    it('a read-only waiter whose lock file was swept proceeds unlocked and creates nothing', async () => {
      const py = await pyHold(lock, 'ex-unlink', 0.15);
      const h = await withRolloutLock(lock, RID, 'shared', { waitMs: 60_000, readOnly: true }, (held) => held);
      expect(h).toEqual({ fd: -1, locked: false });
      expect(fs.existsSync(lock)).toBe(false);
      await py.done;
    });
  });

  describe('withReadLockNow: the lock taken synchronously when it is free at once', () => {
    /** A Python LOCK_NB probe run synchronously (the fn under test is synchronous). */
    const probeNow = (mode: 'ex' | 'sh') =>
      spawnSync('python3', ['-c', PROBE_NOW_PY, lock, mode], { encoding: 'utf8' }).stdout.trim();

    it('runs fn synchronously under a shared lock that excludes a Python writer, then releases it', async () => {
      fs.writeFileSync(lock, '');
      let fd = -1;
      const v = withReadLockNow(lock, RID, (h) => {
        expect(h.locked).toBe(true);
        fd = h.fd;
        expect(fs.fstatSync(h.fd).ino).toBe(fs.statSync(lock).ino);
        expect(probeNow('ex')).toBe('blocked');
        expect(probeNow('sh')).toBe('acquired');
        return 'copied';
      });
      expect(v).toBe('copied');
      expect(() => fs.fstatSync(fd)).toThrow(/EBADF/);
      expect(await pyProbe(lock, 'ex', 'rb')).toBe('acquired');
      expect(fs.statSync(lock).size).toBe(0);
    });

    it('hands the descriptor to `unlocked` once released: open, but locking nothing', async () => {
      fs.writeFileSync(lock, '');
      let kept = -1;
      expect(
        withReadLockNow(
          lock,
          RID,
          (h) => probeNow('ex') + ' ' + h.fd,
          (fd) => (kept = fd),
        ),
      ).toBe(`blocked ${kept}`);
      expect(fs.fstatSync(kept).ino).toBe(fs.statSync(lock).ino);
      expect(probeNow('ex')).toBe('acquired');
      fs.closeSync(kept);
    });

    it('returns NOT_NOW without running fn while a Python writer holds the lock', async () => {
      const py = await pyHold(lock, 'ex');
      let ran = false;
      expect(withReadLockNow(lock, RID, () => (ran = true))).toBe(NOT_NOW);
      expect(ran).toBe(false);
      await py.release();
      expect(withReadLockNow(lock, RID, (h) => h.locked)).toBe(true);
    });

    it('returns NOT_NOW while another call of this process holds or awaits its turn (FIFO kept)', async () => {
      fs.writeFileSync(lock, '');
      const other = rolloutPaths(dir, 'other').lock;
      fs.writeFileSync(other, '');
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const holding = withRolloutLock(other, 'other', 'shared', { waitMs: 0, readOnly: true }, () => gate);
      const queued = withRolloutLock(lock, RID, 'shared', { waitMs: 0, readOnly: true }, () => 'queued');
      expect(withReadLockNow(lock, RID, () => 'jumped')).toBe(NOT_NOW);
      release();
      await holding;
      expect(await queued).toBe('queued');
      expect(withReadLockNow(lock, RID, () => 'now')).toBe('now');
    });

    it('refuses any lock requested inside its fn, and itself inside another lock', async () => {
      fs.writeFileSync(lock, '');
      const other = rolloutPaths(dir, 'other').lock;
      const inner: Promise<unknown>[] = [];
      withReadLockNow(lock, RID, () => {
        expect(() => withReadLockNow(other, 'other', () => 1)).toThrow(/nested lock/);
        inner.push(withRolloutLock(other, 'other', 'shared', { waitMs: 0, readOnly: true }, () => 1));
      });
      expect((await rejection(inner[0])).message).toMatch(/nested lock/);
      await withRolloutLock(other, 'other', 'shared', { waitMs: 0 }, () => {
        expect(() => withReadLockNow(lock, RID, () => 1)).toThrow(/nested lock/);
      });
    });

    it('with no lock file runs fn unlocked and creates nothing', () => {
      expect(withReadLockNow(lock, RID, (h) => h)).toEqual({ fd: -1, locked: false });
      expect(fs.readdirSync(dir)).toEqual([]);
    });

    it('refuses a FIFO named like the lock file, without blocking', () => {
      spawnSync('mkfifo', [lock]);
      expect(() => withReadLockNow(lock, RID, () => 1)).toThrow(/is a FIFO: refusing to lock/);
    });

    it("releases when fn throws and propagates fn's error", async () => {
      fs.writeFileSync(lock, '');
      expect(() =>
        withReadLockNow(lock, RID, () => {
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(await pyProbe(lock, 'ex')).toBe('acquired');
      expect(withReadLockNow(lock, RID, () => 'again')).toBe('again');
    });
  });

  describe('withRolloutLockSyncFn: the same lock around a synchronous fn', () => {
    const probeNow = (mode: 'ex' | 'sh') =>
      spawnSync('python3', ['-c', PROBE_NOW_PY, lock, mode], { encoding: 'utf8' }).stdout.trim();

    it('runs fn under the lock and releases it before resolving', async () => {
      let fd = -1;
      const v = await withRolloutLockSyncFn(lock, RID, 'shared', { waitMs: 0 }, (h) => {
        expect(h.locked).toBe(true);
        fd = h.fd;
        expect(probeNow('ex')).toBe('blocked');
        expect(probeNow('sh')).toBe('acquired');
        return 'copied';
      });
      expect(v).toBe('copied');
      expect(() => fs.fstatSync(fd)).toThrow(/EBADF/);
      expect(await pyProbe(lock, 'ex')).toBe('acquired');
    });

    it('waits for a Python holder as withRolloutLock does, and times out the same way', async () => {
      const py = await pyHold(lock, 'ex');
      const err = await rejection(withRolloutLockSyncFn(lock, RID, 'shared', { waitMs: 100, readOnly: true }, () => 1));
      expect(err.kind).toBe('lock_timeout');
      const waiting = withRolloutLockSyncFn(lock, RID, 'shared', { waitMs: 60_000, readOnly: true }, () => 'after');
      await sleep(50);
      await py.release();
      expect(await waiting).toBe('after');
    });

    it('refuses any lock requested inside its fn, and itself inside another lock, even after an await', async () => {
      const other = rolloutPaths(dir, 'other').lock;
      const inner: Promise<unknown>[] = [];
      await withRolloutLockSyncFn(lock, RID, 'shared', { waitMs: 0 }, () => {
        inner.push(withRolloutLock(lock, RID, 'shared', { waitMs: 2000 }, () => 1));
        inner.push(withRolloutLockSyncFn(other, 'other', 'shared', { waitMs: 2000 }, () => 1));
        expect(() => withReadLockNow(other, 'other', () => 1)).toThrow(/nested lock/);
      });
      for (const p of inner) expect((await rejection(p)).message).toMatch(/^internal: nested lock of rollout /);
      await withRolloutLock(other, 'other', 'exclusive', { waitMs: 0 }, async () => {
        await sleep(5);
        const err = await rejection(withRolloutLockSyncFn(lock, RID, 'shared', { waitMs: 2000 }, () => 1));
        expect(err.message).toBe(`internal: nested lock of rollout ${RID}`);
      });
      fs.writeFileSync(other, '');
      withReadLockNow(other, 'other', () => {
        inner.push(withRolloutLockSyncFn(lock, RID, 'shared', { waitMs: 2000 }, () => 1));
      });
      expect((await rejection(inner[2])).message).toBe(`internal: nested lock of rollout ${RID}`);
    });

    it('concurrent independent calls are not nested: they wait in turn', async () => {
      const events: string[] = [];
      const holding = withRolloutLock(lock, RID, 'exclusive', { waitMs: 0 }, async () => {
        events.push('a+');
        await sleep(60);
        events.push('a-');
      });
      const queued = withRolloutLockSyncFn(lock, RID, 'exclusive', { waitMs: 60_000 }, () => {
        events.push('b');
        return 'b';
      });
      await holding;
      expect(await queued).toBe('b');
      expect(events).toEqual(['a+', 'a-', 'b']);
    });

    it("releases when fn throws and propagates fn's error", async () => {
      await expect(
        withRolloutLockSyncFn(lock, RID, 'exclusive', { waitMs: 0 }, () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await pyProbe(lock, 'ex')).toBe('acquired');
      expect(await withRolloutLockSyncFn(lock, RID, 'exclusive', { waitMs: 0 }, () => 'again')).toBe('again');
    });

    it('an fn that returns a promise fails, with the lock released', async () => {
      const err = await rejection(withRolloutLockSyncFn(lock, RID, 'exclusive', { waitMs: 0 }, () => sleep(5)));
      expect(err.message).toBe(`internal: the function run under the lock of rollout ${RID} returned a promise`);
      expect(await pyProbe(lock, 'ex')).toBe('acquired');
    });
  });
});

const PROBE_NOW_PY = `
import fcntl, sys
f = open(sys.argv[1], 'rb')
try:
    fcntl.flock(f.fileno(), (fcntl.LOCK_EX if sys.argv[2] == 'ex' else fcntl.LOCK_SH) | fcntl.LOCK_NB)
except BlockingIOError:
    print('blocked')
else:
    print('acquired')
`;
