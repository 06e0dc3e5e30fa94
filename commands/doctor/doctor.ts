/**
 * tokcap doctor [DIR] [--hold D | --probe] — see ./options.ts and
 * docs/cluster.md#doctor. The checks are the library's (src/doctor/); here their order, the
 * verdict lines, the exit code (1 when one is unsafe) and the cleanup on a signal: nothing of
 * doctor's stays in DIR, also after Ctrl-C. A hold file left by a SIGKILL is stale: the next
 * --hold replaces it and the next --probe waits past it, each saying so in one line.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ioError, TokcapError } from '../../src/errors.js';
import {
  clockCheck,
  filesystemCheck,
  lockChecks,
  removeScratch,
  renameAndFsyncChecks,
  spaceChecks,
  type CheckAnswer,
} from '../../src/doctor/checks.js';
import { killPeers } from '../../src/doctor/lock-peers.js';
import {
  describeStale,
  HOLD_FILE,
  probe,
  startHold,
  type HoldHandle,
  type StaleHold,
} from '../../src/doctor/two-node.js';
import { formatDuration } from '../cli/duration.js';
import type { CommandContext } from '../cli/context.js';
import { EXIT_NEGATIVE } from '../cli/errors.js';

const CLEANUP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export async function run(ctx: CommandContext<'doctor'>): Promise<void> {
  try {
    if (!statSync(ctx.dir).isDirectory()) throw new TokcapError('io', 'not a directory', { file: ctx.dir });
  } catch (e) {
    throw e instanceof TokcapError ? e : ioError(e, ctx.dir);
  }
  let hold: HoldHandle | undefined;
  const cleanup = () => {
    hold?.release();
    killPeers();
    removeScratch();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    cleanup();
    for (const s of CLEANUP_SIGNALS) process.removeListener(s, onSignal);
    process.kill(process.pid, signal);
  };
  for (const s of CLEANUP_SIGNALS) process.on(s, onSignal);
  try {
    if (ctx.options.hold !== undefined) {
      hold = await startHold(ctx.dir, ctx.options.hold);
      return await holdFor(ctx, hold, ctx.options.hold);
    }
    if (ctx.options.probe) return await probeHolder(ctx);
    return await checks(ctx);
  } finally {
    cleanup();
    for (const s of CLEANUP_SIGNALS) process.removeListener(s, onSignal);
  }
}

const MARK = { ok: 'ok', warning: 'warning', unsafe: 'UNSAFE', skipped: 'skipped' } as const;

function line(ctx: CommandContext<'doctor'>, a: CheckAnswer): string {
  const s = ctx.styles;
  const mark =
    a.verdict === 'ok'
      ? s.ok(MARK.ok)
      : a.verdict === 'unsafe'
        ? s.error(MARK.unsafe)
        : a.verdict === 'warning'
          ? s.warn(MARK.warning)
          : s.dim(MARK.skipped);
  return `${mark.padEnd(7 + mark.length - MARK[a.verdict].length)}  ${a.check}: ${a.message}`;
}

async function checks(ctx: CommandContext<'doctor'>): Promise<void> {
  let mountinfo: string | undefined;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    mountinfo = undefined;
  }
  const answers: CheckAnswer[] = [];
  const add = (more: CheckAnswer[]) => {
    for (const a of more) {
      answers.push(a);
      // Each verdict as soon as it is known: the lock checks start processes.
      if (a.verdict === 'unsafe') ctx.err(`tokcap: ${ctx.dir}: ${a.check}: ${a.message}`);
      else if (!ctx.options.quiet) ctx.out(line(ctx, a));
    }
  };
  add(filesystemCheck(ctx.dir, mountinfo).answers);
  add(await lockChecks(ctx.dir));
  add(renameAndFsyncChecks(ctx.dir));
  add([clockCheck(ctx.dir)]);
  add(spaceChecks(ctx.dir));
  const unsafe = answers.filter((a) => a.verdict === 'unsafe');
  if (unsafe.length > 0) ctx.raise(EXIT_NEGATIVE);
  ctx.json({ dir: ctx.dir, ok: unsafe.length === 0, checks: answers });
  if (!ctx.options.quiet) {
    ctx.out(
      unsafe.length === 0
        ? ctx.styles.ok(
            `nothing found that makes tokcap unsafe in ${ctx.dir} on this node; across nodes, run --hold on one and --probe on another`,
          )
        : ctx.styles.error(
            `${unsafe.length} check${unsafe.length > 1 ? 's' : ''} found tokcap unsafe in ${ctx.dir}: ${unsafe.map((a) => a.check).join(', ')}`,
          ),
    );
  }
}

/** A stale hold file, replaced or waited past: one line on stderr, and its holder in the JSON. */
function staleNote(ctx: CommandContext<'doctor'>, path: string, stale: StaleHold | undefined): object {
  if (stale === undefined) return {};
  ctx.warn(`${path}: ${ctx.options.hold !== undefined ? 'replaced' : 'waited past'} ${describeStale(stale)}`);
  return { stale_hold: { host: stale.holder.host, pid: stale.holder.pid, reason: stale.why } };
}

async function holdFor(ctx: CommandContext<'doctor'>, hold: HoldHandle, seconds: number): Promise<void> {
  const stale = staleNote(ctx, hold.path, hold.replaced);
  if (!ctx.options.json && !ctx.options.quiet) {
    ctx.err(
      `holding an exclusive lock on ${hold.path} for ${formatDuration(seconds)} (host ${hold.holder.host}); run \`tokcap doctor ${ctx.dir} --probe\` on another node now`,
    );
  }
  await sleep(seconds * 1000);
  hold.release();
  ctx.json({ dir: ctx.dir, held: true, host: hold.holder.host, seconds, ...stale });
  ctx.out(`released the lock on ${hold.path} after ${formatDuration(seconds)}`);
}

async function probeHolder(ctx: CommandContext<'doctor'>): Promise<void> {
  const a = await probe(ctx.dir, ctx.options.wait);
  const stale = staleNote(ctx, join(ctx.dir, HOLD_FILE), a.stale);
  const here = (await import('node:os')).hostname();
  const where = `held on ${a.holder.host}, tried on ${here}`;
  let verdict: 'ok' | 'unsafe' | 'warning';
  let message: string;
  if (a.excluded) {
    verdict = a.sameNode ? 'warning' : 'ok';
    message = a.sameNode
      ? `the lock excludes (${where}), but both run on the same node: run the probe on another node to check across nodes`
      : `the lock excludes across nodes (${where}): exclusive and shared tries refused`;
  } else {
    verdict = 'unsafe';
    message = `the lock does NOT exclude across nodes (${where}): ${a.granted.ex ? 'an exclusive' : 'a shared'} lock was granted while the holder held its own; locks are local to each node here`;
  }
  if (verdict === 'unsafe') {
    ctx.raise(EXIT_NEGATIVE);
    ctx.err(`tokcap: ${ctx.dir}: ${message}`);
  } else if (!ctx.options.quiet) ctx.out(line(ctx, { check: 'lock across nodes', verdict, message }));
  ctx.json({
    dir: ctx.dir,
    ok: verdict !== 'unsafe',
    check: 'lock across nodes',
    verdict,
    message,
    holder: a.holder.host,
    prober: here,
    same_node: a.sameNode,
    excluded: a.excluded,
    ...stale,
  });
}
