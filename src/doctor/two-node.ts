/**
 * `doctor --hold` and `doctor --probe`: whether a lock taken on one node excludes another node.
 * The holder creates `DIR/.tokcap-doctor-hold` (a dot-file no scanner of the store reads), takes
 * its exclusive lock, writes who holds it and until when, waits, then removes it while still
 * holding the lock. The probe never creates it: it waits for it to appear, opens it, tries an
 * exclusive and a shared lock without waiting, and checks afterwards that the holder was still
 * holding (the file still there, the time not yet passed): a lock granted then means locks are
 * local to each node.
 */
import { closeSync, fstatSync, openSync, readFileSync, rmSync, writeSync, ftruncateSync, fsyncSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TokcapError, ioError } from '../errors.js';
import { tryFlock, unlockFd } from '../lock/flock.js';

export const HOLD_FILE = '.tokcap-doctor-hold';

export interface Holder {
  host: string;
  pid: number;
  /** Epoch milliseconds. */
  until: number;
}

export interface HoldHandle {
  path: string;
  holder: Holder;
  /** Removes the file, then releases the lock (idempotent; safe from a signal handler). */
  release(): void;
}

export function startHold(dir: string, seconds: number): HoldHandle {
  const path = join(dir, HOLD_FILE);
  let fd: number;
  try {
    fd = openSync(path, 'a+', 0o666);
  } catch (e) {
    throw ioError(e, path);
  }
  if (!tryFlock(fd, 'exclusive')) {
    closeSync(fd);
    throw new TokcapError('lock_timeout', `another doctor --hold holds ${path}: one holder at a time`, { file: path });
  }
  const holder: Holder = { host: hostname(), pid: process.pid, until: Date.now() + seconds * 1000 };
  ftruncateSync(fd, 0);
  writeSync(fd, `${JSON.stringify(holder)}\n`);
  fsyncSync(fd);
  let open = true;
  return {
    path,
    holder,
    release() {
      if (!open) return;
      open = false;
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
}

function readHolder(path: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as Holder;
    return typeof h.host === 'string' && typeof h.until === 'number' ? h : undefined;
  } catch {
    return undefined;
  }
}

export async function probe(dir: string, waitSeconds: number): Promise<ProbeAnswer> {
  const path = join(dir, HOLD_FILE);
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const holder = readHolder(path);
    if (holder !== undefined && holder.until > Date.now()) {
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
          // A grant counts only if the holder was still holding: its file still linked, its time not over.
          const still = fstatSync(fd).nlink > 0 && holder.until > Date.now() + 500;
          if ((ex || sh) && !still)
            throw new TokcapError(
              'other',
              `the holder on ${holder.host} finished during the probe: run the probe while --hold runs`,
              { file: path },
            );
          return { holder, sameNode: holder.host === hostname(), excluded: !ex && !sh, granted: { ex, sh } };
        } finally {
          closeSync(fd);
        }
    }
    if (Date.now() > deadline) {
      throw new TokcapError(
        'not_found',
        `no doctor --hold found within ${waitSeconds}s (start \`tokcap doctor DIR --hold 60s\` on another node first)`,
        { file: path },
      );
    }
    await sleep(200);
  }
}
