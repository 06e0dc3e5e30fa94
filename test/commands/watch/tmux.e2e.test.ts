/**
 * `tokcap watch` in a real terminal: the built binary runs inside a detached tmux session
 * (100x30, CI=false so that Ink renders as it does for a person), a python3 writer appends an
 * entry and a begin_call intent, and the pane must show the new call and the dangling intent
 * (how soon: bench/watch-live.mjs). Then Enter opens the rollout and q quits. The directory view and the rollout
 * view are compared with committed text snapshots (ages and the temporary path normalised).
 *
 * tmux is required: `.ci/run` installs it; without it this test fails with instructions.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeTokenDigest } from '../../../src/digest/token-digest.js';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { BIN, ROOT, cleanEnv, ensureViewBundle } from '../../support/cli.js';
import { requireTmux, rowOf, tmuxServer } from '../../support/tmux-pane.js';
import { listing } from '../../support/watch.js';

const PY_STORE = path.join(ROOT, 'test', 'support', 'py_store.py');
const pane = tmuxServer(`tokcap-watch-e2e-${process.pid}`);
const WIDTH = 100;
const HEIGHT = 30;

let dir = '';
let work = '';

/** Stable text of a pane: no trailing spaces, the temp dir as <DIR>, ages as <age>. */
function normalise(pane: string): string {
  return pane
    .split('\n')
    .map((l) =>
      l
        .trimEnd()
        .replaceAll(dir, '<DIR>')
        .replace(/^tokcap watch <DIR> +/, 'tokcap watch <DIR>  ')
        .replace(/ +\d+[smhd](?= |$)/g, ' <age>'),
    )
    .join('\n')
    .trimEnd();
}

beforeAll(async () => {
  requireTmux();
  await ensureViewBundle();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-e2e-'));
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-e2e-work-'));
  await generateStore({ dir }, { rollouts: 6, calls: 3, prompt: 20, gen: 4, turn: 3, mix: true });
  // No lock files: any the view created would show (only the writer may create r0's).
  for (const n of fs.readdirSync(dir)) if (n.endsWith('.tokens.lock')) fs.rmSync(path.join(dir, n));
});

afterAll(() => {
  pane.kill();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('tokcap watch in tmux', () => {
  it('shows a python writer’s new call and dangling intent, opens the rollout, quits', async () => {
    const before = listing(dir);
    const script = path.join(work, 'run.sh');
    // TOKCAP_TRACE: which build of the view was loaded (the bundle that npm test makes).
    const trace = path.join(work, 'trace.txt');
    fs.writeFileSync(
      script,
      `#!/bin/sh\nTOKCAP_TRACE=${JSON.stringify(trace)} node ${JSON.stringify(BIN)} watch ${JSON.stringify(dir)}\necho "TOKCAP_EXIT=$?"\nsleep 60\n`,
      { mode: 0o755 },
    );
    pane.start('watch', script, WIDTH, HEIGHT);

    const first = await pane.until(
      'watch',
      'the first full render',
      (p) => p.includes('up to date') && /^[ ›] r0 /m.test(p),
    );
    await expect(normalise(first) + '\n').toMatchFileSnapshot('__snapshots__/watch-directory.txt');
    expect(rowOf(first, 'r0')).toMatch(/^ {2}r0 +live +3 +0 +0 /); // the oldest: last
    expect(fs.readFileSync(trace, 'utf8')).toMatch(/ watch: ink and react loaded \(bundle\)$/m);

    // The python writer: call-003 continues r0's main chain, then call-004 is dispatched.
    const lines = fs.readFileSync(path.join(dir, 'r0.tokens.jsonl'), 'utf8').trimEnd().split('\n');
    const last = JSON.parse(lines.at(-1)!);
    const prompt = [...last.prompt_token_ids, ...last.generation_token_ids, 7, 8, 9];
    const gen = [11, 12, 13, 14];
    const next = {
      ...last,
      model_call_id: 'call-003',
      prompt_token_ids: prompt,
      generation_token_ids: gen,
      generation_log_probs: gen.map(() => -0.25),
      created_at: last.created_at + 1,
      parent_call_id: last.model_call_id,
      parent_resolution: 'resolved',
      cum_len: prompt.length + gen.length,
      digest: computeTokenDigest([...prompt, ...gen]),
    };
    const env = cleanEnv();
    const append = await execa('python3', [PY_STORE, dir, 'append', JSON.stringify(next)], {
      env,
      extendEnv: false,
      reject: false,
    });
    expect(append.exitCode, append.stderr).toBe(0);
    const begin = await execa('python3', [PY_STORE, dir, 'begin_call', 'r0', 'call-004'], {
      env,
      extendEnv: false,
      reject: false,
    });
    expect(begin.exitCode, begin.stderr).toBe(0);

    // 4 calls, 1 dangling intent, highlighted as just changed, now first (recent first).
    // (how soon is bench/watch-live.mjs's to measure)
    const seen = await pane.until('watch', 'the new call and the dangling intent', (p) =>
      /^[ ›]•r0 +live +4 +1 +0 /.test(rowOf(p, 'r0')),
    );
    expect(rowOf(seen, 'r0')).toMatch(/masked: dangling intents$/);
    expect(seen.split('\n')[5]).toMatch(/^[ ›]•r0 /);

    // Open it: the chain tree has the new call under call-002, the intent is listed as dangling.
    pane.keys('watch', 'g', 'Enter');
    const opened = await pane.until(
      'watch',
      'the rollout view',
      (p) => p.includes('build verdict') && p.includes('call-003'),
    );
    await expect(normalise(opened) + '\n').toMatchFileSnapshot('__snapshots__/watch-rollout.txt');
    // Status is one of live/frozen/retired/unavailable; a dangling intent is a condition.
    expect(opened).toMatch(/^rollout r0 live /m);
    expect(opened).toMatch(/^conditions: dangling$/m);
    expect(opened).toMatch(/^ {6}└─ call-003 {2}resolved {2}prompt \d+ full {2}gen 4 {2}digest ok {2}\[main\]$/m);
    expect(opened).toMatch(/^ {2}call-004 {2}intent without entry/m);

    // Esc back, q quits with exit 0.
    pane.keys('watch', 'Escape');
    await pane.until('watch', 'the directory view again', (p) => p.includes('ROLLOUT'));
    pane.keys('watch', 'q');
    const quit = await pane.until('watch', 'the exit', (p) => p.includes('TOKCAP_EXIT='));
    expect(quit).toContain('TOKCAP_EXIT=0');

    // Read-only: the only lock file is the one the python writer created; nothing else changed
    // except r0's files, which the writer wrote.
    const after = listing(dir);
    expect(Object.keys(after).filter((n) => n.endsWith('.lock'))).toEqual(['r0.tokens.lock']);
    const untouched = (l: Record<string, string>) =>
      Object.fromEntries(Object.entries(l).filter(([n]) => !n.startsWith('r0.')));
    expect(untouched(after)).toEqual(untouched(before));
  });
});
