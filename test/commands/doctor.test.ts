/**
 * `tokcap doctor` on the filesystems of this machine: the test directory's (ext4 or overlay) and a
 * tmpfs mounted for the test (root). Locks exclude on both, between tokcap processes and with a
 * real python3; nothing of doctor's is left in DIR, also after SIGINT. The two-node pair runs here
 * on one node: the probe says so; a probe granted a lock a holder claims (a hold file refreshed
 * but locked by nobody here, as on a filesystem whose locks are local to each node) fails with
 * exit 1; a hold file left by a SIGKILL is named as stale and never makes a verdict.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, ensureBuilt } from '../support/cli.js';

let root: string;
let tmpfs: string;

function tokcap(args: string[]) {
  return execa(process.execPath, [BIN, ...args], { env: cleanEnv(), extendEnv: false, reject: false });
}

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'tokcap-doctor-'));
  tmpfs = join(root, 'tmpfs');
  mkdirSync(tmpfs);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4g', 'tokcap-doctor-test', tmpfs]);
});

afterAll(() => {
  if (tmpfs) execFileSync('umount', [tmpfs]);
  rmSync(root, { recursive: true, force: true });
});

describe.each([
  ['the test directory', () => join(root, 'disk')],
  ['a tmpfs', () => tmpfs],
])('doctor on %s', (_, dirOf) => {
  it('every check passes, locks exclude both ways (tokcap and python3), and nothing is left in DIR', async () => {
    const dir = dirOf();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'keep.txt'), 'x');
    const r = await tokcap(['doctor', dir, '--json']);
    expect([r.exitCode, r.stderr]).toEqual([0, '']);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(true);
    const byName = Object.fromEntries(doc.checks.map((c: { check: string }) => [c.check, c]));
    expect(Object.keys(byName)).toEqual([
      'filesystem',
      'lock scope',
      'flock between processes',
      'flock with python3',
      'atomic rename',
      'directory fsync',
      'clock skew',
      'free space',
      'free inodes',
    ]);
    for (const c of ['flock between processes', 'flock with python3', 'atomic rename', 'directory fsync'])
      expect(byName[c].verdict).toBe('ok');
    expect(byName['flock with python3'].tokcap_holds).toEqual({ ex: false, sh: false });
    expect(byName['flock with python3'].other_holds).toEqual({ ex: false, sh: false });
    expect(byName['lock scope'].scope).toBe('node');
    expect(byName['clock skew'].skew_seconds).toBe(0);
    if (dir === tmpfs)
      expect(byName.filesystem).toMatchObject({
        type: 'tmpfs',
        statfs_type: '0x1021994',
        mount_point: tmpfs,
        source: 'tokcap-doctor-test',
      });
    expect(readdirSync(dir)).toEqual(['keep.txt']);
  });

  it('text: one verdict line per check, then the conclusion', async () => {
    const dir = dirOf();
    const r = await tokcap(['doctor', dir]);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(10);
    for (const l of lines.slice(0, 9)) expect(l).toMatch(/^ok {7}[a-z0-9 ]+: /);
    expect(lines[9]).toMatch(/^nothing found that makes tokcap unsafe/);
  });
});

describe('doctor --hold and --probe', () => {
  const dir = () => join(root, 'pair');
  const holdFile = () => join(dir(), '.tokcap-doctor-hold');

  it('on one node: the lock excludes, and the probe says both ran on the same node', async () => {
    mkdirSync(dir(), { recursive: true });
    const holder = tokcap(['doctor', dir(), '--hold', '8s']);
    const probe = await tokcap(['doctor', dir(), '--probe', '--wait', '20s', '--json']);
    expect(probe.exitCode, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({
      ok: true,
      excluded: true,
      same_node: true,
      holder: hostname(),
      verdict: 'warning',
    });
    const held = await holder;
    expect(held.exitCode).toBe(0);
    expect(existsSync(holdFile())).toBe(false);
  });

  it('a lock the holder claims but that is granted to the probe: exit 1 (locks local to each node)', async () => {
    mkdirSync(dir(), { recursive: true });
    // A holder on node-a as a node whose locks this node cannot see: it refreshes its file and locks nothing here.
    const beating = execa(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs'); let beat = 0;
         const write = () => fs.writeFileSync(process.argv[1], JSON.stringify({ host: 'node-a', pid: 1, until: Date.now() + 60000, beat: beat++ }));
         write(); setInterval(write, 250);`,
        holdFile(),
      ],
      { reject: false },
    );
    try {
      while (!existsSync(holdFile())) await sleep(50);
      const probe = await tokcap(['doctor', dir(), '--probe']);
      expect(probe.exitCode).toBe(1);
      expect(probe.stderr).toMatch(
        /the lock does NOT exclude across nodes \(held on node-a, tried on .*\): an exclusive lock was granted/,
      );
    } finally {
      beating.kill('SIGKILL');
      await beating;
      rmSync(holdFile());
    }
  });

  it('a SIGKILLed --hold leaves a stale file: the probe names it and gives no verdict, the next --hold replaces it', async () => {
    mkdirSync(dir(), { recursive: true });
    const holder = tokcap(['doctor', dir(), '--hold', '60s']);
    let left: { host: string; pid: number } | undefined;
    while (left === undefined) {
      await sleep(50);
      try {
        left = JSON.parse(readFileSync(holdFile(), 'utf8'));
      } catch {
        left = undefined;
      }
    }
    holder.kill('SIGKILL');
    expect((await holder).signal).toBe('SIGKILL');
    expect(left).toMatchObject({ host: hostname(), pid: holder.pid });
    expect(existsSync(holdFile())).toBe(true);

    const probe = await tokcap(['doctor', dir(), '--probe', '--wait', '1s']);
    expect(probe.exitCode).toBe(3);
    expect(probe.stderr.trim().split('\n')).toEqual([
      `tokcap: ${holdFile()}: no doctor --hold found within 1s, only a stale hold file of pid ${holder.pid} on ${hostname()}, whose process is not running (start \`tokcap doctor DIR --hold 60s\` on another node first)`,
    ]);
    expect(probe.stderr).not.toMatch(/NOT exclude/);

    const again = await tokcap(['doctor', dir(), '--hold', '1s', '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr.trim().split('\n')).toEqual([
      `tokcap: warning: ${holdFile()}: replaced a stale hold file of pid ${holder.pid} on ${hostname()}, whose process is not running`,
    ]);
    expect(JSON.parse(again.stdout).stale_hold).toEqual({ host: hostname(), pid: holder.pid, reason: 'not_running' });
    expect(readdirSync(dir())).toEqual([]);
  });

  it('a hold file of another host that is not refreshed is stale: the next --hold says so and replaces it', async () => {
    mkdirSync(dir(), { recursive: true });
    // As a holder SIGKILLed on node-b leaves it: its lock gone with it, its beat stopped.
    writeFileSync(holdFile(), JSON.stringify({ host: 'node-b', pid: 4242, until: Date.now() + 60_000, beat: 7 }));
    const r = await tokcap(['doctor', dir(), '--hold', '1s']);
    expect(r.exitCode, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('tokcap: warning:'));
    expect(warnings).toEqual([
      `tokcap: warning: ${holdFile()}: replaced a stale hold file of pid 4242 on node-b, not refreshed for 5s (its holder was killed, or its node is down)`,
    ]);
    expect(readdirSync(dir())).toEqual([]);
  });

  it('no holder within --wait: exit 3, and the probe creates nothing', async () => {
    mkdirSync(dir(), { recursive: true });
    const probe = await tokcap(['doctor', dir(), '--probe', '--wait', '1s']);
    expect(probe.exitCode).toBe(3);
    expect(probe.stderr).toMatch(/no doctor --hold found within 1s/);
    expect(readdirSync(dir())).toEqual([]);
  });

  it('Ctrl-C during --hold removes the hold file; the process dies of the signal', async () => {
    mkdirSync(dir(), { recursive: true });
    const holder = tokcap(['doctor', dir(), '--hold', '60s']);
    while (!existsSync(holdFile())) await sleep(50);
    holder.kill('SIGINT');
    const r = await holder;
    expect(r.signal).toBe('SIGINT');
    expect(readdirSync(dir())).toEqual([]);
  });

  it('--hold with --probe is a usage error', async () => {
    const r = await tokcap(['doctor', dir(), '--hold', '5s', '--probe']);
    expect(r.exitCode).toBe(2);
  });
});
