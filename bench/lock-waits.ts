// How long lock waits take, against a real python3 holder (the tests check what happens, in
// order; the durations are measured here). Needs a build (npm run build).
//
//   npx tsx bench/lock-waits.ts [REPS]      default: 5 repetitions, medians printed
//
// - a wait of 300 ms against a held lock: when it ends, and how often a 10 ms timer ran meanwhile;
// - a single attempt (waitMs 0);
// - a wait ended by the holder's release, and one ended by an abort signal;
// - a Python writer appending to R while two loops of read-only commands read R: its wait for
//   the exclusive lock (a reader holds R only for a short copy, not across rendering).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rolloutPaths } from '../src/layout/file-names.js';
import { withRolloutLock } from '../src/lock/rollout-lock.js';
import { writerStore, writerUnderReaders } from '../test/support/writer-under-readers.js';

const REPS = Number(process.argv[2] ?? 5);

const HOLD_PY = `
import fcntl, sys
f = open(sys.argv[1], 'a+b')
fcntl.flock(f.fileno(), fcntl.LOCK_EX)
print('locked', flush=True)
sys.stdin.read()
`;

/** A python3 process holding `lock` exclusively until `release()` (its stdin closed). */
async function hold(lock: string): Promise<{ release: () => Promise<void> }> {
  const child = spawn('python3', ['-c', HOLD_PY, lock], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => b.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`holder exited ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    release: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const ms = (x: number) => `${x.toFixed(1)} ms`;

const root = mkdtempSync(join(tmpdir(), 'tokcap-lock-bench-'));
try {
  const lock = rolloutPaths(root, 'r0').lock;
  const timeout: number[] = [];
  const ticks: number[] = [];
  const once: number[] = [];
  const released: number[] = [];
  const aborted: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const holder = await hold(lock);
    let n = 0;
    const timer = setInterval(() => n++, 10);
    let t0 = performance.now();
    await withRolloutLock(lock, 'r0', 'exclusive', { waitMs: 300 }, () => 0).catch(() => 0);
    timeout.push(performance.now() - t0);
    clearInterval(timer);
    ticks.push(n);
    t0 = performance.now();
    await withRolloutLock(lock, 'r0', 'exclusive', { waitMs: 0 }, () => 0).catch(() => 0);
    once.push(performance.now() - t0);
    const ac = new AbortController();
    const waiting = withRolloutLock(lock, 'r0', 'exclusive', { waitMs: 60_000, signal: ac.signal }, () => 0);
    await new Promise((r) => setTimeout(r, 100));
    t0 = performance.now();
    ac.abort(new Error('stop'));
    await waiting.catch(() => 0);
    aborted.push(performance.now() - t0);
    let acquiredAt = 0;
    const after = withRolloutLock(lock, 'r0', 'exclusive', { waitMs: 60_000 }, () => (acquiredAt = performance.now()));
    await new Promise((r) => setTimeout(r, 100));
    t0 = performance.now();
    await holder.release();
    await after;
    released.push(acquiredAt - t0);
  }
  console.log(`lock waits, median of ${REPS}`);
  console.log(
    `  waitMs 300 against a held lock   ends after ${ms(median(timeout))}, 10 ms timer ran ${median(ticks)} times`,
  );
  console.log(`  waitMs 0 against a held lock     ends after ${ms(median(once))}`);
  console.log(`  holder exits -> lock taken       ${ms(median(released))} (backoff at most 25 ms)`);
  console.log(`  abort -> wait ended               ${ms(median(aborted))}`);

  const template = join(root, 'store');
  const w = await writerStore(template, join(root, 'log'));
  if (w.code !== 0) throw new Error(`py_store writer failed: ${w.stderr}`);
  const { figures, reads } = await writerUnderReaders(template, 'R', 2, 3 * REPS);
  if (!figures) throw new Error('the writer printed no figures');
  const s = (x: number) => `${(x * 1000).toFixed(1)} ms`;
  console.log(
    `python writer appending to R while 2 loops read it (${reads.length} reads, ${figures.calls.length} appends)`,
  );
  console.log(`  wait for LOCK_EX  p95 ${s(figures.wait_p95)}, max ${s(figures.wait_max)}`);
  console.log(`  append            p50 ${s(figures.append_p50)}, max ${s(figures.append_max)}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
