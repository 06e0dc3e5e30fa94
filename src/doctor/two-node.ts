/**
 * `doctor --hold` and `doctor --probe`: whether a lock taken on one node excludes another node.
 * The holder creates `DIR/.tokcap-doctor-hold` (a dot-file no scanner of the store reads), takes
 * its exclusive lock, writes who holds it (host, pid) and until when, refreshes it every second
 * (`beat`), then removes it while still holding the lock. The probe never creates it: it waits
 * for it to appear, opens it, tries an exclusive and a shared lock without waiting, and checks
 * afterwards that the holder was still holding (the file still there, the time not yet passed,
 * the holder running): a lock granted then means locks are local to each node.
 *
 * A holder killed with SIGKILL leaves its file behind. A file whose holder is not running is
 * stale: on this host its pid says so; on another host its beat stops. A stale file never makes
 * a verdict: the next holder replaces it and the probe waits past it, both naming it.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
  ftruncateSync,
  fsyncSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TokcapError, ioError } from '../errors.js';
import { tryFlock, unlockFd } from '../lock/flock.js';

export const HOLD_FILE = '.tokcap-doctor-hold';

/** The holder refreshes its file this often. */
export const BEAT_MS = 1000;
/** A holder whose beat does not move for this long is not running (a loaded node's timers run late). */
export const BEAT_GRACE_MS = 5000;

export interface Holder {
  host: string;
  pid: number;
  /** Epoch milliseconds. */
  until: number;
  /** Refreshes so far: it moves while the holder runs. */
  beat?: number;
}

/** Why a hold file's holder is not holding: its pid is not running here, its time is over, or its beat stopped. */
export type StaleReason = 'not_running' | 'expired' | 'not_refreshed';

export interface StaleHold {
  holder: Holder;
  why: StaleReason;
}

export interface HoldHandle {
  path: string;
  holder: Holder;
  /** The stale file this hold replaced, if one was there. */
  replaced?: StaleHold;
  /** Removes the file, then releases the lock (idempotent; safe from a signal handler). */
  release(): void;
}

function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Why `holder` (read from `path`, whose lock was just granted to this process) is not holding,
 * or undefined when it runs: on this host by its pid, elsewhere by its beat moving within
 * BEAT_GRACE_MS.
 */
export async function staleness(path: string, holder: Holder): Promise<StaleReason | undefined> {
  if (holder.until <= Date.now()) return 'expired';
  if (holder.host === hostname() && !pidRuns(holder.pid)) return 'not_running';
  const deadline = Date.now() + BEAT_GRACE_MS;
  while (Date.now() < deadline) {
    await sleep(BEAT_MS / 4);
    const now = readHolder(path);
    if (now === undefined || now.host !== holder.host || now.pid !== holder.pid) return undefined;
    if (now.beat !== holder.beat) return undefined;
  }
  return 'not_refreshed';
}

/** A stale hold file in words: whose it is and why it does not count. */
export function describeStale(s: StaleHold): string {
  const why =
    s.why === 'expired'
      ? 'whose time is over'
      : s.why === 'not_running'
        ? 'whose process is not running'
        : `not refreshed for ${BEAT_GRACE_MS / 1000}s (its holder was killed, or its node is down)`;
  return `a stale hold file of pid ${s.holder.pid} on ${s.holder.host}, ${why}`;
}

export async function startHold(dir: string, seconds: number): Promise<HoldHandle> {
  const path = join(dir, HOLD_FILE);
  let fd: number;
  try {
    // Not O_APPEND: each beat rewrites the file in place.
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o666);
  } catch (e) {
    throw ioError(e, path);
  }
  if (!tryFlock(fd, 'exclusive')) {
    closeSync(fd);
    throw new TokcapError('lock_timeout', `another doctor --hold holds ${path}: one holder at a time`, { file: path });
  }
  let replaced: StaleHold | undefined;
  const previous = readHolder(path);
  if (previous !== undefined) {
    const why = await staleness(path, previous);
    if (why === undefined) {
      unlockFd(fd);
      closeSync(fd);
      throw new TokcapError(
        'other',
        `${path} is held by pid ${previous.pid} on ${previous.host}, which still refreshes it, yet its lock was granted here: locks do not exclude across these nodes`,
        { file: path },
      );
    }
    replaced = { holder: previous, why };
  }
  const holder: Holder = { host: hostname(), pid: process.pid, until: Date.now() + seconds * 1000, beat: 0 };
  // The beat only grows, so each rewrite is at least as long as the last: no truncation needed.
  const write = () => writeSync(fd, `${JSON.stringify(holder)}\n`, 0);
  ftruncateSync(fd, 0);
  write();
  fsyncSync(fd);
  const beats = setInterval(() => {
    holder.beat! += 1;
    write();
  }, BEAT_MS);
  beats.unref();
  let open = true;
  return {
    path,
    holder,
    replaced,
    release() {
      if (!open) return;
      open = false;
      clearInterval(beats);
      rmSync(path, { force: true });
      try {
        unlockFd(fd);
      } finally {
        closeSync(fd);
      }
    },
  };
}

export interface ProbeAnswer {
  holder: Holder;
  sameNode: boolean;
  /** Both the exclusive and the shared try were refused. */
  excluded: boolean;
  granted: { ex: boolean; sh: boolean };
  /** A stale hold file met before the holder that answered, if any. */
  stale?: StaleHold;
}

function readHolder(path: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as Holder;
    return typeof h.host === 'string' && typeof h.pid === 'number' && typeof h.until === 'number' ? h : undefined;
  } catch {
    return undefined;
  }
}

const sameHolder = (a: Holder, b: Holder) => a.host === b.host && a.pid === b.pid && a.until === b.until;

export async function probe(dir: string, waitSeconds: number): Promise<ProbeAnswer> {
  const path = join(dir, HOLD_FILE);
  const deadline = Date.now() + waitSeconds * 1000;
  // A stale file is judged once, then waited past: a holder started later replaces it.
  let stale: StaleHold | undefined;
  for (;;) {
    const holder = readHolder(path);
    const fresh = holder !== undefined && holder.until > Date.now() && !(stale && sameHolder(stale.holder, holder));
    if (fresh && holder.host === hostname() && !pidRuns(holder.pid)) stale = { holder, why: 'not_running' };
    else if (fresh) {
      let fd: number | undefined;
      try {
        fd = openSync(path, 'r');
      } catch {
        fd = undefined; // the holder finished between the read and the open: wait for the next
      }
      if (fd !== undefined)
        try {
          const ex = tryFlock(fd, 'exclusive');
          if (ex) unlockFd(fd);
          const sh = tryFlock(fd, 'shared');
          if (sh) unlockFd(fd);
          // A grant counts only if the holder was still holding: its file still linked, its time
          // not over, and the holder running (a SIGKILLed holder leaves its file behind).
          const why = ex || sh ? await staleness(path, holder) : undefined;
          const still = fstatSync(fd).nlink > 0 && holder.until > Date.now() + 500;
          if (why !== undefined) stale = { holder, why };
          else {
            if ((ex || sh) && !still)
              throw new TokcapError(
                'other',
                `the holder on ${holder.host} finished during the probe: run the probe while --hold runs`,
                { file: path },
              );
            return {
              holder,
              sameNode: holder.host === hostname(),
              excluded: !ex && !sh,
              granted: { ex, sh },
              ...(stale ? { stale } : {}),
            };
          }
        } finally {
          closeSync(fd);
        }
    }
    if (Date.now() > deadline) {
      const found = `no doctor --hold found within ${waitSeconds}s${stale ? `, only ${describeStale(stale)}` : ''}`;
      throw new TokcapError('not_found', `${found} (start \`tokcap doctor DIR --hold 60s\` on another node first)`, {
        file: path,
      });
    }
    await sleep(200);
  }
}
