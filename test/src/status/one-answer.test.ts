/**
 * On a mixed store (`tokcap fixture --mix`, a few hundred rollouts) with
 * one rollout whose lock a real Python process holds, `inspect --json`, `build --json`,
 * `watch --once --json` and `export` (jsonl) give every rollout the same `status` and
 * `conditions`, build, watch and export the same verdict, and the text summaries print the same
 * counts. The held rollout is never trainable or masked: build and watch say `unavailable`,
 * export leaves it out and names it, and every command exits 3.
 *
 * The rule behind the one answer (src/status/rollout-status.ts): status and conditions are what
 * the summary reads, which needs no lock for a fully indexed rollout. So the held rollout keeps
 * its status (`live`) in every command and every form of `inspect` (summary, `--deep`, an id),
 * and what needs its records (entries line by line, the verdict, the digests) could not be read.
 * A held rollout whose summary needs the lock (an unindexed tail) is `unavailable` everywhere.
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
const HELD_TAIL = 'r015'; // a live rollout of the mix with a torn, unindexed tail (shape 7)
const WAIT = ['--lock-wait', '1s'];
const errorLine = (id: string) => `tokcap: ${id}: timed out after 1s waiting for the lock of rollout ${id}`;
const reason = (id: string) => `could not be read: timed out after 1s waiting for the lock of rollout ${id}`;
const lockTimeout = (id: string) => ({
  kind: 'lock_timeout',
  message: `timed out after 1s waiting for the lock of rollout ${id}`,
});
const stderrLines = (r: { stderr: string }) => r.stderr.split('\n').filter(Boolean);
type Facts = Record<string, unknown> & Answer;

interface Answer {
  status: string;
  conditions: string[];
  verdict?: string;
}

let dir: string;
let holder: SpawnRun | undefined;

beforeAll(async () => {
  dir = join(base, 'store');
  const made = await cli([
    'fixture',
    dir,
    '--rollouts',
    String(ROLLOUTS),
    '--calls',
    '3',
    '--prompt',
    '20',
    '--mix',
    '--seed',
    '14',
  ]);
  expect(made.code).toBe(0);
  holder = await holdLock(dir, HELD, 'ex', 3600);
});

afterAll(async () => {
  holder?.child.kill('SIGKILL');
  await holder?.done;
  rmSync(base, { recursive: true, force: true });
});

describe('one answer per rollout, in every command', () => {
  it('inspect, build, watch and export agree on status, conditions and verdict', async () => {
    const wait = ['--lock-wait', '1s'];
    const inspect = await cli(['inspect', dir, '--json', ...wait]);
    const build = await cli(['build', dir, '--json', ...wait]);
    const watch = await cli(['watch', dir, '--once', '--json', ...wait]);
    const out = `${temp()}.jsonl`;
    const exp = await cli(['export', dir, '--out', out, '--json', ...wait]);

    const byInspect = new Map<string, Answer>(
      Object.entries(JSON.parse(inspect.stdout).rollouts as Record<string, Answer>).map(([id, f]) => [
        id,
        { status: f.status, conditions: f.conditions },
      ]),
    );
    const byBuild = new Map<string, Answer>(
      (JSON.parse(build.stdout) as (Answer & { rollout_id: string })[]).map((r) => [
        r.rollout_id,
        { status: r.status, conditions: r.conditions, verdict: r.verdict },
      ]),
    );
    const byWatch = new Map<string, Answer>(
      Object.entries(JSON.parse(watch.stdout).rollouts as Record<string, Answer>).map(([id, r]) => [
        id,
        { status: r.status, conditions: r.conditions, verdict: r.verdict },
      ]),
    );
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Answer & { rollout_id: string });
    const byExport = new Map<string, Answer>(
      lines.map((r) => [r.rollout_id, { status: r.status, conditions: r.conditions, verdict: r.verdict }]),
    );

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
    expect(heldBuild).toMatchObject({
      rebuilt_response: null,
      mask_sample: true,
      error_kind: 'lock_timeout',
      metrics: { n_calls: 0 },
    });
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
    expect(statusLine).toMatch(
      new RegExp(`^${ROLLOUTS} rollouts {2}\\d+ live {2}\\d+ frozen {2}\\d+ retired {2}0 unavailable$`),
    );
    const conditionLine = inspect[2];
    expect(conditionLine).toMatch(/^conditions: \d+ dangling/);
    // build prints the same status and condition lines, then its verdicts.
    expect(build).toContain(statusLine);
    expect(build).toContain(conditionLine);
    const verdictLine = build.find((l) => l.startsWith('verdicts: '))!;
    const [, trainable, masked, unbuilt, unread] =
      /^verdicts: (\d+) trainable {2}(\d+) masked \((\d+) could not be built\) {2}(\d+) could not be read/.exec(
        verdictLine,
      )!;
    expect(unread).toBe('1');
    // The watch header: the same words and numbers.
    expect(watch).toContain(statusLine.replace(/^(\d+ rollouts)/, '$1'));
    expect(watch).toContain(
      `${trainable} trainable  ${masked} masked (${unbuilt} could not be built)  ${unread} could not be read`,
    );
    for (const c of conditionLine.slice('conditions: '.length).split('  ')) expect(watch).toContain(c);
    // export: the same verdict counts, the held rollout left out.
    expect(exp).toContain(
      `${trainable} trainable, ${masked} masked (${unbuilt} could not be built), 1 could not be read (left out)`,
    );
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
    for (const name of ['build', 'build --freeze'] as const)
      expect(runs[name].stdout.split('\n'), name).toContain(`  • ${reason}`);
    expect(runs['inspect --deep'].stdout.split('\n')).toContain(reason);
    expect(runs['verify-digests'].stdout).toContain(`1 rollout could not be read (not verified): ${HELD}`);
    expect(runs.export.stdout).toContain('1 could not be read (left out)');
    // The row of the watch view: its last column, cut to the width of the screen.
    // (after the mark column: `•` marks a row whose read ended after the first screen, as a held one does)
    const row = runs['watch --once'].stdout.split('\n').find((l) => l.slice(2).startsWith(`${HELD} `))!;
    expect(row).toMatch(/ could not be read: timed out/);
  }, 240_000);

  it("every form of inspect gives the held rollout the summary's status; what needs its records could not be read", async () => {
    const summaryJson = await cli(['inspect', dir, '--json', ...WAIT]);
    const deepJson = await cli(['inspect', dir, '--deep', '--json', ...WAIT]);
    const idJson = await cli(['inspect', dir, HELD, '--json', ...WAIT]);
    const summary = JSON.parse(summaryJson.stdout).rollouts as Record<string, Facts>;
    const deep = JSON.parse(deepJson.stdout).rollouts as Record<string, Facts>;

    // The summary needs no lock for it: its facts from the state index, nothing to report.
    expect(summary[HELD]).toMatchObject({ status: 'live', conditions: [], entries: 3, entries_source: 'index' });
    expect(summary[HELD]).not.toHaveProperty('error');
    expect(summaryJson.stderr).toBe('');
    expect(summaryJson.code).toBe(0);
    // --deep could not read its lines: the summary's facts, and why (the other rollouts were read line by line).
    expect(deep[HELD]).toEqual({ ...summary[HELD], error: lockTimeout(HELD) });
    for (const [id, f] of Object.entries(summary)) {
      expect({ status: deep[id].status, conditions: deep[id].conditions }, id).toEqual({
        status: f.status,
        conditions: f.conditions,
      });
      if (id !== HELD) expect(deep[id].entries_source, id).toBe(f.status === 'retired' ? f.entries_source : 'scan');
    }
    expect(JSON.parse(idJson.stdout).rollouts).toEqual({ [HELD]: deep[HELD] });
    for (const r of [deepJson, idJson]) {
      expect(stderrLines(r)).toEqual([errorLine(HELD)]);
      expect(r.code).toBe(3);
    }

    // The human forms: the same row and counts with or without --deep, and the same words.
    const summaryText = await cli(['inspect', dir, ...WAIT]);
    const deepText = await cli(['inspect', dir, '--deep', ...WAIT]);
    const idText = await cli(['inspect', dir, HELD, ...WAIT]);
    const rowOf = (out: string) =>
      out
        .split('\n')
        .find((l) => l.startsWith(`${HELD} `))!
        .replace(/\s*\S+$/, ''); // the age ticks, and its width with it (9s, 10s)
    expect(rowOf(summaryText.stdout)).toMatch(new RegExp(`^${HELD} +live +3 +0 +0 +3 `));
    expect(rowOf(deepText.stdout)).toBe(rowOf(summaryText.stdout));
    expect(deepText.stdout.split('\n').slice(0, 3)).toEqual(summaryText.stdout.split('\n').slice(0, 3));
    expect(deepText.stdout.split('\n')).toContain(
      '1 could not be read line by line: calls counted from the state index',
    );
    expect(summaryText.stdout).not.toContain('could not be read');
    const lines = idText.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^rollout ${HELD} live  v3  3 calls `));
    expect(lines[1]).toBe(reason(HELD));
    expect(lines).toContain(`  not checked: timed out after 1s waiting for the lock of rollout ${HELD}`);
    expect([summaryText.code, deepText.code, idText.code]).toEqual([0, 3, 3]);
    expect(stderrLines(summaryText)).toEqual([]);
    for (const r of [deepText, idText]) expect(stderrLines(r)).toEqual([errorLine(HELD)]);

    // verify-digests has no status: the held rollout is unchecked, never verified.
    const verify = await cli(['verify-digests', dir, HELD, 'r000', '--json', ...WAIT]);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      ok: false,
      unchecked: [HELD],
      errors: [{ rollout_id: HELD, error: lockTimeout(HELD) }],
    });
    expect(verify.code).toBe(3);
  }, 240_000);

  it('a held rollout whose summary needs its lock (an unindexed tail) is unavailable in every command, with the one error', async () => {
    const tail = await holdLock(dir, HELD_TAIL, 'ex', 3600);
    try {
      const unavailable = { status: 'unavailable', conditions: [] };
      const inspect = await cli(['inspect', dir, '--json', ...WAIT]);
      const deep = await cli(['inspect', dir, '--deep', '--json', ...WAIT]);
      const id = await cli(['inspect', dir, HELD_TAIL, '--json', ...WAIT]);
      for (const r of [inspect, deep, id]) {
        expect(JSON.parse(r.stdout).rollouts[HELD_TAIL]).toEqual({ ...unavailable, error: lockTimeout(HELD_TAIL) });
        expect(stderrLines(r)).toContain(errorLine(HELD_TAIL));
        expect(r.code).toBe(3);
      }
      const build = await cli(['build', dir, HELD_TAIL, '--json', ...WAIT]);
      expect(JSON.parse(build.stdout)[0]).toMatchObject({
        ...unavailable,
        verdict: 'unavailable',
        error_kind: 'lock_timeout',
      });
      const watch = await cli(['watch', dir, '--once', '--json', ...WAIT]);
      expect(JSON.parse(watch.stdout).rollouts[HELD_TAIL]).toMatchObject({
        ...unavailable,
        verdict: 'unavailable',
        error: lockTimeout(HELD_TAIL),
      });
      const out = `${temp()}.jsonl`;
      const exp = await cli(['export', dir, HELD_TAIL, 'r000', '--out', out, ...WAIT]);
      expect(
        readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).rollout_id),
      ).toEqual(['r000']);
      // One error line each, the one that was met: never a second wait's.
      for (const r of [build, exp]) expect(stderrLines(r)).toEqual([errorLine(HELD_TAIL)]);
      expect(stderrLines(watch)).toContain(errorLine(HELD_TAIL));
      for (const r of [build, watch, exp]) expect(r.code).toBe(3);
      const text = await cli(['inspect', dir, HELD_TAIL, ...WAIT]);
      expect(text.stdout.split('\n').slice(0, 2)).toEqual([`rollout ${HELD_TAIL} unavailable`, reason(HELD_TAIL)]);
    } finally {
      tail.child.kill('SIGKILL');
      await tail.done;
    }
  }, 240_000);
});
