/**
 * Which filesystem a directory is on and what its mount says about locks (docs/cluster.md#doctor).
 * The type comes from statfs(2) (Node's `fs.statfs`, its `f_type` magic number) and the mount
 * from /proc/self/mountinfo (proc(5)): the entry whose mount point is the longest prefix of the
 * directory's real path, the last one listed when several are (a later mount covers an earlier).
 *
 * What the options mean for flock(2), per the filesystems' documentation:
 * - NFS: `local_lock=flock` or `local_lock=all` keep flock locks on the client (local to one
 *   node); `nolock` (NFSv2/3) makes every lock local. Otherwise the server enforces them (NFSv4
 *   itself, NFSv3 through lockd/NLM).
 * - Lustre: `flock` is coherent across clients; `localflock` is local to one node; `noflock`
 *   refuses flock (ENOSYS). Without any of them the client's default applies.
 */

/** statfs f_type magic numbers (linux/magic.h and the filesystems' own headers). */
const MAGIC: ReadonlyMap<number, string> = new Map([
  [0xef53, 'ext4'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0x01021994, 'tmpfs'],
  [0x794c7630, 'overlay'],
  [0x2fc12fc1, 'zfs'],
  [0x6969, 'nfs'],
  [0x0bd00bd0, 'lustre'],
  [0x47504653, 'gpfs'],
  [0x00c36400, 'ceph'],
  [0x19830326, 'beegfs'],
  [0x65735546, 'fuse'],
  [0xff534d42, 'cifs'],
  [0xfe534d42, 'smb2'],
  [0x5346414f, 'afs'],
  [0x858458f6, 'ramfs'],
]);

export function filesystemName(magic: number): string | undefined {
  return MAGIC.get(magic);
}

export interface MountEntry {
  mountPoint: string;
  /** The mount's own options (field 6) and the filesystem's (after ` - `), as given. */
  mountOptions: string[];
  superOptions: string[];
  fstype: string;
  source: string;
}

/** `\040` and the other octal escapes of mountinfo's path fields. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** One line of /proc/self/mountinfo, or undefined when it is not one. */
export function parseMountinfoLine(line: string): MountEntry | undefined {
  const dash = line.indexOf(' - ');
  if (dash < 0) return undefined;
  const head = line.slice(0, dash).split(' ');
  const tail = line.slice(dash + 3).split(' ');
  if (head.length < 6 || tail.length < 3) return undefined;
  return {
    mountPoint: unescape(head[4]),
    mountOptions: head[5].split(','),
    fstype: tail[0],
    source: unescape(tail[1]),
    superOptions: tail[2].split(','),
  };
}

/** The mount that holds `realPath` (an absolute path without symlinks). */
export function mountOf(mountinfo: string, realPath: string): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const line of mountinfo.split('\n')) {
    const m = parseMountinfoLine(line);
    if (!m) continue;
    const p = m.mountPoint;
    const covers = p === '/' || realPath === p || realPath.startsWith(p.endsWith('/') ? p : `${p}/`);
    if (covers && (best === undefined || p.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

/** What a mount gives flock(2). `unsafe` when tokcap's exclusion does not hold across nodes. */
export interface LockMeaning {
  scope: 'node' | 'cluster' | 'local-only' | 'absent' | 'unknown';
  unsafe: boolean;
  message: string;
}

const LOCAL_FILESYSTEMS = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'tmpfs',
  'overlay',
  'zfs',
  'ramfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'vfat',
  'exfat',
]);

function option(m: MountEntry, name: string): string | undefined {
  for (const o of [...m.mountOptions, ...m.superOptions]) {
    if (o === name) return '';
    if (o.startsWith(`${name}=`)) return o.slice(name.length + 1);
  }
  return undefined;
}

export function lockMeaning(m: MountEntry): LockMeaning {
  const type = m.fstype.startsWith('fuse.') ? m.fstype : m.fstype.replace(/^nfs4$/, 'nfs');
  if (type === 'nfs') {
    const local = option(m, 'local_lock');
    if (option(m, 'nolock') !== undefined) {
      return {
        scope: 'local-only',
        unsafe: true,
        message:
          'NFS mounted with nolock: locks are local to each node, a lock taken on one node does not exclude another',
      };
    }
    if (local === 'flock' || local === 'all') {
      return {
        scope: 'local-only',
        unsafe: true,
        message: `NFS mounted with local_lock=${local}: flock locks are local to each node, a lock taken on one node does not exclude another`,
      };
    }
    const vers = option(m, 'vers');
    const lockd =
      vers !== undefined && /^[23]/.test(vers) ? ' (NFSv3: through lockd/NLM, which must run on every client)' : '';
    return {
      scope: 'cluster',
      unsafe: false,
      message: `NFS (vers=${vers ?? '?'}, local_lock=${local ?? 'none'}): flock locks are enforced by the server across nodes${lockd}`,
    };
  }
  if (type === 'lustre') {
    if (option(m, 'localflock') !== undefined) {
      return {
        scope: 'local-only',
        unsafe: true,
        message:
          'Lustre mounted with localflock: locks are local to each node, a lock taken on one node does not exclude another (mount with -o flock)',
      };
    }
    if (option(m, 'noflock') !== undefined)
      return {
        scope: 'absent',
        unsafe: true,
        message: 'Lustre mounted with noflock: flock fails (ENOSYS) and tokcap cannot lock (mount with -o flock)',
      };
    if (option(m, 'flock') !== undefined)
      return { scope: 'cluster', unsafe: false, message: 'Lustre mounted with flock: locks are coherent across nodes' };
    return {
      scope: 'unknown',
      unsafe: false,
      message:
        'Lustre without flock, localflock or noflock in its options: the client default applies; check across nodes with --hold and --probe',
    };
  }
  if (LOCAL_FILESYSTEMS.has(type))
    return {
      scope: 'node',
      unsafe: false,
      message: `${type} is a local filesystem: only this node reaches it, and its locks exclude every process here`,
    };
  return {
    scope: 'unknown',
    unsafe: false,
    message: `${m.fstype}: whether flock excludes across nodes depends on its configuration; check with --hold on one node and --probe on another`,
  };
}
