/**
 * The checks of `tokcap doctor DIR` (docs/cluster.md#doctor), each an answer with a verdict and
 * one line: what the filesystem is and what its mount means for locks, whether flock excludes
 * between processes here (tokcap both ways, and Python's fcntl.flock), whether an atomic rename
 * and a directory fsync work, the clock skew against the file server, and free space and inodes.
 *
 * Its files in DIR are `.tokcap-doctor-<hex>-<what>`: dot-files without a capture suffix, which
 * no scanner of the store reads, removed before the checks return (and by `removeScratch` from a
 * signal handler).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fsyncSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  statfsSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tryFlock, unlockFd } from '../lock/flock.js';
import { filesystemName, lockMeaning, mountOf, type MountEntry } from './mounts.js';
import { hasPython, peerHold, peerTry, type PeerKind } from './lock-peers.js';

export type Verdict = 'ok' | 'warning' | 'unsafe' | 'skipped';

export interface CheckAnswer {
  check: string;
  verdict: Verdict;
  message: string;
  [detail: string]: unknown;
}

/** Every scratch file made and not yet removed (for a signal handler). */
const scratch = new Set<string>();

export function scratchPath(dir: string, what: string): string {
  const path = join(dir, `.tokcap-doctor-${randomBytes(6).toString('hex')}-${what}`);
  scratch.add(path);
  return path;
}

export function removeScratch(): void {
  for (const p of scratch) rmSync(p, { force: true });
  scratch.clear();
}

function errorText(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

export function filesystemCheck(
  dir: string,
  mountinfo: string | undefined,
): { answers: CheckAnswer[]; mount?: MountEntry } {
  const st = statfsSync(dir);
  const name = filesystemName(st.type);
  const magic = `0x${st.type.toString(16)}`;
  const real = realpathSync(dir);
  const mount = mountinfo === undefined ? undefined : mountOf(mountinfo, real);
  const answers: CheckAnswer[] = [
    {
      check: 'filesystem',
      verdict: 'ok',
      message: `${real} is on ${mount?.fstype ?? name ?? magic} (statfs type ${magic}${name ? `, ${name}` : ''})${mount ? `, mounted at ${mount.mountPoint} from ${mount.source}` : ''}`,
      type: mount?.fstype ?? name ?? null,
      statfs_type: magic,
      mount_point: mount?.mountPoint ?? null,
      source: mount?.source ?? null,
      mount_options: mount ? [...mount.mountOptions, ...mount.superOptions] : null,
    },
  ];
  if (mount) {
    const meaning = lockMeaning(mount);
    answers.push({
      check: 'lock scope',
      verdict: meaning.unsafe ? 'unsafe' : meaning.scope === 'unknown' ? 'warning' : 'ok',
      message: meaning.message,
      scope: meaning.scope,
    });
  } else {
    answers.push({
      check: 'lock scope',
      verdict: 'skipped',
      message: '/proc/self/mountinfo cannot be read: the mount options are unknown',
      scope: null,
    });
  }
  return { answers, mount };
}

function excluded(a: { ex?: boolean; sh?: boolean }): boolean {
  return a.ex === false && a.sh === false;
}

/** This process holds the lock and `peer` tries it; then `peer` holds it and this process tries. */
async function bothWays(file: string, peer: PeerKind, label: string): Promise<CheckAnswer> {
  const fd = openSync(file, 'r+');
  let theyTried: { ex?: boolean; sh?: boolean; error?: string };
  try {
    if (!tryFlock(fd, 'exclusive'))
      return { check: label, verdict: 'unsafe', message: `${label}: tokcap could not lock a new file nobody holds` };
    theyTried = await peerTry(peer, file);
    unlockFd(fd);
  } finally {
    closeSync(fd);
  }
  if (theyTried.error)
    return {
      check: label,
      verdict: 'unsafe',
      message: `${label}: the other process could not try the lock (${theyTried.error})`,
    };
  const held = await peerHold(peer, file);
  if (held.error)
    return {
      check: label,
      verdict: 'unsafe',
      message: `${label}: the other process could not lock the file (${held.error})`,
    };
  const fd2 = openSync(file, 'r+');
  let weTried: { ex: boolean; sh: boolean };
  try {
    const ex = tryFlock(fd2, 'exclusive');
    if (ex) unlockFd(fd2);
    const sh = tryFlock(fd2, 'shared');
    if (sh) unlockFd(fd2);
    weTried = { ex, sh };
  } finally {
    closeSync(fd2);
    await held.release();
  }
  const ok = excluded(theyTried) && excluded(weTried);
  const who = peer === 'python3' ? "Python's fcntl.flock" : 'another tokcap process';
  return {
    check: label,
    verdict: ok ? 'ok' : 'unsafe',
    message: ok
      ? `an exclusive lock held by tokcap excludes ${who}, and one held by ${who} excludes tokcap (exclusive and shared tries refused both ways)`
      : `locks do not exclude between tokcap and ${who} on this node: tokcap's hold refused ${JSON.stringify(theyTried)}, theirs refused ${JSON.stringify(weTried)} (true = granted)`,
    tokcap_holds: theyTried,
    other_holds: weTried,
  };
}

export async function lockChecks(dir: string): Promise<CheckAnswer[]> {
  const file = scratchPath(dir, 'lock');
  const answers: CheckAnswer[] = [];
  try {
    writeFileSync(file, '', { mode: 0o666, flag: 'wx' });
    try {
      answers.push(await bothWays(file, 'node', 'flock between processes'));
    } catch (e) {
      answers.push({
        check: 'flock between processes',
        verdict: 'unsafe',
        message: `flock fails here: ${errorText(e)}`,
      });
    }
    if (await hasPython()) {
      try {
        answers.push(await bothWays(file, 'python3', 'flock with python3'));
      } catch (e) {
        answers.push({ check: 'flock with python3', verdict: 'unsafe', message: `flock fails here: ${errorText(e)}` });
      }
    } else
      answers.push({
        check: 'flock with python3',
        verdict: 'skipped',
        message: 'python3 is not installed here: the check against fcntl.flock was not made',
      });
  } finally {
    rmSync(file, { force: true });
    scratch.delete(file);
  }
  return answers;
}

export function renameAndFsyncChecks(dir: string): CheckAnswer[] {
  const a = scratchPath(dir, 'rename-a');
  const b = scratchPath(dir, 'rename-b');
  const answers: CheckAnswer[] = [];
  try {
    writeFileSync(a, 'new', { flag: 'wx' });
    writeFileSync(b, 'old', { flag: 'wx' });
    const fd = openSync(a, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(a, b);
    const ok = readFileSync(b, 'utf8') === 'new' && !existsSync(a);
    answers.push({
      check: 'atomic rename',
      verdict: ok ? 'ok' : 'unsafe',
      message: ok
        ? 'a rename onto an existing file replaces it in one step (how state files and exports are put in place)'
        : 'a rename onto an existing file did not replace it',
    });
  } catch (e) {
    answers.push({
      check: 'atomic rename',
      verdict: 'unsafe',
      message: `a rename onto an existing file failed: ${errorText(e)}`,
    });
  } finally {
    for (const p of [a, b]) {
      rmSync(p, { force: true });
      scratch.delete(p);
    }
  }
  try {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    answers.push({
      check: 'directory fsync',
      verdict: 'ok',
      message: 'fsync of the directory works (a rename is made durable)',
    });
  } catch (e) {
    const code = errorText(e);
    // tokcap treats these as "not offered here" (best effort), as the writers do.
    const soft = code === 'EINVAL' || code === 'ENOTSUP' || code === 'EPERM';
    answers.push({
      check: 'directory fsync',
      verdict: soft ? 'warning' : 'unsafe',
      message: soft
        ? `fsync of a directory is refused (${code}): a rename may not survive a crash of the file server`
        : `fsync of the directory failed: ${code}`,
    });
  }
  return answers;
}

/** A new file's mtime (set by the file server's clock) against this node's clock. */
export function clockCheck(dir: string): CheckAnswer {
  const file = scratchPath(dir, 'clock');
  try {
    const before = Date.now();
    const fd = openSync(file, 'wx');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const after = Date.now();
    const mtime = statSync(file).mtimeMs;
    // Within [before, after] (plus a timestamp's coarseness) the clocks agree as far as can be told.
    const slack = 50;
    const skew = mtime < before - slack ? mtime - before : mtime > after + slack ? mtime - after : 0;
    const seconds = Math.round(skew / 100) / 10;
    const abs = Math.abs(seconds);
    const effect =
      seconds < 0
        ? `the server's clock is ${abs}s behind this node's: state files look ${abs}s older than they are, so \`sweep --older-than\` removes tombstones ${abs}s early`
        : `the server's clock is ${abs}s ahead of this node's: state files look ${abs}s younger, so \`sweep --older-than\` removes tombstones ${abs}s late`;
    const verdict: Verdict = abs > 60 ? 'unsafe' : abs > 2 ? 'warning' : 'ok';
    return {
      check: 'clock skew',
      verdict,
      message:
        skew === 0
          ? "a new file's mtime agrees with this node's clock: `sweep --older-than` ages are as meant"
          : effect,
      skew_seconds: seconds,
      host: hostname(),
    };
  } catch (e) {
    return {
      check: 'clock skew',
      verdict: 'unsafe',
      message: `a file could not be created in the directory: ${errorText(e)}`,
      skew_seconds: null,
    };
  } finally {
    rmSync(file, { force: true });
    scratch.delete(file);
  }
}

const GiB = 2 ** 30;

export function spaceChecks(dir: string): CheckAnswer[] {
  const st = statfsSync(dir);
  const free = st.bavail * st.bsize;
  const total = st.blocks * st.bsize;
  const gib = (n: number) => (n >= GiB ? `${(n / GiB).toFixed(1)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`);
  const space: CheckAnswer = {
    check: 'free space',
    verdict: free === 0 ? 'unsafe' : free < GiB || free < total * 0.02 ? 'warning' : 'ok',
    message: `${gib(free)} free of ${gib(total)}${free === 0 ? ': writers and freezes will fail' : ''}`,
    free_bytes: free,
    total_bytes: total,
  };
  // Some filesystems report no inode counts (0 of 0): nothing to say then.
  const inodes: CheckAnswer =
    st.files === 0
      ? {
          check: 'free inodes',
          verdict: 'ok',
          message: 'the filesystem does not count inodes (no fixed limit reported)',
          free_inodes: null,
          total_inodes: null,
        }
      : {
          check: 'free inodes',
          verdict: st.ffree === 0 ? 'unsafe' : st.ffree < st.files * 0.02 ? 'warning' : 'ok',
          message: `${st.ffree.toLocaleString('en-US')} inodes free of ${st.files.toLocaleString('en-US')} (each rollout takes up to five files)`,
          free_inodes: st.ffree,
          total_inodes: st.files,
        };
  return [space, inodes];
}
