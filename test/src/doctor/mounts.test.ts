import { describe, expect, it } from 'vitest';
import { filesystemName, lockMeaning, mountOf, parseMountinfoLine } from '../../../src/doctor/mounts.js';

/**
 * docs/cluster.md#doctor: what a mount's options mean for flock. No NFS or Lustre mount exists
 * here, so these are /proc/self/mountinfo lines as those clients write them.
 */
const NFS4 =
  '112 27 0:52 / /shared rw,relatime shared:60 - nfs4 fs01:/export/shared rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.5,local_lock=none,addr=10.0.0.2';
const NFS4_LOCAL_FLOCK = NFS4.replace('local_lock=none', 'local_lock=flock');
const NFS4_LOCAL_ALL = NFS4.replace('local_lock=none', 'local_lock=all');
const NFS3_NOLOCK =
  '113 27 0:53 / /scratch rw,relatime shared:61 - nfs fs02:/scratch rw,vers=3,rsize=1048576,wsize=1048576,namlen=255,hard,nolock,proto=tcp,timeo=600,retrans=2,sec=sys,mountaddr=10.0.0.3,mountvers=3,mountport=20048,mountproto=udp,local_lock=all,addr=10.0.0.3';
const NFS3 = NFS3_NOLOCK.replace(',nolock', '').replace('local_lock=all', 'local_lock=none');
const LUSTRE = (opt: string) =>
  `120 27 0:60 / /lustre rw,relatime shared:70 - lustre 10.0.0.10@o2ib:/fs1 rw${opt ? `,${opt}` : ''},lazystatfs,user_xattr`;

describe('lockMeaning: local-only locks are named as such', () => {
  it.each([
    ['NFSv4.2, local_lock=none', NFS4, 'cluster', false],
    ['NFSv4.2, local_lock=flock', NFS4_LOCAL_FLOCK, 'local-only', true],
    ['NFSv4.2, local_lock=all', NFS4_LOCAL_ALL, 'local-only', true],
    ['NFSv3, nolock', NFS3_NOLOCK, 'local-only', true],
    ['NFSv3 with lockd', NFS3, 'cluster', false],
    ['Lustre -o flock', LUSTRE('flock'), 'cluster', false],
    ['Lustre -o localflock', LUSTRE('localflock'), 'local-only', true],
    ['Lustre -o noflock', LUSTRE('noflock'), 'absent', true],
    ['Lustre without a flock option', LUSTRE(''), 'unknown', false],
  ] as const)('%s', (_, line, scope, unsafe) => {
    const m = lockMeaning(parseMountinfoLine(line)!);
    expect([m.scope, m.unsafe]).toEqual([scope, unsafe]);
  });

  it('says why in words: the option, and that the lock does not exclude another node', () => {
    expect(lockMeaning(parseMountinfoLine(NFS4_LOCAL_FLOCK)!).message).toMatch(
      /local_lock=flock: flock locks are local to each node/,
    );
    expect(lockMeaning(parseMountinfoLine(NFS3_NOLOCK)!).message).toMatch(/nolock: locks are local to each node/);
    expect(lockMeaning(parseMountinfoLine(LUSTRE('localflock'))!).message).toMatch(
      /localflock: locks are local to each node.*-o flock/,
    );
    expect(lockMeaning(parseMountinfoLine(NFS3)!).message).toMatch(/lockd\/NLM/);
  });

  it('local filesystems: only this node reaches them', () => {
    const ext4 = parseMountinfoLine('27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard')!;
    expect(lockMeaning(ext4)).toMatchObject({ scope: 'node', unsafe: false });
    const ceph = parseMountinfoLine('130 27 0:70 / /ceph rw,relatime - ceph 10.0.0.20:6789:/ rw,name=admin')!;
    expect(lockMeaning(ceph)).toMatchObject({ scope: 'unknown', unsafe: false });
    expect(lockMeaning(ceph).message).toMatch(/--hold .* --probe/);
  });
});

describe('mountOf: the mount that holds a path', () => {
  const info = [
    '27 1 254:0 / / rw - ext4 /dev/vda rw',
    NFS4,
    LUSTRE('localflock'),
    '140 112 0:80 / /shared/my\\040dir rw - tmpfs none rw',
  ].join('\n');

  it('takes the longest mount point that is a prefix, by path components', () => {
    expect(mountOf(info, '/shared/runs/0001')?.fstype).toBe('nfs4');
    expect(mountOf(info, '/sharedness')?.fstype).toBe('ext4');
    expect(mountOf(info, '/lustre')?.fstype).toBe('lustre');
    expect(mountOf(info, '/shared/my dir/x')?.fstype).toBe('tmpfs');
  });

  it('a later mount on the same point covers an earlier one', () => {
    expect(mountOf(`${info}\n150 112 0:90 / /shared rw - tmpfs over rw`, '/shared/x')?.source).toBe('over');
  });

  it('statfs magic numbers', () => {
    expect([0xef53, 0x01021994, 0x6969, 0x0bd00bd0, 0x12345].map(filesystemName)).toEqual([
      'ext4',
      'tmpfs',
      'nfs',
      'lustre',
      undefined,
    ]);
  });
});
