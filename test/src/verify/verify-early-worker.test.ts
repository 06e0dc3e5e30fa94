/**
 * verify-digests' worker started on its job at process start (src/threads/early-workers.ts,
 * commands/early-job.ts), with real worker threads from the compiled modules: the job adopts it
 * and the result is one thread's; a rollout a python3 process holds locked fails the same way; a
 * directory that changed after the worker listed it gives the changed directory's result.
 */
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import type * as VerifyDirectory from '../../../src/verify/verify-directory.js';
import type * as Early from '../../../src/threads/early-workers.js';
import type * as JobWorkers from '../../../src/threads/job-workers.js';
import { ROOT, ensureBuilt } from '../../support/cli.js';
import { holdLock } from '../../support/reliability.js';

let verifyDirectory: typeof VerifyDirectory.verifyDirectory;
let early: typeof Early;
let jobWorkers: typeof JobWorkers;
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  const load = async (...p: string[]) => (await import(pathToFileURL(join(ROOT, 'dist', 'src', ...p)).href)) as unknown;
  ({ verifyDirectory } = (await load('verify', 'verify-directory.js')) as typeof VerifyDirectory);
  early = (await load('threads', 'early-workers.js')) as typeof Early;
  jobWorkers = (await load('threads', 'job-workers.js')) as typeof JobWorkers;
  dir = mkdtempSync(join(tmpdir(), 'tokcap-verify-early-'));
  await generateStore({ dir }, { rollouts: 120, calls: 3, prompt: 40, gen: 8, turn: 10, seed: 11 });
  // Findings for the result to carry: a torn line, a stray line.
  appendFileSync(join(dir, 'r007.tokens.jsonl'), '{"torn');
  appendFileSync(join(dir, 'r090.tokens.jsonl'), '{"model_call_id":"x"}\n');
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a result says, errors as their kinds (their messages are the same either way). */
function said(r: VerifyDirectory.VerifyResult) {
  return { ...r, failed: r.failed.map((f) => ({ rolloutId: f.rolloutId, kind: f.error.kind })) };
}

/** Starts the worker on `store`'s plain job, as the command line does, and gives it time to work. */
async function startOnJob(store: { dir: string; lockWaitMs: number }): Promise<void> {
  early.startEarlyJob(jobWorkers.VERIFY_WORKER_URL, { shared: store, chunkSize: jobWorkers.VERIFY_CHUNK_SIZE }, 2);
  await sleep(1000);
}

describe('verify with its worker started on the job at once', () => {
  it("is adopted (a worker on a job too small for one otherwise) and gives one thread's result", async () => {
    const store = { dir, lockWaitMs: 10_000 };
    const alone = await verifyDirectory(store, { threads: { threads: 1 } });
    expect(alone.findings.length).toBeGreaterThan(0);
    await startOnJob(store);
    let workers = -1;
    const result = await verifyDirectory(store, { threads: { onWorkers: (n) => (workers = n) } });
    expect(workers).toBe(1);
    expect(said(result)).toEqual(said(alone));
  }, 60_000);

  it("a rollout python3 holds locked while the worker runs fails as in one thread, the others are verified", async () => {
    const store = { dir, lockWaitMs: 300 };
    const holder = await holdLock(dir, 'r050', 'ex', 60);
    try {
      const alone = await verifyDirectory(store, { threads: { threads: 1 } });
      expect(alone.failed.map((f) => [f.rolloutId, f.error.kind])).toEqual([['r050', 'lock_timeout']]);
      await startOnJob(store);
      let workers = -1;
      const result = await verifyDirectory(store, { threads: { onWorkers: (n) => (workers = n) } });
      expect(workers).toBe(1);
      expect(said(result)).toEqual(said(alone));
    } finally {
      holder.child.kill('SIGKILL');
      await holder.done;
    }
  }, 60_000);

  it('a directory that changed after the worker listed it: the result is that of the changed directory', async () => {
    const changed = mkdtempSync(join(tmpdir(), 'tokcap-verify-early-changed-'));
    try {
      cpSync(dir, changed, { recursive: true });
      const store = { dir: changed, lockWaitMs: 10_000 };
      await startOnJob(store);
      // A rollout more than the worker listed (once it has listed: the wait above).
      for (const name of readdirSync(changed).filter((n) => n.startsWith('r003.'))) cpSync(join(changed, name), join(changed, name.replace('r003', 'r003a')));
      const result = await verifyDirectory(store);
      const alone = await verifyDirectory(store, { threads: { threads: 1 } });
      expect(result.rollouts).toBe(121);
      expect(said(result)).toEqual(said(alone));
    } finally {
      rmSync(changed, { recursive: true, force: true });
    }
  }, 60_000);
});
