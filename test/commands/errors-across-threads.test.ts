/**
 * An error met in a worker thread (a build's or a watch read's verdict, a row, a reply) reaches
 * the human line with its facts (kind, errno code, syscall, path): the line is in words ("could
 * not be read: <file>: permission denied"), the JSON keeps the contract's kind and message
 * (Node's text; in `build --json` the reference's "OSError: ..." string). Real processes on a real
 * store: files made unreadable (chmod 000, run as uid 65534 when the tests run as root) and a
 * lock held by python3.
 */
import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { ensureBuilt } from '../support/cli-binary.js';
import { holdLock, tempBase, tokcap, type RunOptions } from '../support/reliability.js';

const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
// Two chunks of 256 (src/threads/parallel-rollouts.ts): with two threads, one is a worker's.
const N = 300;
const UNREADABLE = ['r000', 'r299'];

let base: string;
let store: string;
const runAs: RunOptions = IS_ROOT ? { uid: NOBODY, gid: NOBODY, env: { HOME: '/tmp' } } : {};
const threads = (env: Record<string, string> = {}): RunOptions => ({
  ...runAs,
  env: { ...runAs.env, TOKCAP_WORKERS: '2', ...env },
  timeoutMs: 120_000,
});
const stateFile = (id: string) => join(store, `${id}.tokens.state.json`);
const nodeText = (id: string) => `EACCES: permission denied, open '${stateFile(id)}'`;
const words = (id: string) => `${stateFile(id)}: permission denied`;

beforeAll(async () => {
  ensureBuilt();
  base = tempBase('errors-threads');
  store = join(base, 'store');
  await generateStore({ dir: store }, { rollouts: N, calls: 2, prompt: 20, gen: 8, turn: 8, seed: 15, fast: true });
  for (const id of UNREADABLE) chmodSync(stateFile(id), 0o000);
  if (IS_ROOT) {
    chmodSync(base, 0o755);
    chmodSync(store, 0o777);
  }
}, 180_000);

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe(`an unreadable file met by a worker${IS_ROOT ? ' (as uid 65534)' : ''}`, () => {
  it('build: the error line and the explanation in words; the JSON keeps the reference string', async () => {
    const human = await tokcap(['build', store], threads());
    expect(human.code).toBe(3);
    for (const id of UNREADABLE) {
      expect(human.stderr).toContain(`tokcap: ${id}: ${words(id)}\n`);
      expect(human.stdout).toContain(`could not be read: ${words(id)}\n`);
    }
    expect(human.stdout + human.stderr).not.toContain('EACCES');
    const json = await tokcap(['build', store, '--json'], threads());
    const results = JSON.parse(json.stdout) as { rollout_id: string; error?: string }[];
    for (const id of UNREADABLE)
      expect(results.find((r) => r.rollout_id === id)?.error).toBe(`OSError: ${nodeText(id)}`);
    expect(json.stderr).toContain(`tokcap: ${UNREADABLE[1]}: ${words(UNREADABLE[1])}\n`);
  }, 180_000);

  it("verify-digests, inspect and watch --once: the same words; inspect --json keeps Node's text", async () => {
    const verify = await tokcap(['verify-digests', store], threads());
    for (const id of UNREADABLE) expect(verify.stderr).toContain(`tokcap: ${id}: ${words(id)}\n`);
    const inspect = await tokcap(['inspect', store, '--json'], threads());
    const doc = JSON.parse(inspect.stdout) as { rollouts: Record<string, { error?: unknown }> };
    for (const id of UNREADABLE) {
      expect(doc.rollouts[id].error).toEqual({ kind: 'io', message: nodeText(id) });
      expect(inspect.stderr).toContain(`tokcap: ${id}: ${words(id)}\n`);
    }
    const watch = await tokcap(['watch', store, '--once'], threads());
    for (const id of UNREADABLE) {
      expect(watch.stderr).toContain(`tokcap: ${id}: ${words(id)}\n`);
      expect(watch.stdout).toMatch(new RegExp(`\\b${id} .* could not be read: `));
    }
    expect(watch.stdout + watch.stderr).not.toContain('EACCES');
  }, 180_000);
});

describe('a lock held by another process (python3)', () => {
  it('build: "timed out after 1s waiting for the lock", never the Python class of the JSON string', async () => {
    const holder = await holdLock(store, 'r150', 'ex', 3600);
    try {
      const human = await tokcap(['build', store, 'r150', 'r151', '--lock-wait', '1s'], {
        ...threads(),
        uid: undefined,
        gid: undefined,
      });
      expect(human.stderr).toContain('tokcap: r150: timed out after 1s waiting for the lock of rollout r150\n');
      expect(human.stdout).toContain('could not be read: timed out after 1s waiting for the lock of rollout r150\n');
      expect(human.stdout).not.toContain('TimeoutError');
      const json = await tokcap(['build', store, 'r150', '--lock-wait', '1s', '--json'], {
        ...threads(),
        uid: undefined,
        gid: undefined,
      });
      expect((JSON.parse(json.stdout) as { error?: string }[])[0].error).toBe(
        'TimeoutError: timed out after 1s waiting for the lock of rollout r150',
      );
    } finally {
      holder.child.kill();
      await holder.done;
    }
  }, 180_000);
});
