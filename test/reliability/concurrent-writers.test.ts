/**
 * Suite 1 — concurrent writers. Four stdlib Python writers (test/support/py_store.py
 * `writer` mode: flock, append + fsync, state write, begin_call, mark_incomplete after a refused
 * append) share 50 rollouts for a fixed time while three loops run the BUILT BINARY
 * (bin/tokcap.js, one process per action, for realism) on random rollouts: freeze, build
 * --freeze, conditional retire (drop), retire, delete, sweep --older-than 0s, plus read-only
 * inspect/verify-digests. Every action is recorded with its wall-clock start/end and its --json
 * result; every acknowledged append is in the writers' logs (written after the append returned).
 *
 * Afterwards the invariants of the issue are checked:
 *  A. an entry acknowledged before a freeze started is in that freeze's snapshot, unless a
 *     removal (delete, retire, drop, sweep) of the rollout overlapped the interval in between;
 *  B. an entry acknowledged after a freeze was reported is in that snapshot (it was appended
 *     before the freeze and only logged late), unless a delete/sweep removed the fence between;
 *  C. at the end, a frozen, unretired rollout's J holds exactly the calls of every snapshot that
 *     reported its snapshot id (freeze: the call ids; build --freeze: n_calls): nothing was
 *     appended after any freeze;
 *  D. every entry acknowledged after the last removal of its rollout is in the final J;
 *  E. every state file parses and never indexes past J;
 *  F. verify-digests finds no error on any rollout that is not retired (a writer continuing a
 *     chain across a delete legitimately writes a delta child of a vanished parent: that finding
 *     is allowed on rollouts deleted or swept during the run);
 *  G. the writers hit no unexpected error, and every tokcap action exits 0/1/3 with one-line
 *     errors of the expected kinds only.
 * CI: at least 20 s, and until each loop ran 10 actions, a freeze succeeded and the writers
 * acknowledged 100 appends (a loaded machine takes longer, never does less). Torture
 * (TOKCAP_TORTURE=1): 10 minutes.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/cli-binary.js';
import {
  type Ack,
  type Spawned,
  fileSize,
  jsonlCallIds,
  parseJsonOut,
  pick,
  pictureTree,
  presentRollouts,
  readAcks,
  readStateFile,
  sampleDistinct,
  seededRng,
  sized,
  startProcess,
  stderrProblems,
  tempBase,
  tokcap,
  PY_STORE,
} from '../support/reliability.js';

const SECONDS = sized(20, 600);
const WRITERS = 4;
const ROLLOUTS = 50;
const LOOPS = 3;
const SEED = Number(process.env.TOKCAP_SEED ?? Date.now() % 100000);
const ACTIONS_PER_LOOP = 10;
const MIN_ACKS = 100;

type Kind = 'freeze' | 'build' | 'drop' | 'retire' | 'delete' | 'sweep' | 'inspect' | 'verify';

interface Action {
  kind: Kind;
  ids: string[];
  args: string[];
  res: Spawned;
  json: unknown;
}

interface FreezeOk {
  rollout_id: string;
  entries: number;
  entry_call_ids: string[];
  snapshot_id: string;
  version: number;
}

interface InlineError {
  rollout_id: string;
  error: { kind: string; message: string };
}

interface Removal {
  kind: Kind;
  start: number;
  end: number;
  /** Removes the state file too (delete, sweep): a fresh capture may start after it. */
  removesState: boolean;
}

describe('reliability: concurrent writers and tokcap actions', () => {
  it(
    `keeps every acknowledged entry and every freeze (at least ${SECONDS}s, seed ${SEED})`,
    async () => {
      ensureBuilt();
      const base = tempBase('concurrent');
      const dir = join(base, 'store');
      const outside = join(base, 'outside');
      mkdirSync(dir);
      mkdirSync(outside);
      const outsideBefore = pictureTree(outside);
      const rollouts = Array.from({ length: ROLLOUTS }, (_, i) => `r${String(i).padStart(2, '0')}`);
      const rng = seededRng(SEED);
      const stop = join(base, 'stop');

      const writers = Array.from({ length: WRITERS }, (_, w) =>
        startProcess(
          'python3',
          [
            PY_STORE,
            dir,
            'writer',
            '--rollouts',
            rollouts.join(','),
            '--seconds',
            String(SECONDS + 3600),
            '--until',
            stop,
            '--seed',
            String(SEED * 10 + w),
            '--log',
            join(base, `writer-${w}.log`),
            '--gen-ms',
            '4',
          ],
          { timeoutMs: (SECONDS + 3600) * 1000 },
        ),
      );
      const deadline = Date.now() + SECONDS * 1000;
      // Complete lines only: a writer may be in the middle of one.
      const acknowledged = () => {
        let n = 0;
        for (let w = 0; w < WRITERS; w++) {
          const log = join(base, `writer-${w}.log`);
          if (existsSync(log)) n += readFileSync(log, 'utf8').split('\n').length - 1;
        }
        return n;
      };
      let frozen = 0;
      // Enough happened: the time, each loop's actions, a successful freeze, the writers' appends.
      const enough = (done: number) =>
        Date.now() >= deadline && done >= ACTIONS_PER_LOOP && frozen > 0 && acknowledged() >= MIN_ACKS;
      const actions: Action[] = [];
      const snapshots: { rollout: string; sid: string; version: number }[] = [];

      const act = async (kind: Kind, ids: string[], args: string[]) => {
        const res = await tokcap(args, { timeoutMs: 300_000 });
        const json = parseJsonOut<unknown>(res);
        actions.push({ kind, ids, args, res, json });
        if (kind === 'freeze' && Array.isArray(json)) {
          for (const el of json as (FreezeOk | InlineError)[]) {
            if ('error' in el) continue;
            frozen++;
            snapshots.push({ rollout: el.rollout_id, sid: el.snapshot_id, version: el.version });
          }
        }
        if (kind === 'build' && Array.isArray(json)) {
          for (const el of json as {
            rollout_id: string;
            _capture_snapshot?: { snapshot_id: string; version: number };
          }[]) {
            if (el._capture_snapshot)
              snapshots.push({
                rollout: el.rollout_id,
                sid: el._capture_snapshot.snapshot_id,
                version: el._capture_snapshot.version,
              });
          }
        }
      };

      const loop = async () => {
        // Let the writers create some rollouts first. Not a fixed pause: under load Python's start
        // can take longer, and an inspect or verify of a store with no capture file yet rightly
        // exits 3 (docs/cli.md#unavailable), which would read as a failure of the action.
        while (readdirSync(dir).filter((n) => n.endsWith('.tokens.jsonl')).length < 5) {
          await new Promise((r) => setTimeout(r, 50));
        }
        for (let done = 0; !enough(done); done++) {
          const u = rng();
          const common = ['--json', '--lock-wait', '60s'];
          if (u < 0.3) {
            const ids = sampleDistinct(rng, rollouts, 1 + Math.floor(rng() * 3));
            await act('freeze', ids, ['freeze', dir, ...ids, ...common]);
          } else if (u < 0.42) {
            const id = pick(rng, rollouts);
            await act('build', [id], ['build', dir, id, '--freeze', ...common]);
          } else if (u < 0.57) {
            // Conditional drop of a snapshot seen earlier (the latest one or a stale one).
            if (snapshots.length === 0) continue;
            const s =
              rng() < 0.7
                ? snapshots[snapshots.length - 1 - Math.floor(rng() * Math.min(3, snapshots.length))]
                : pick(rng, snapshots);
            await act(
              'drop',
              [s.rollout],
              ['retire', dir, s.rollout, '--snapshot-id', s.sid, '--version', String(s.version), ...common],
            );
          } else if (u < 0.65) {
            const ids = sampleDistinct(rng, rollouts, 1 + Math.floor(rng() * 2));
            await act('retire', ids, ['retire', dir, ...ids, ...common]);
          } else if (u < 0.8) {
            const id = pick(rng, rollouts);
            await act('delete', [id], ['delete', dir, id, ...common]);
          } else if (u < 0.9) {
            await act('sweep', [], ['sweep', dir, '--older-than', '0s', ...common]);
          } else if (u < 0.95) {
            await act('inspect', [], ['inspect', dir, ...common]);
          } else {
            await act('verify', [], ['verify-digests', dir, ...common]);
          }
        }
      };

      await Promise.all(Array.from({ length: LOOPS }, () => loop()));
      writeFileSync(stop, '');
      const writerResults = await Promise.all(writers.map((w) => w.done));

      const problems: string[] = [];

      // G. Writers: clean exits, no unexpected errors.
      const summaries = writerResults.map((r, i) => {
        if (r.code !== 0 || r.timedOut)
          problems.push(`writer ${i} exited ${r.code} ${r.signal ?? ''}: ${r.stderr.slice(0, 500)}`);
        try {
          return JSON.parse(r.stdout) as Record<string, unknown>;
        } catch {
          problems.push(`writer ${i} printed no summary: ${r.stdout.slice(0, 200)}`);
          return {};
        }
      });
      for (const [i, s] of summaries.entries()) {
        if (s.errors !== 0)
          problems.push(`writer ${i}: ${String(s.errors)} unexpected errors, first: ${String(s.first_error)}`);
      }

      // G. tokcap actions: exit codes, one-line errors, expected error kinds.
      const allowedKinds: Record<Kind, string[]> = {
        freeze: ['retired'],
        build: [],
        drop: [],
        retire: [],
        delete: [],
        sweep: [],
        inspect: [],
        verify: [],
      };
      for (const a of actions) {
        const label = `${a.args.slice(0, 1).join(' ')} ${a.ids.join(',')} @${a.res.start.toFixed(3)}`;
        if (a.res.timedOut || a.res.code === null) {
          problems.push(`${label}: did not finish (${a.res.signal})`);
          continue;
        }
        for (const p of stderrProblems(a.res.stderr)) problems.push(`${label}: ${p}`);
        // freeze/build --freeze exit 3 for a retired rollout (checked below: the only error allowed).
        const okCodes =
          a.kind === 'drop' || a.kind === 'verify' ? [0, 1] : a.kind === 'freeze' || a.kind === 'build' ? [0, 3] : [0];
        if (!okCodes.includes(a.res.code))
          problems.push(`${label}: exit ${a.res.code}: ${a.res.stderr.trim().slice(0, 400)}`);
        if (a.json === undefined) problems.push(`${label}: stdout is not JSON: ${a.res.stdout.slice(0, 200)}`);
        if (Array.isArray(a.json)) {
          for (const el of a.json as InlineError[]) {
            if (el && typeof el.error === 'object' && !allowedKinds[a.kind].includes(el.error.kind)) {
              problems.push(`${label}: ${el.rollout_id}: unexpected ${el.error.kind}: ${el.error.message}`);
            }
          }
        }
        if (a.kind === 'build' && Array.isArray(a.json)) {
          for (const el of a.json as { rollout_id: string; error?: string }[]) {
            if (
              typeof el.error === 'string' &&
              !/is retired/.test(el.error) &&
              !/no safe trainable chain|no token records|no trainable/.test(el.error)
            ) {
              problems.push(`${label}: ${el.rollout_id}: build failed: ${el.error}`);
            }
          }
        }
      }

      // Removals per rollout (intervals).
      const removals = new Map<string, Removal[]>();
      const addRemoval = (id: string, a: Action, removesState: boolean) => {
        const list = removals.get(id) ?? [];
        list.push({ kind: a.kind, start: a.res.start, end: a.res.end, removesState });
        removals.set(id, list);
      };
      for (const a of actions) {
        if (a.kind === 'delete' || a.kind === 'retire') {
          // Every id of a batch may have been acted upon, even on a partial failure.
          for (const id of a.ids) addRemoval(id, a, a.kind === 'delete');
        } else if (a.kind === 'drop') {
          for (const el of (a.json as { rollout_id: string; dropped?: boolean }[] | undefined) ?? [])
            if (el.dropped) addRemoval(el.rollout_id, a, false);
        } else if (a.kind === 'sweep') {
          for (const id of (a.json as { removed?: string[] } | undefined)?.removed ?? []) addRemoval(id, a, true);
        }
      }
      const removedBetween = (id: string, from: number, to: number, stateOnly: boolean) =>
        (removals.get(id) ?? []).some((r) => (!stateOnly || r.removesState) && r.end > from && r.start < to);
      const sweptDuring = (id: string, from: number, to: number) =>
        (removals.get(id) ?? []).some((r) => r.kind === 'sweep' && r.end > from && r.start < to);

      const acks: Ack[] = [];
      // When each ack's call began at the latest: the writer's previous ack (a writer is sequential).
      const callBegan = new Map<Ack, number>();
      for (let w = 0; w < WRITERS; w++) {
        const own = readAcks(join(base, `writer-${w}.log`));
        own.forEach((e, i) => callBegan.set(e, i === 0 ? 0 : own[i - 1].t));
        acks.push(...own);
      }
      const acksOf = new Map<string, Ack[]>();
      for (const a of acks) acksOf.set(a.rollout, [...(acksOf.get(a.rollout) ?? []), a]);

      // A and B: per successful freeze.
      let freezesChecked = 0;
      const hazards: string[] = [];
      for (const a of actions) {
        if (a.kind !== 'freeze' || !Array.isArray(a.json)) continue;
        for (const el of a.json as (FreezeOk | InlineError)[]) {
          if ('error' in el) continue;
          freezesChecked++;
          const inSnap = new Set(el.entry_call_ids);
          for (const e of acksOf.get(el.rollout_id) ?? []) {
            if (e.t < a.res.start && !inSnap.has(e.call) && !removedBetween(el.rollout_id, e.t, a.res.end, false)) {
              problems.push(
                `A: ${el.rollout_id}: entry ${e.call} acknowledged at ${e.t} is missing from the snapshot ${el.snapshot_id} frozen at ${a.res.start}-${a.res.end}`,
              );
            }
            if (e.t > a.res.end && !inSnap.has(e.call) && !removedBetween(el.rollout_id, a.res.start, e.t, true)) {
              const msg = `B: ${el.rollout_id}: entry ${e.call} acknowledged at ${e.t}, after the freeze reported at ${a.res.end} (snapshot ${el.snapshot_id})`;
              // docs/format.md#lock-file-lifetime, docs/format.md#hazard-7: a writer that waited on a lock inode sweep unlinked is not excluded.
              if (sweptDuring(el.rollout_id, Math.min(a.res.start - 5, callBegan.get(e) ?? 0), e.t)) hazards.push(msg);
              else problems.push(msg);
            }
          }
        }
      }

      // E, C, D: the final directory.
      const present = presentRollouts(dir);
      const finalState = new Map<string, ReturnType<typeof readStateFile>>();
      for (const id of present) {
        try {
          const s = readStateFile(dir, id);
          finalState.set(id, s);
          const jSize = fileSize(join(dir, `${id}.tokens.jsonl`)) ?? 0;
          if (s && !s.retired && typeof s.indexed_size === 'number' && s.indexed_size > jSize) {
            problems.push(`E: ${id}: indexed_size ${s.indexed_size} > J size ${jSize}`);
          }
        } catch (e) {
          problems.push(`E: ${id}: state file does not parse: ${(e as Error).message}`);
        }
      }
      for (const id of rollouts) {
        const s = finalState.get(id);
        const ids = jsonlCallIds(dir, id) ?? [];
        if (s && s.frozen && !s.retired) {
          const jSet = new Set(ids);
          for (const a of actions) {
            if (a.kind === 'freeze' && Array.isArray(a.json)) {
              for (const el of a.json as (FreezeOk | InlineError)[]) {
                if ('error' in el || el.rollout_id !== id || el.snapshot_id !== s.snapshot_id) continue;
                const extra = ids.filter((c) => !el.entry_call_ids.includes(c));
                const missing = el.entry_call_ids.filter((c) => !jSet.has(c));
                if (extra.length || missing.length)
                  problems.push(
                    `C: ${id}: J differs from snapshot ${el.snapshot_id}: extra ${extra.join(',')} missing ${missing.join(',')}`,
                  );
              }
            }
            if (a.kind === 'build' && Array.isArray(a.json)) {
              for (const el of a.json as {
                rollout_id: string;
                metrics?: { n_calls: number };
                _capture_snapshot?: { snapshot_id: string };
              }[]) {
                if (el.rollout_id !== id || el._capture_snapshot?.snapshot_id !== s.snapshot_id) continue;
                if (el.metrics?.n_calls !== ids.length)
                  problems.push(
                    `C: ${id}: build --freeze reported ${el.metrics?.n_calls} calls for snapshot ${s.snapshot_id}, J now has ${ids.length}`,
                  );
              }
            }
          }
        }
        const lastRemoval = Math.max(0, ...(removals.get(id) ?? []).map((r) => r.end));
        const jSet = new Set(ids);
        for (const e of acksOf.get(id) ?? []) {
          if (e.t > lastRemoval && !jSet.has(e.call))
            problems.push(`D: ${id}: entry ${e.call} acknowledged at ${e.t} (after every removal) is not in J`);
        }
      }

      // F: verify-digests on every rollout that is not retired.
      const live = present.filter((id) => finalState.get(id) && !finalState.get(id)!.retired);
      let verifyFindings = 0;
      if (live.length > 0) {
        const v = await tokcap(['verify-digests', dir, ...live, '--json'], { timeoutMs: 120_000 });
        const out = parseJsonOut<{
          findings: { rollout_id: string; code: string; severity: string; message: string }[];
        }>(v);
        if (!out) problems.push(`F: verify-digests printed no JSON (exit ${v.code}): ${v.stderr.slice(0, 400)}`);
        for (const f of out?.findings ?? []) {
          verifyFindings++;
          if (f.severity !== 'error') continue;
          const deleted = (removals.get(f.rollout_id) ?? []).some((r) => r.removesState);
          if (deleted && (f.code === 'delta_unreconstructable' || f.code === 'parent_missing')) continue;
          problems.push(`F: ${f.rollout_id}: ${f.code}: ${f.message}`);
        }
      }

      expect(pictureTree(outside)).toEqual(outsideBefore);

      const byKind = new Map<string, number>();
      for (const a of actions) byKind.set(a.kind, (byKind.get(a.kind) ?? 0) + 1);
      const report = {
        seed: SEED,
        seconds: SECONDS,
        actions: Object.fromEntries(byKind),
        acknowledged: acks.length,
        freezesChecked,
        verifyFindings,
        writers: summaries.map((s) => ({
          appended: s.appended,
          refused_frozen_append: s.refused_frozen_append,
          refused_retired: s.refused_retired,
          marked: s.marked_incomplete,
        })),
        hazards: hazards.length,
      };
      console.log(`[concurrent] ${JSON.stringify(report)}`);
      if (hazards.length)
        console.log(`[concurrent] sweep-race hazards (docs/format.md#hazard-7):\n${hazards.join('\n')}`);
      expect(problems.slice(0, 50)).toEqual([]);
      expect(acks.length).toBeGreaterThanOrEqual(MIN_ACKS);
      expect(freezesChecked).toBeGreaterThan(0);
    },
    (SECONDS + 1200) * 1000,
  );
});
