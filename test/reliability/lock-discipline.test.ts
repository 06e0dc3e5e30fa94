/**
 * Suite 4 — lock discipline, with real Python flock holders (py_store.py `hold`):
 *  - while a Python process holds rollout R's lock exclusively (until the commands have ended),
 *    every mutating command of the BUILT BINARY given R among other rollouts gives up on R after
 *    --lock-wait (0.3 s), fails for R with lock_timeout (exit 3, inline error and/or one stderr
 *    line naming R) and still finishes the others;
 *  - read-only commands report R as busy instead of waiting for the holder, and read R after a
 *    short shared lock when the holder is only a reader (LOCK_SH);
 *  - a Python writer keeps appending to R while read-only commands loop on it: every append and
 *    every read succeeds. How long the writer waits for its lock meanwhile is a measurement:
 *    bench/lock-waits.ts.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/cli-binary.js';
import {
  holdLock,
  jsonlCallIds,
  parseJsonOut,
  readStateFile,
  sized,
  stderrProblems,
  tempBase,
  tokcap,
  filesOf,
} from '../support/reliability.js';
import { writerStore, writerUnderReaders } from '../support/writer-under-readers.js';

/** The holders let go when killed, after the commands ended: a command that waited for one never ends. */
const HOLD_S = 600;
const WAIT = '0.3s';
let template: string;
let base: string;

beforeAll(async () => {
  ensureBuilt();
  base = tempBase('locks');
  template = join(base, 'template');
  const w = await writerStore(template, join(base, 'log'));
  expect(w.code, w.stderr).toBe(0);
});

let n = 0;
function freshStore(): string {
  const dir = join(base, `store-${n++}`);
  cpSync(template, dir, { recursive: true });
  return dir;
}

interface Inline {
  rollout_id: string;
  error?: { kind: string; message: string } | string;
  dropped?: boolean;
}

describe('reliability: lock discipline against a Python lock holder', () => {
  it('mutating commands give up on a busy rollout after --lock-wait, fail for it only, finish the others', async () => {
    const problems: string[] = [];
    const cases: {
      label: string;
      prepare?: (dir: string) => Promise<string[]>;
      args: (dir: string, extra: string[]) => string[];
    }[] = [
      { label: 'freeze --json', args: (d) => ['freeze', d, 'A', 'R', 'B', '--json'] },
      { label: 'freeze (human)', args: (d) => ['freeze', d, 'A', 'R', 'B'] },
      { label: 'build --freeze', args: (d) => ['build', d, 'A', 'R', 'B', '--freeze', '--json'] },
      {
        label: 'export --freeze',
        args: (d) => [
          'export',
          d,
          'A',
          'R',
          'B',
          '--freeze',
          '--out',
          join(d, '..', `${d.split('/').pop()}.jsonl`),
          '--json',
        ],
      },
      { label: 'retire', args: (d) => ['retire', d, 'A', 'R', 'B', '--json'] },
      { label: 'delete', args: (d) => ['delete', d, 'A', 'R', 'B', '--json'] },
      {
        label: 'drop',
        prepare: async (d) => {
          const f = parseJsonOut<{ snapshot_id: string; version: number }[]>(
            await tokcap(['freeze', d, 'R', '--json']),
          )!;
          return ['--snapshot-id', f[0].snapshot_id, '--version', String(f[0].version)];
        },
        args: (d, extra) => ['retire', d, 'R', ...extra, '--json'],
      },
      {
        label: 'sweep',
        prepare: async (d) => {
          expect((await tokcap(['retire', d, 'A', 'R', '--json'])).code).toBe(0);
          return [];
        },
        args: (d) => ['sweep', d, '--older-than', '0s', '--json'],
      },
    ];
    await Promise.all(
      cases.map(async (c) => {
        const dir = freshStore();
        const extra = c.prepare ? await c.prepare(dir) : [];
        const holder = await holdLock(dir, 'R', 'ex', HOLD_S);
        const res = await tokcap([...c.args(dir, extra), '--lock-wait', WAIT], { timeoutMs: 120_000 });
        const heldUntilEnd = (holder.child.exitCode ?? null) === null;
        holder.child.kill('SIGKILL');
        await holder.done;
        const label = c.label;
        if (!heldUntilEnd) problems.push(`${label}: the lock holder ended before the command did`);
        if (res.code !== 3) problems.push(`${label}: exit ${res.code}, expected 3: ${res.stderr.trim()}`);
        for (const p of stderrProblems(res.stderr)) problems.push(`${label}: ${p}`);
        const json = parseJsonOut<unknown>(res);
        const mentionsR = /timed out after 300ms waiting for the lock of rollout R\b/;
        const inJson = JSON.stringify(json ?? null);
        if (!mentionsR.test(res.stderr) && !mentionsR.test(inJson))
          problems.push(`${label}: no lock_timeout naming R: ${res.stderr.trim()} ${inJson.slice(0, 300)}`);
        if (/\bjson\b/.test(c.args(dir, extra).join(' ')) && json === undefined)
          problems.push(`${label}: --json printed no JSON`);
        if (res.stderr.trim() !== '' && !res.stderr.split('\n').some((l) => l.startsWith('tokcap: R: '))) {
          problems.push(`${label}: no stderr line names R first: ${res.stderr.trim()}`);
        }
        // The others were processed.
        if (label.startsWith('freeze') || label === 'build --freeze' || label === 'export --freeze') {
          for (const id of ['A', 'B'])
            if (!readStateFile(dir, id)?.frozen) problems.push(`${label}: ${id} was not frozen`);
          if (readStateFile(dir, 'R')?.frozen) problems.push(`${label}: R was frozen under a foreign lock`);
          if (Array.isArray(json) && label !== 'build --freeze') {
            const r = (json as Inline[]).find((e) => e.rollout_id === 'R');
            if (!r || typeof r.error !== 'object' || r.error.kind !== 'lock_timeout')
              problems.push(`${label}: R's element is not a lock_timeout error: ${JSON.stringify(r)}`);
          }
        }
        if (label === 'retire') {
          for (const id of ['A', 'B'])
            if (!readStateFile(dir, id)?.retired || filesOf(dir, id).j) problems.push(`retire: ${id} not retired`);
          if (readStateFile(dir, 'R')?.retired || !filesOf(dir, 'R').j)
            problems.push('retire: R changed under a foreign lock');
        }
        if (label === 'delete') {
          for (const id of ['A', 'B'])
            if (filesOf(dir, id).s || filesOf(dir, id).j) problems.push(`delete: ${id} not deleted`);
          if (!filesOf(dir, 'R').j || !filesOf(dir, 'R').s) problems.push('delete: R changed under a foreign lock');
        }
        if (label === 'drop' && readStateFile(dir, 'R')?.retired) problems.push('drop: R dropped under a foreign lock');
        if (label === 'sweep') {
          if (filesOf(dir, 'A').s) problems.push('sweep: A was not swept');
          if (!filesOf(dir, 'R').s) problems.push('sweep: R was swept under a foreign lock');
        }
      }),
    );
    expect(problems).toEqual([]);
  }, 300_000);

  it('read-only commands report an exclusively locked rollout as busy, and read a shared-locked one', async () => {
    const problems: string[] = [];
    const dir = freshStore();
    const readOnly = (d: string): { label: string; args: string[] }[] => [
      { label: 'inspect', args: ['inspect', d] },
      { label: 'inspect --deep --json', args: ['inspect', d, '--deep', '--json'] },
      { label: 'verify-digests --json', args: ['verify-digests', d, '--json'] },
      { label: 'build preview', args: ['build', d, '--json'] },
      {
        label: 'export preview',
        args: ['export', d, '--out', join(d, '..', `ro-${Math.random().toString(36).slice(2)}.jsonl`), '--json'],
      },
    ];
    for (const mode of ['ex', 'sh'] as const) {
      const holder = await holdLock(dir, 'R', mode, HOLD_S);
      const results = await Promise.all(
        readOnly(dir).map(async (c) => ({
          c,
          res: await tokcap([...c.args, '--lock-wait', WAIT], { timeoutMs: 120_000 }),
        })),
      );
      const stillHeld = holder.child.exitCode === null;
      holder.child.kill('SIGKILL');
      await holder.done;
      if (!stillHeld) problems.push(`${mode}: the holder released before the readers ended: they waited for it`);
      for (const { c, res } of results) {
        const label = `${mode}: ${c.label}`;
        for (const p of stderrProblems(res.stderr)) problems.push(`${label}: ${p}`);
        if (res.code === null || res.code > 3) problems.push(`${label}: exit ${res.code}`);
        const all = res.stdout + res.stderr;
        if (mode === 'ex') {
          // The inspect summary of a fully indexed rollout needs no lock (its indexed prefix never
          // changes), so it may describe R from its index instead of reporting it busy.
          const lockFree = c.label === 'inspect' && /^R +live +\d+/m.test(res.stdout);
          if (!lockFree && !/\bR\b[^\n]*(timed out|busy|lock)/.test(all) && !/lock of rollout R\b/.test(all))
            problems.push(`${label}: R not reported as busy: ${all.slice(0, 300)}`);
        } else {
          if (res.code !== 0)
            problems.push(`${label}: exit ${res.code} with only a shared holder: ${res.stderr.trim().slice(0, 300)}`);
          if (/timed out/.test(all)) problems.push(`${label}: timed out against a shared holder`);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 300_000);

  it('a Python writer keeps appending while read-only commands loop on its rollout', async () => {
    const dir = freshStore();
    const { writer, figures, reads } = await writerUnderReaders(dir, 'R', 2, sized(3, 30));
    expect(writer.code, writer.stderr).toBe(0);
    for (const r of reads) expect(r.code, `${r.stderr} ${r.stdout.slice(0, 300)}`).toBe(0);
    expect(reads).toHaveLength(2 * sized(3, 30));
    // Every append acknowledged to the writer is in J.
    const inJ = new Set(jsonlCallIds(dir, 'R'));
    expect(figures?.calls.filter((c) => !inJ.has(c))).toEqual([]);
  }, 300_000);
});
