/**
 * `tokcap watch` in a real terminal (tmux) next to a real python3 process that holds one
 * rollout's lock (fcntl.flock) for a minute: the locked rollout waits in the background and says
 * so, every other row, the header and the keys stay live, a writer's change to another rollout
 * shows while the lock is held, and q or Ctrl-C end the process before the holder lets go.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { BIN, ROOT, cleanEnv, ensureViewBundle } from '../../support/cli.js';
import { holdLock, type SpawnRun } from '../../support/reliability.js';
import { requireTmux, rowOf, tmuxServer } from '../../support/tmux-pane.js';

const PY_STORE = path.join(ROOT, 'test', 'support', 'py_store.py');
const pane = tmuxServer(`tokcap-watch-locks-${process.pid}`);
const LOCKED = 'r1';
const OTHERS = ['r0', 'r2', 'r3', 'r4', 'r5'];

let work = '';
const holders: SpawnRun[] = [];

beforeAll(async () => {
  requireTmux();
  await ensureViewBundle();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-locks-'));
});

afterEach(async () => {
  pane.kill();
  for (const h of holders.splice(0)) {
    h.child.kill('SIGKILL');
    await h.done;
  }
});

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** A store of six rollouts, r1's lock held by python3 for a minute, and `watch` started on it. */
async function watchWithHeldLock(name: string, lockWait: string): Promise<{ dir: string; holder: SpawnRun }> {
  const dir = fs.mkdtempSync(path.join(work, 'store-'));
  await generateStore({ dir }, { rollouts: 6, calls: 3, prompt: 20, gen: 4, turn: 3 });
  const holder = await holdLock(dir, LOCKED, 'ex', 3600);
  holders.push(holder);
  const script = path.join(work, `${name}.sh`);
  fs.writeFileSync(
    script,
    `#!/bin/sh\nnode ${JSON.stringify(BIN)} watch --lock-wait ${lockWait} ${JSON.stringify(dir)}\necho "TOKCAP_EXIT=$?"\nsleep 60\n`,
    { mode: 0o755 },
  );
  pane.start(name, script, 120, 24);
  return { dir, holder };
}

const holding = (h: SpawnRun) => h.child.exitCode === null && h.child.signalCode === null;

describe('tokcap watch while python3 holds one rollout’s lock', () => {
  it('reads every other rollout, counts the wait, shows another writer’s change, and quits on q at once', async () => {
    const { dir, holder } = await watchWithHeldLock('held', '30s');
    const first = await pane.until('held', 'every other rollout read', (p) =>
      OTHERS.every((id) => /^[ ›][ •]r\d +live +3 /.test(rowOf(p, id))),
    );
    expect(rowOf(first, LOCKED)).toMatch(/ waiting for lock \(\d+s\)$/);
    // The header: the load is done, one rollout waits (not "reading", not "updating").
    await pane.until('held', 'the header up to date', (p) => /up to date, 1 waiting for lock$/m.test(p));
    // The wait is counted on screen.
    await pane.until('held', 'the wait counted', (p) => / waiting for lock \([1-9]\d*s\)$/.test(rowOf(p, LOCKED)));

    // A python writer's new intent on another rollout shows while the lock is still held.
    const begin = await execa('python3', [PY_STORE, dir, 'begin_call', 'r2', 'call-late'], {
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(begin.exitCode, begin.stderr).toBe(0);
    await pane.until('held', 'the new intent', (p) => /^[ ›]•r2 +live +3 +1 /.test(rowOf(p, 'r2')));

    // The locked rollout's detail says why it is not shown.
    pane.keys('held', '/', LOCKED, 'Enter', 'Enter');
    await pane.until('held', 'the detail waiting', (p) => p.includes(`rollout ${LOCKED}: reading… waiting for lock (`));
    pane.keys('held', 'Escape');
    await pane.until('held', 'the list again', (p) => p.includes('ROLLOUT'));

    pane.keys('held', 'q');
    const quit = await pane.until('held', 'the exit', (p) => p.includes('TOKCAP_EXIT='));
    expect(quit).toContain('TOKCAP_EXIT=0');
    expect(holding(holder)).toBe(true);
  });

  it('says the rollout could not be read once its wait runs out, in the list and its detail; Ctrl-C quits at once', async () => {
    const { holder } = await watchWithHeldLock('timeout', '1s');
    const reason = `could not be read: timed out after 1s waiting for the lock of rollout ${LOCKED}`;
    await pane.until('timeout', 'the failed wait', (p) => rowOf(p, LOCKED).includes(reason));
    pane.keys('timeout', '/', LOCKED, 'Enter', 'Enter');
    await pane.until(
      'timeout',
      'the reason in the detail',
      (p) => p.startsWith(`rollout ${LOCKED} `) && p.includes(reason),
    );
    pane.keys('timeout', 'C-c');
    await pane.until('timeout', 'the exit', (p) => p.includes('TOKCAP_EXIT='));
    expect(holding(holder)).toBe(true);
  });
});
