/**
 * Suite 2 — crashes. The BUILT BINARY runs freeze, build --freeze, conditional retire
 * (drop), retire, delete, sweep and export --freeze over a batch of 30 rollouts (a copy of a store
 * written by the Python peer) and is SIGKILLed after a random delay drawn over the command's
 * measured run time. After each kill:
 *  - every state file parses (atomic replace: never a half-written S);
 *  - removals happened in the specified order: records (J, M, I) only after a durable fence
 *    (drop/retire), J, M, I before S (delete), I, M before S, then L (sweep) — so a rollout whose records
 *    were removed always has its fence, or was deleted with S gone too;
 *  - a state that is not retired never indexes past J (docs/format.md#index-within-records);
 *  - no file appeared but lock files and `.tokens-state-*` orphans, and the library's listing
 *    never reads an orphan as a rollout or an invalid name;
 *  - a crashed export left nothing, or a complete file, at --out;
 *  - the same command then runs to completion with exit 0 (the next operation succeeds) and its
 *    result is the full one (same snapshot identity as a crashed freeze wrote; nothing lost);
 *  - verify-digests (library) finds no error on the rollouts that are not retired;
 *  - the sibling `outside/` directory is untouched.
 * CI: 50 iterations. Torture: 1000.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryFacts } from '../../src/facts/directory-facts.js';
import { verifyDirectory } from '../../src/verify/verify-directory.js';
import { ensureBuilt } from '../support/cli-binary.js';
import {
  filesOf,
  fileSize,
  jsonlCallIds,
  parseJsonOut,
  pictureTree,
  py,
  readStateFile,
  seededRng,
  sized,
  startTokcap,
  stderrProblems,
  tempBase,
  tokcap,
  type StateFile,
} from '../support/reliability.js';

const ITERATIONS = sized(50, 1000);
const SEED = Number(process.env.TOKCAP_SEED ?? Date.now() % 100000);
const IDS = Array.from({ length: 30 }, (_, i) => `c${String(i).padStart(2, '0')}`);
const TEMP_RE = /^\.tokens-state-[a-z0-9_]{8}$/;

type Op = 'freeze' | 'build' | 'drop' | 'retire' | 'delete' | 'sweep' | 'export';
const OPS: Op[] = ['freeze', 'build', 'drop', 'retire', 'delete', 'sweep', 'export'];

interface Template {
  dir: string;
  names: Set<string>;
  calls: Map<string, string[]>;
}

function templateOf(dir: string): Template {
  const calls = new Map<string, string[]>();
  for (const id of IDS) calls.set(id, jsonlCallIds(dir, id) ?? []);
  return { dir, names: new Set(readdirSync(dir)), calls };
}

describe('reliability: SIGKILL at random moments', () => {
  it(
    `leaves a store the next operation can use (${ITERATIONS} kills, seed ${SEED})`,
    async () => {
      ensureBuilt();
      const base = tempBase('crash');
      const rng = seededRng(SEED);

      // Templates: live, frozen (with known snapshots), retired.
      const live = join(base, 'tpl-live');
      mkdirSync(live);
      const w = await py(
        [
          live,
          'writer',
          '--rollouts',
          IDS.join(','),
          '--seconds',
          '1.5',
          '--seed',
          String(SEED),
          '--log',
          join(base, 'w.log'),
        ],
        { timeoutMs: 60_000 },
      );
      expect(w.code, w.stderr).toBe(0);
      // Every rollout gets records: on a loaded machine the writer's 1.5 s may miss one, and a
      // rollout with no files at all is another template (freeze would write its first state file).
      for (let round = 1; round <= 5; round++) {
        const missing = IDS.filter((id) => !existsSync(join(live, `${id}.tokens.jsonl`)));
        if (missing.length === 0) break;
        const more = await py(
          [
            live,
            'writer',
            '--rollouts',
            missing.join(','),
            '--seconds',
            '0.3',
            '--seed',
            String(SEED + round),
            '--log',
            join(base, 'w.log'),
          ],
          { timeoutMs: 60_000 },
        );
        expect(more.code, more.stderr).toBe(0);
      }
      expect(IDS.filter((id) => !existsSync(join(live, `${id}.tokens.jsonl`)))).toEqual([]);
      for (const id of IDS.slice(0, 5)) {
        expect((await py([live, 'begin_call', id, `dangling-${id}`])).code).toBe(0);
      }
      for (const id of IDS.slice(3, 7)) {
        expect((await py([live, 'mark_incomplete', id, `lost-${id}`])).code).toBe(0);
      }
      const frozen = join(base, 'tpl-frozen');
      cpSync(live, frozen, { recursive: true });
      const fr = await tokcap(['freeze', frozen, ...IDS, '--json']);
      expect(fr.code, fr.stderr).toBe(0);
      const snaps = new Map<string, { snapshot_id: string; version: number }>();
      for (const el of parseJsonOut<{ rollout_id: string; snapshot_id: string; version: number }[]>(fr)!)
        snaps.set(el.rollout_id, el);
      const retired = join(base, 'tpl-retired');
      cpSync(frozen, retired, { recursive: true });
      const rt = await tokcap(['retire', retired, ...IDS, '--json']);
      expect(rt.code, rt.stderr).toBe(0);
      const templates = { live: templateOf(live), frozen: templateOf(frozen), retired: templateOf(retired) };

      const store = join(base, 'store');
      const outside = join(base, 'outside');
      const expDir = join(base, 'exp');
      mkdirSync(outside);
      mkdirSync(expDir);
      const outsideBefore = pictureTree(outside);

      const plan = (op: Op, dropId: string): { tpl: Template; args: string[]; rerun: string[] } => {
        switch (op) {
          case 'freeze':
            return {
              tpl: templates.live,
              args: ['freeze', store, ...IDS, '--json'],
              rerun: ['freeze', store, ...IDS, '--json'],
            };
          case 'build':
            return {
              tpl: templates.live,
              args: ['build', store, ...IDS, '--freeze', '--json'],
              rerun: ['build', store, ...IDS, '--freeze', '--json'],
            };
          case 'drop': {
            const s = snaps.get(dropId)!;
            const args = [
              'retire',
              store,
              dropId,
              '--snapshot-id',
              s.snapshot_id,
              '--version',
              String(s.version),
              '--json',
            ];
            return { tpl: templates.frozen, args, rerun: args };
          }
          case 'retire':
            return {
              tpl: rng() < 0.5 ? templates.live : templates.frozen,
              args: ['retire', store, ...IDS, '--json'],
              rerun: ['retire', store, ...IDS, '--json'],
            };
          case 'delete':
            return {
              tpl: rng() < 0.5 ? templates.live : templates.retired,
              args: ['delete', store, ...IDS, '--json'],
              rerun: ['delete', store, ...IDS, '--json'],
            };
          case 'sweep':
            return {
              tpl: templates.retired,
              args: ['sweep', store, '--older-than', '0s', '--json'],
              rerun: ['sweep', store, '--older-than', '0s', '--json'],
            };
          case 'export': {
            const out = join(expDir, 'out.jsonl');
            return {
              tpl: templates.live,
              args: ['export', store, ...IDS, '--freeze', '--out', out, '--json'],
              rerun: ['export', store, ...IDS, '--freeze', '--out', out, '--force', '--json'],
            };
          }
        }
      };

      const reset = (tpl: Template) => {
        rmSync(store, { recursive: true, force: true });
        rmSync(expDir, { recursive: true, force: true });
        mkdirSync(expDir);
        cpSync(tpl.dir, store, { recursive: true });
      };

      // Baseline run time of each command (uninterrupted), to spread the kills over it.
      const baseline = new Map<Op, number>();
      for (const op of OPS) {
        const p = plan(op, IDS[0]);
        reset(p.tpl);
        const r = await tokcap(p.args);
        expect([0], `${op}: ${r.stderr}`).toContain(r.code);
        baseline.set(op, (r.end - r.start) * 1000);
      }

      const problems: string[] = [];
      const stats = { killed: 0, completed: 0, byOp: {} as Record<string, number> };
      const started = Date.now();
      for (let it = 0; it < ITERATIONS && problems.length === 0; it++) {
        const op = OPS[it % OPS.length];
        const dropId = IDS[Math.floor(rng() * IDS.length)];
        const p = plan(op, dropId);
        reset(p.tpl);
        const delay = Math.round(baseline.get(op)! * (0.15 + rng() * 0.95));
        const run = startTokcap(p.args, { timeoutMs: 60_000 });
        const timer = setTimeout(() => run.child.kill('SIGKILL'), delay);
        const res = await run.done;
        clearTimeout(timer);
        const killed = res.signal === 'SIGKILL';
        if (killed) stats.killed++;
        else stats.completed++;
        // The baseline was taken once, maybe while the machine was busier (the suite's other files
        // start with it): a run that finished before its kill says how long the command takes now,
        // so the next kills of it land inside its run instead of after it.
        if (!killed && res.code === 0) baseline.set(op, Math.min(baseline.get(op)!, (res.end - res.start) * 1000));
        stats.byOp[op] = (stats.byOp[op] ?? 0) + 1;
        const tag = `#${it} ${op}${op === 'drop' ? ` ${dropId}` : ''} killed=${killed} after ${delay}ms`;
        if (!killed && res.code !== 0) problems.push(`${tag}: exit ${res.code}: ${res.stderr.trim()}`);
        if (!killed) for (const pr of stderrProblems(res.stderr)) problems.push(`${tag}: ${pr}`);

        // --- right after the crash ---
        const tpl = p.tpl;
        const targets = op === 'drop' ? [dropId] : IDS;
        const states = new Map<string, StateFile | undefined>();
        for (const id of IDS) {
          try {
            states.set(id, readStateFile(store, id));
          } catch (e) {
            problems.push(`${tag}: ${id}: state does not parse: ${(e as Error).message}`);
          }
        }
        for (const id of targets) {
          const had = filesOf(tpl.dir, id);
          const now = filesOf(store, id);
          const s = states.get(id);
          const gone = (k: 'j' | 's' | 'i' | 'm' | 'l') => had[k] && !now[k];
          const orderOk = (order: ('j' | 's' | 'i' | 'm' | 'l')[]) => {
            // The removed files form a prefix of `order` (restricted to the files that existed).
            const existed = order.filter((k) => had[k]);
            const firstKept = existed.findIndex((k) => !gone(k));
            return firstKept === -1 || existed.slice(firstKept).every((k) => !gone(k));
          };
          if (op === 'drop' || op === 'retire' || op === 'freeze' || op === 'build' || op === 'export') {
            if ((gone('j') || gone('i') || gone('m')) && !(s && s.retired))
              problems.push(`${tag}: ${id}: records removed without a fence`);
            if (gone('s')) problems.push(`${tag}: ${id}: state removed by ${op}`);
            if (!orderOk(['j', 'm', 'i'])) problems.push(`${tag}: ${id}: records removed out of order`);
          }
          if (op === 'delete' && !orderOk(['j', 'm', 'i', 's']))
            problems.push(`${tag}: ${id}: delete removed files out of order`);
          if (op === 'sweep' && !orderOk(['i', 'm', 's', 'l']))
            problems.push(`${tag}: ${id}: sweep removed files out of order`);
          if (op !== 'sweep' && op !== 'delete' && gone('l'))
            problems.push(`${tag}: ${id}: lock file removed by ${op}`);
          if (s && !s.retired && typeof s.indexed_size === 'number') {
            const jSize = fileSize(join(store, `${id}.tokens.jsonl`)) ?? 0;
            if (s.indexed_size > jSize && op !== 'delete')
              problems.push(`${tag}: ${id}: indexed_size ${s.indexed_size} > J ${jSize}`);
          }
        }
        for (const name of readdirSync(store)) {
          if (!tpl.names.has(name) && !name.endsWith('.tokens.lock') && !TEMP_RE.test(name))
            problems.push(`${tag}: unexpected new file ${name}`);
        }
        try {
          const facts = await directoryFacts({ dir: store, lockWaitMs: 1000 });
          for (const id of facts.rollouts.keys())
            if (!IDS.includes(id)) problems.push(`${tag}: listing shows a rollout ${JSON.stringify(id)}`);
          if (facts.invalidNames.length)
            problems.push(`${tag}: listing shows invalid names ${facts.invalidNames.join(',')}`);
        } catch (e) {
          problems.push(`${tag}: listing failed: ${(e as Error).message}`);
        }
        if (op === 'export') {
          const out = join(expDir, 'out.jsonl');
          if (existsSync(out)) {
            const lines = readFileSync(out, 'utf8')
              .split('\n')
              .filter((l) => l !== '');
            if (lines.length !== IDS.length)
              problems.push(`${tag}: a partial export is at --out (${lines.length} lines)`);
          }
        }
        const frozenAfterCrash = new Map<string, string>();
        for (const id of targets) {
          const s = states.get(id);
          if (s?.frozen && !s.retired && typeof s.snapshot_id === 'string') frozenAfterCrash.set(id, s.snapshot_id);
        }

        // --- the next operation succeeds ---
        const again = await tokcap(p.rerun, { timeoutMs: 60_000 });
        if (again.code !== 0 || again.timedOut)
          problems.push(`${tag}: the next ${op} exited ${again.code}: ${again.stderr.trim().slice(0, 500)}`);
        for (const pr of stderrProblems(again.stderr)) problems.push(`${tag}: rerun: ${pr}`);
        const json = parseJsonOut<unknown>(again);
        if (op === 'freeze' && Array.isArray(json)) {
          for (const el of json as { rollout_id: string; snapshot_id?: string; entry_call_ids?: string[] }[]) {
            const before = frozenAfterCrash.get(el.rollout_id);
            if (before !== undefined && el.snapshot_id !== before)
              problems.push(`${tag}: ${el.rollout_id}: snapshot id changed from ${before} to ${el.snapshot_id}`);
            if (JSON.stringify(el.entry_call_ids) !== JSON.stringify(tpl.calls.get(el.rollout_id)))
              problems.push(`${tag}: ${el.rollout_id}: the snapshot lost or gained entries`);
          }
        }
        if (op === 'drop') {
          const el = (json as { dropped?: boolean }[] | undefined)?.[0];
          if (!el?.dropped) problems.push(`${tag}: the next drop did not drop: ${again.stdout.trim()}`);
        }

        // --- final picture ---
        for (const id of IDS) {
          const now = filesOf(store, id);
          let s: StateFile | undefined;
          try {
            s = readStateFile(store, id);
          } catch (e) {
            problems.push(`${tag}: ${id}: state does not parse after the rerun: ${(e as Error).message}`);
            continue;
          }
          const target = targets.includes(id);
          if (op === 'freeze' || op === 'build' || op === 'export' || !target) {
            const calls = jsonlCallIds(store, id) ?? [];
            const want = tpl.calls.get(id) ?? [];
            if (JSON.stringify(calls) !== JSON.stringify(want) && !(tpl === templates.retired))
              problems.push(`${tag}: ${id}: J changed (${want.length} -> ${calls.length} entries)`);
            if (target && !(s?.frozen && !s.retired)) problems.push(`${tag}: ${id}: not frozen after ${op}`);
          } else if (op === 'drop' || op === 'retire') {
            if (!s?.retired || now.j || now.i || now.m)
              problems.push(`${tag}: ${id}: not fenced and cleared after ${op}`);
          } else if (op === 'delete') {
            if (now.j || now.i || now.m || now.s) problems.push(`${tag}: ${id}: files left after delete`);
          } else if (op === 'sweep') {
            // A kill after S is gone but before L is unlinked leaves an orphan lock file: allowed
            // (docs/format.md#hazard-8; sweep only visits rollouts that have a state file).
            if (now.s || now.i || now.m) problems.push(`${tag}: ${id}: files left after sweep`);
          }
        }
        const v = await verifyDirectory({ dir: store, lockWaitMs: 1000 });
        for (const f of v.findings)
          if (f.severity === 'error') problems.push(`${tag}: verify: ${f.rollout_id}: ${f.code}: ${f.message}`);
        for (const f of v.failed) problems.push(`${tag}: verify failed: ${f.rolloutId}: ${f.error.message}`);
      }
      expect(pictureTree(outside)).toEqual(outsideBefore);
      console.log(
        `[crash] ${JSON.stringify({ seed: SEED, iterations: stats.killed + stats.completed, ...stats, seconds: Math.round((Date.now() - started) / 1000), baselineMs: Object.fromEntries(baseline) })}`,
      );
      expect(problems.slice(0, 30)).toEqual([]);
      expect(stats.killed).toBeGreaterThan(ITERATIONS / 3);
    },
    sized(50, 1000) * 6000 + 120_000,
  );
});
