/**
 * Worker threads of build and verify-digests take their rollouts' locks themselves, in turn with
 * the main thread (src/lock/lock-turns.ts). docs/format.md#lock-mechanism still holds for the
 * whole process: never two rollout locks at once. Checked from outside, with real processes: a
 * python3 poller reads /proc/locks (a FLOCK entry carries the holder's pid and the file's inode)
 * while tokcap builds with a worker; a python3 lock holder delays only its own rollout.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { ensureBuilt } from '../support/cli-binary.js';
import { holdLock, startProcess, startTokcap } from '../support/reliability.js';

/**
 * Polls /proc/locks until STOP exists; prints how many polls it made, in how many it saw a lock
 * on one of DIR's lock files, the most such locks one pid held in a single poll, and the most it
 * held in two polls in a row (the same locks seen both times). The kernel does not list the locks
 * atomically (one list per CPU, walked while other CPUs lock and unlock), so one poll can show a
 * lock just released beside the next one just taken; a lock pair seen in two consecutive polls
 * was held together.
 */
const POLLER_PY = `
import json, os, sys
d, stop = sys.argv[1], sys.argv[2]
keys = set()
for n in os.listdir(d):
    if n.endswith('.tokens.lock'):
        st = os.stat(os.path.join(d, n))
        keys.add('%02x:%02x:%d' % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
print('ready', flush=True)
polls = seen = most = held = 0
pids = set()
before = {}
while not os.path.exists(stop):
    per = {}
    fd = os.open('/proc/locks', os.O_RDONLY)
    try:
        text = b''
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            text += b
    finally:
        os.close(fd)
    for line in text.decode().splitlines():
        p = line.split()
        # "1: FLOCK  ADVISORY  READ 1234 08:01:5678 0 EOF"; a blocked waiter has "->" second.
        if len(p) < 6 or p[1] != 'FLOCK' or p[5] not in keys:
            continue
        per.setdefault(p[4], set()).add(p[5])
    polls += 1
    if per:
        seen += 1
        pids.update(per)
        most = max(most, max(len(v) for v in per.values()))
    for pid, locks in per.items():
        held = max(held, len(locks & before.get(pid, set())))
    before = per
print(json.dumps({'polls': polls, 'seen': seen, 'most': most, 'held': held, 'pids': sorted(pids), 'files': len(keys)}), flush=True)
`;

let dir: string;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'tokcap-worker-locks-'));
  await generateStore({ dir }, { rollouts: 240, calls: 6, prompt: 300, gen: 60, turn: 80, seed: 21 });
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function startPoller(store: string, stop: string) {
  const run = startProcess('python3', ['-c', POLLER_PY, store, stop], { timeoutMs: 120_000 });
  await new Promise<void>((resolve, reject) => {
    run.child.stdout?.once('data', () => resolve());
    void run.done.then((r) => reject(new Error(`poller exited early: ${r.stderr}`)));
  });
  return run;
}

describe('one rollout lock at a time for the whole process, with worker threads', () => {
  // Shared locks (the preview, verify) and exclusive ones (a freeze, on a copy of the store).
  for (const args of [
    ['build', '--json'],
    ['build', '--all', '--freeze', '--json'],
    ['verify-digests', '--json'],
  ]) {
    it(`${args.join(' ')} with a worker: /proc/locks never shows two of its rollout locks at once`, async () => {
      const freeze = args.includes('--freeze');
      const store = freeze ? mkdtempSync(join(tmpdir(), 'tokcap-worker-locks-freeze-')) : dir;
      if (freeze) cpSync(dir, store, { recursive: true });
      const stop = join(tmpdir(), `tokcap-poller-stop-${process.pid}-${args.length}`);
      rmSync(stop, { force: true });
      const poller = await startPoller(store, stop);
      const run = startTokcap([args[0], store, ...args.slice(1)], {
        env: { TOKCAP_WORKERS: '2', TOKCAP_DEBUG: '1' },
        timeoutMs: 120_000,
      });
      const result = await run.done;
      writeFileSync(stop, '');
      const polled = await poller.done;
      rmSync(stop, { force: true });
      if (freeze) rmSync(store, { recursive: true, force: true });
      expect(result.code, result.stderr).toBe(0);
      // A worker did start and compute rollouts.
      expect(result.stderr).toContain('1 worker thread(s) for 240 rollouts');
      const seen = JSON.parse(polled.stdout.trim().split('\n').pop()!) as {
        polls: number;
        seen: number;
        most: number;
        held: number;
        pids: string[];
        files: number;
      };
      expect(seen.files).toBe(240);
      // The poller did catch tokcap holding locks (else it proves nothing), and never two at once.
      expect(seen.seen).toBeGreaterThan(0);
      expect(seen.pids).toEqual([String(run.child.pid)]);
      expect(seen.held, JSON.stringify(seen)).toBeLessThanOrEqual(1);
    });
  }

  it('a lock python3 holds on two rollouts times out only those, with a worker computing', async () => {
    const ids = readdirSync(dir)
      .filter((n) => n.endsWith('.tokens.jsonl'))
      .map((n) => n.slice(0, -'.tokens.jsonl'.length))
      .sort();
    const held = [ids[0], ids[ids.length - 1]];
    const holders = await Promise.all(held.map((id) => holdLock(dir, id, 'ex', 3600)));
    try {
      const run = startTokcap(['build', dir, '--json', '--lock-wait', '1s'], {
        env: { TOKCAP_WORKERS: '2', TOKCAP_DEBUG: '1' },
        timeoutMs: 120_000,
      });
      const result = await run.done;
      expect(result.stderr).toContain('1 worker thread(s) for 240 rollouts');
      const rows = JSON.parse(result.stdout) as { rollout_id: string; error_kind?: string; verdict: string }[];
      expect(rows.map((r) => r.rollout_id)).toEqual(ids);
      const timedOut = rows.filter((r) => r.error_kind === 'lock_timeout').map((r) => r.rollout_id);
      expect(timedOut).toEqual(held);
      expect(rows.filter((r) => r.verdict === 'unavailable').map((r) => r.rollout_id)).toEqual(held);
      expect(result.code).toBe(3);
    } finally {
      for (const h of holders) h.child.kill('SIGKILL');
      await Promise.all(holders.map((h) => h.done));
    }
    // Nothing was created or left behind by the timed-out attempts.
    expect(statSync(join(dir, `${held[0]}.tokens.lock`)).size).toBe(0);
  });
});
