/**
 * `export --format store` (docs/cli.md#export-formats): the chosen rollouts copied as a capture
 * directory, byte for byte, each under one shared lock, no lock files; `verify-digests` of the
 * copy finds exactly what it finds on the source for those rollouts, on a damaged store too.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { rolloutPaths } from '../../../src/layout/file-names.js';
import { BIN, cleanEnv, cli, ROOT } from '../../support/cli.js';
import { DEMO_STORE, copyStore, scratch, treeSnapshot } from '../../support/export.js';
import { holdLock } from '../../support/reliability.js';

const PY_STORE = join(ROOT, 'test', 'support', 'py_store.py');
const CAPTURE_FILE = /\.tokens\.(jsonl|state\.json|intents|incomplete)$/;

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function target(label: string): string {
  const d = scratch(label);
  cleanup.push(d);
  return join(d, 'copy');
}

async function verify(dir: string, ids: readonly string[] = []): Promise<unknown> {
  const r = await cli(['verify-digests', dir, ...ids, '--json']);
  return { code: r.code, doc: JSON.parse(r.stdout) as unknown };
}

/** The capture files of `ids` (all when omitted) in `dir`, with their bytes. */
function captureFiles(dir: string, ids?: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    if (!CAPTURE_FILE.test(name)) continue;
    if (ids && !ids.some((id) => name.startsWith(`${id}.tokens.`) && CAPTURE_FILE.test(name.slice(id.length))))
      continue;
    out[name] = readFileSync(join(dir, name)).toString('base64');
  }
  return out;
}

describe('export --format store', () => {
  it('copies every capture file byte for byte, with the writer’s modes and the source’s mtimes; no lock files; the source unchanged', async () => {
    const src = copyStore(DEMO_STORE, 'store-src');
    cleanup.push(src);
    // A foreign file and an orphan temporary state file stay behind.
    writeFileSync(join(src, 'notes.txt'), 'not a capture file\n');
    writeFileSync(join(src, '.tokens-state-abcd1234'), '{}');
    const before = treeSnapshot(src);
    const out = target('all');
    const r = await cli(['export', src, '--format', 'store', '--out', out, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      out,
      format: 'store',
      rollouts: 8,
      trainable: 2,
      masked: 6,
      failed: 1,
      exported: 8,
    });
    expect(treeSnapshot(src)).toEqual(before);

    expect(readdirSync(out).sort()).toEqual(Object.keys(captureFiles(src)));
    expect(captureFiles(out)).toEqual(captureFiles(src));
    for (const name of readdirSync(out)) {
      const st = statSync(join(out, name));
      expect(st.mode & 0o777, name).toBe(name.endsWith('.state.json') ? 0o600 : 0o666 & ~process.umask());
      expect(Math.abs(st.mtimeMs - statSync(join(src, name)).mtimeMs), name).toBeLessThan(0.01);
    }
    expect(await verify(out)).toEqual(await verify(src));
    // The copy is a store tokcap reads as the source: the same builds.
    const a = await cli(['build', src, '--json']);
    const b = await cli(['build', out, '--json']);
    expect(b.stdout).toBe(a.stdout);
  });

  it('on a damaged store, verify-digests of the copy finds exactly what it finds on the source for the chosen rollouts', async () => {
    const d = scratch('damaged');
    cleanup.push(d);
    const src = join(d, 'src');
    const { rollouts } = await generateStore(
      { dir: src },
      { rollouts: 24, calls: 4, prompt: 12, gen: 4, turn: 5, seed: 7, mix: true },
    );
    // Damage: a flipped byte inside the index, an entry digest removed, a garbage line, a torn tail.
    const flip = rolloutPaths(src, rollouts[0]).jsonl;
    const bytes = readFileSync(flip);
    bytes[bytes.indexOf('"generation_token_ids":[') + 25] ^= 1;
    writeFileSync(flip, bytes);
    const state = rolloutPaths(src, rollouts[1]).state;
    const s = JSON.parse(readFileSync(state, 'utf8')) as { entry_digests: Record<string, string> };
    delete s.entry_digests[Object.keys(s.entry_digests)[0]];
    writeFileSync(state, `${JSON.stringify(s)}\n`);
    appendFileSync(rolloutPaths(src, rollouts[2]).jsonl, 'not json at all\n{"a":1}\n');
    appendFileSync(rolloutPaths(src, rollouts[3]).jsonl, '{"model_call_id":"torn');
    const chosen = [
      rollouts[0],
      rollouts[1],
      rollouts[2],
      rollouts[3],
      rollouts[5],
      rollouts[6],
      rollouts[7],
      rollouts[10],
    ];

    const sourceFindings = await verify(src, chosen);
    expect((sourceFindings as { code: number }).code).toBe(1);
    const out = target('damaged');
    const r = await cli(['export', src, ...chosen, '--format', 'store', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(captureFiles(out)).toEqual(captureFiles(src, chosen));
    expect(await verify(out)).toEqual(sourceFindings);
    expect(await verify(out, chosen)).toEqual(sourceFindings);
  });

  it('each rollout is copied under one shared lock: a writer appending meanwhile never leaves a copy whose state and records disagree', async () => {
    const d = scratch('live');
    cleanup.push(d);
    const src = join(d, 'src');
    await generateStore({ dir: src }, { rollouts: 3, calls: 2, prompt: 12, gen: 4, turn: 5, seed: 9 });
    const live = ['w0', 'w1', 'w2'];
    const writer = execa(
      'python3',
      [
        PY_STORE,
        src,
        'writer',
        '--rollouts',
        live.join(','),
        '--seconds',
        '6',
        '--seed',
        '4',
        '--log',
        join(d, 'writer.log'),
        '--gen-ms',
        '1',
      ],
      {
        reject: false,
      },
    );
    try {
      // Wait for the writer's first records.
      while (!existsSync(rolloutPaths(src, 'w0').state)) await new Promise((res) => setTimeout(res, 20));
      let copies = 0;
      while (writer.exitCode === null && copies < 6) {
        const out = join(d, `copy-${copies++}`);
        const r = await cli(['export', src, ...live, '--format', 'store', '--out', out]);
        expect(r.code, r.stderr).toBe(0);
        // Every appended line is indexed in the copied state: no unindexed tail, nothing missing.
        const v = (await verify(out)) as { code: number; doc: { ok: boolean; findings: { code: string }[] } };
        expect(v.doc.findings, JSON.stringify(v.doc.findings)).toEqual([]);
      }
      expect(copies).toBeGreaterThan(1);
    } finally {
      writer.kill('SIGKILL');
      await writer;
    }
  });

  it('a rollout whose lock cannot be had is left out (no file of it), reported, exit 3; the others are copied', async () => {
    const src = copyStore(DEMO_STORE, 'store-lock');
    cleanup.push(src);
    const holder: ResultPromise = execa(
      'python3',
      [
        '-c',
        'import fcntl,sys,time\nf=open(sys.argv[1],"a")\nfcntl.flock(f,fcntl.LOCK_EX)\nprint("locked",flush=True)\ntime.sleep(30)',
        rolloutPaths(src, 'demo-3').lock,
      ],
      { reject: false, buffer: false },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.once('data', () => resolve());
        holder.once('exit', () => reject(new Error('lock holder exited')));
      });
      const out = target('lock');
      const r = await cli(['export', src, '--format', 'store', '--out', out, '--lock-wait', '1s', '--json']);
      expect(r.code).toBe(3);
      expect(r.stderr.trim()).toBe('tokcap: demo-3: timed out after 1s waiting for the lock of rollout demo-3');
      expect(JSON.parse(r.stdout)).toMatchObject({ rollouts: 8, trainable: 2, masked: 5, exported: 7 });
      expect(readdirSync(out).filter((n) => n.startsWith('demo-3.'))).toEqual([]);
      const others = ['demo-0', 'demo-1', 'demo-2', 'demo-4', 'demo-5', 'demo-6', 'demo-7'];
      expect(captureFiles(out)).toEqual(captureFiles(src, others));
    } finally {
      holder.kill('SIGKILL');
      await holder;
    }
  });

  it('--trainable-only copies the trainable rollouts only', async () => {
    const out = target('trainable');
    const r = await cli(['export', DEMO_STORE, '--format', 'store', '--trainable-only', '--out', out, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rollouts: 8, trainable: 2, exported: 2 });
    const ids = [...new Set(readdirSync(out).map((n) => n.slice(0, n.indexOf('.tokens.'))))];
    const built = JSON.parse((await cli(['build', DEMO_STORE, '--json'])).stdout) as {
      rollout_id: string;
      mask_sample: boolean;
    }[];
    expect(ids).toEqual(built.filter((b) => !b.mask_sample).map((b) => b.rollout_id));
  });

  it('the target: absent or empty; not empty only with --force, which replaces the copied rollouts’ files and leaves the rest', async () => {
    const out = target('target');
    mkdirSync(out);
    expect((await cli(['export', DEMO_STORE, 'demo-0', '--format', 'store', '--out', out])).code).toBe(0);
    // Not empty now.
    const again = await cli(['export', DEMO_STORE, 'demo-1', '--format', 'store', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`--out ${out}: is not empty; use --force`);
    expect(readdirSync(out).some((n) => n.startsWith('demo-1.'))).toBe(false);
    // The copy's demo-0 gets a stale marker file the source does not have; --force replaces the
    // rollout's files (removing the stale one) and keeps everything else.
    writeFileSync(rolloutPaths(out, 'demo-0').incomplete, 'stale\n');
    writeFileSync(join(out, 'keep.txt'), 'mine\n');
    const forced = await cli(['export', DEMO_STORE, 'demo-0', 'demo-1', '--format', 'store', '--out', out, '--force']);
    expect(forced.code).toBe(0);
    expect(captureFiles(out)).toEqual(captureFiles(DEMO_STORE, ['demo-0', 'demo-1']));
    expect(readFileSync(join(out, 'keep.txt'), 'utf8')).toBe('mine\n');

    const file = join(out, '..', 'a-file');
    writeFileSync(file, 'x');
    const onFile = await cli(['export', DEMO_STORE, '--format', 'store', '--out', file, '--force']);
    expect(onFile.code).toBe(2);
    expect(onFile.stderr).toContain('is not a directory');
    const src = copyStore(DEMO_STORE, 'store-self');
    cleanup.push(src);
    const self = await cli(['export', src, '--format', 'store', '--out', src, '--force']);
    expect(self.code).toBe(2);
    expect(self.stderr).toContain('refusing to write over the capture directory');
  });

  it('SIGTERM half-way: tokcap dies of it, and leaves nothing at the target and no temporary sibling', async () => {
    const d = scratch('store-term');
    cleanup.push(d);
    const src = join(d, 'src');
    await generateStore({ dir: src }, { rollouts: 150, calls: 6, mix: true, seed: 8 });
    const out = join(d, 'copy');
    // python3 holds the lock of the 20th rollout with a capture file: the copy stops there.
    const held = readdirSync(src)
      .filter((n) => n.endsWith('.tokens.jsonl'))
      .sort()[19]
      .slice(0, -'.tokens.jsonl'.length);
    const holder = await holdLock(src, held, 'ex', 3600);
    try {
      const child = execa('node', [BIN, 'export', src, '--format', 'store', '--out', out, '--lock-wait', '1h'], {
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      });
      const staged = () => readdirSync(d).find((n) => n.startsWith('.copy.tokcap-tmp-'));
      while (!(
        staged() !== undefined && readdirSync(join(d, staged()!)).filter((n) => CAPTURE_FILE.test(n)).length >= 6
      )) {
        if (child.exitCode !== null) throw new Error('the copy finished before it could be interrupted');
        await new Promise((res) => setTimeout(res, 5));
      }
      child.kill('SIGTERM');
      const r = await child;
      expect(r.signal).toBe('SIGTERM');
      expect(readdirSync(d).sort()).toEqual(['src']);
    } finally {
      holder.child.kill('SIGKILL');
      await holder.done;
    }
  }, 240_000);

  it('--freeze does not apply (usage error, before anything is read)', async () => {
    const r = await cli(['export', DEMO_STORE, '--all', '--freeze', '--format', 'store', '--out', target('freeze')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--freeze does not apply to --format store');
  });
});
