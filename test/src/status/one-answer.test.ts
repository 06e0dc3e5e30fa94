/**
 * Issue 14, "done when": on a mixed store (`tokcap fixture --mix`, a few hundred rollouts) with
 * one rollout whose lock a real Python process holds, `inspect --json`, `build --json`,
 * `watch --once --json` and `export` (jsonl) give every rollout the same `status` and
 * `conditions`, build, watch and export the same verdict, and the text summaries print the same
 * counts. The held rollout is never trainable or masked: build and watch say `unavailable`,
 * export leaves it out and names it, and every command exits 3.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdLock, type SpawnRun } from '../../support/reliability.js';
import { cli } from '../../support/cli.js';

// One store for both tests (a temp dir of its own: per-test temp dirs are removed after each).
const base = mkdtempSync(join(tmpdir(), 'tokcap-one-answer-'));
let outputs = 0;
const temp = () => join(base, `out-${outputs++}`);
const ROLLOUTS = 240;
const HELD = 'r008'; // a clean, fully indexed rollout of the mix (shape 0)

interface Answer {
  status: string;
  conditions: string[];
  verdict?: string;
}

let dir: string;
let holder: SpawnRun | undefined;

beforeAll(async () => {
  dir = join(base, 'store');
  const made = await cli(['fixture', dir, '--rollouts', String(ROLLOUTS), '--calls', '3', '--prompt', '20', '--mix', '--seed', '14']);
  expect(made.code).toBe(0);
  holder = await holdLock(dir, HELD, 'ex', 120);
}, 120_000);

afterAll(async () => {
  holder?.child.kill('SIGKILL');
  await holder?.done;
  rmSync(base, { recursive: true, force: true });
});

describe('one answer per rollout, in every command (issue 14)', () => {
  it('inspect, build, watch and export agree on status, conditions and verdict', async () => {
    const wait = ['--lock-wait', '1s'];
    const inspect = await cli(['inspect', dir, '--json', ...wait]);
    const build = await cli(['build', dir, '--json', ...wait]);
    const watch = await cli(['watch', dir, '--once', '--json', ...wait]);
    const out = `${temp()}.jsonl`;
    const exp = await cli(['export', dir, '--out', out, '--json', ...wait]);

    const byInspect = new Map<string, Answer>(Object.entries(JSON.parse(inspect.stdout).rollouts as Record<string, Answer>).map(([id, f]) => [id, { status: f.status, conditions: f.conditions }]));
    const byBuild = new Map<string, Answer>((JSON.parse(build.stdout) as (Answer & { rollout_id: string })[]).map((r) => [r.rollout_id, { status: r.status, conditions: r.conditions, verdict: r.verdict }]));
    const byWatch = new Map<string, Answer>(Object.entries(JSON.parse(watch.stdout).rollouts as Record<string, Answer>).map(([id, r]) => [id, { status: r.status, conditions: r.conditions, verdict: r.verdict }]));
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Answer & { rollout_id: string });
    const byExport = new Map<string, Answer>(lines.map((r) => [r.rollout_id, { status: r.status, conditions: r.conditions, verdict: r.verdict }]));

    expect(byInspect.size).toBe(ROLLOUTS);
    expect([...byBuild.keys()]).toEqual([...byInspect.keys()]);
    expect([...byWatch.keys()]).toEqual([...byInspect.keys()]);
    // The held rollout is left out of the export, named on stderr; every other one is there.
    expect([...byExport.keys()]).toEqual([...byInspect.keys()].filter((id) => id !== HELD));
    expect(exp.stderr).toContain(`tokcap: ${HELD}: timed out after 1s waiting for the lock of rollout ${HELD}`);

    for (const [id, a] of byInspect) {
      expect(byBuild.get(id)!.status, id).toBe(a.status);
      expect(byBuild.get(id)!.conditions, id).toEqual(a.conditions);
      expect(byWatch.get(id)!.status, id).toBe(a.status);
      expect(byWatch.get(id)!.conditions, id).toEqual(a.conditions);
      expect(byWatch.get(id)!.verdict, id).toBe(byBuild.get(id)!.verdict);
      if (id !== HELD) expect(byExport.get(id), id).toEqual(byBuild.get(id));
    }
    // The mix covers every status but unavailable, and several conditions.
    const statuses = new Set([...byInspect.values()].map((a) => a.status));
    expect([...statuses].sort()).toEqual(['frozen', 'live', 'retired']);
    const conditions = new Set([...byInspect.values()].flatMap((a) => a.conditions));
    for (const c of ['dangling', 'incomplete', 'torn_tail']) expect(conditions).toContain(c);
    const verdicts = new Set([...byBuild.values()].map((a) => a.verdict));
    expect([...verdicts].sort()).toEqual(['masked', 'trainable', 'unavailable']);

    // The held rollout's facts come from its index (no lock needed), its build could not be read.
    expect(byBuild.get(HELD)).toEqual({ status: 'live', conditions: [], verdict: 'unavailable' });
    const heldBuild = (JSON.parse(build.stdout) as Record<string, unknown>[]).find((r) => r.rollout_id === HELD)!;
    expect(heldBuild).toMatchObject({ rebuilt_response: null, mask_sample: true, error_kind: 'lock_timeout', metrics: { n_calls: 0 } });
    expect(String(heldBuild.error)).toMatch(/^TimeoutError: timed out after 1s/);

    for (const r of [build, watch, exp]) expect(r.code).toBe(3);
    expect(inspect.code).toBe(0);
  }, 240_000);

  it('the text summaries print the same counts', async () => {
    const wait = ['--lock-wait', '1s'];
    const inspect = (await cli(['inspect', dir, ...wait])).stdout.split('\n');
    const build = (await cli(['build', dir, ...wait])).stdout.split('\n');
    const watch = (await cli(['watch', dir, '--once', ...wait])).stdout.split('\n').slice(1, 3).join('  ');
    const exp = (await cli(['export', dir, '--out', `${temp()}.jsonl`, ...wait])).stdout;

    const statusLine = inspect[1];
    expect(statusLine).toMatch(new RegExp(`^${ROLLOUTS} rollouts {2}\\d+ live {2}\\d+ frozen {2}\\d+ retired {2}0 unavailable$`));
    const conditionLine = inspect[2];
    expect(conditionLine).toMatch(/^conditions: \d+ dangling/);
    // build prints the same status and condition lines, then its verdicts.
    expect(build).toContain(statusLine);
    expect(build).toContain(conditionLine);
    const verdictLine = build.find((l) => l.startsWith('verdicts: '))!;
    const [, trainable, masked, unbuilt, unread] = /^verdicts: (\d+) trainable {2}(\d+) masked \((\d+) could not be built\) {2}(\d+) could not be read/.exec(verdictLine)!;
    expect(unread).toBe('1');
    // The watch header: the same words and numbers.
    expect(watch).toContain(statusLine.replace(/^(\d+ rollouts)/, '$1'));
    expect(watch).toContain(`${trainable} trainable  ${masked} masked (${unbuilt} could not be built)  ${unread} could not be read`);
    for (const c of conditionLine.slice('conditions: '.length).split('  ')) expect(watch).toContain(c);
    // export: the same verdict counts, the held rollout left out.
    expect(exp).toContain(`${trainable} trainable, ${masked} masked (${unbuilt} could not be built), 1 could not be read (left out)`);
  }, 240_000);

  it('the held rollout is said in the same words by every command, never with a Python class', async () => {
    const wait = ['--lock-wait', '1s'];
    const errorLine = `tokcap: ${HELD}: timed out after 1s waiting for the lock of rollout ${HELD}`;
    const reason = `could not be read: timed out after 1s waiting for the lock of rollout ${HELD}`;
    const runs = {
      build: await cli(['build', dir, HELD, ...wait]),
      'build --freeze': await cli(['build', dir, HELD, '--freeze', ...wait]),
      'inspect --deep': await cli(['inspect', dir, HELD, '--deep', ...wait]),
      'verify-digests': await cli(['verify-digests', dir, HELD, ...wait]),
      export: await cli(['export', dir, HELD, '--out', `${temp()}.jsonl`, ...wait]),
      'watch --once': await cli(['watch', dir, '--once', ...wait]),
    };
    for (const [name, r] of Object.entries(runs)) {
      expect(r.stderr.split('\n').filter(Boolean), name).toEqual([errorLine]);
      expect(r.code, name).toBe(3);
      expect(r.stdout, name).not.toMatch(/TimeoutError|the build failed/);
    }
    for (const name of ['build', 'build --freeze'] as const) expect(runs[name].stdout.split('\n'), name).toContain(`  • ${reason}`);
    expect(runs['inspect --deep'].stdout.split('\n')).toContain(reason);
    expect(runs['verify-digests'].stdout).toContain(`1 rollout could not be read (not verified): ${HELD}`);
    expect(runs.export.stdout).toContain('1 could not be read (left out)');
    // The row of the watch view: its last column, cut to the width of the screen.
    const row = runs['watch --once'].stdout.split('\n').find((l) => l.trimStart().startsWith(`${HELD} `))!;
    expect(row).toMatch(/ could not be read: timed out/);
  }, 240_000);
});
