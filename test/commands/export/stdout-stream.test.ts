/**
 * `export --out -` (docs/cli.md#export-formats): jsonl lines on standard output as
 * they are produced, through a real pipe; a partial stream and death by the signal when
 * interrupted; a reader that closes the pipe early (`| head -1`) stops tokcap quietly; formats
 * that are directories are refused before anything is read.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { BIN, cleanEnv, cli, ensureBuilt } from '../../support/cli.js';
import { DEMO_STORE, scratch, treeSnapshot } from '../../support/export.js';
import { holdersKilledAfterEach } from '../../support/reliability.js';

let root: string;
let store: string;
const ROLLOUTS = 200;

beforeAll(async () => {
  await ensureBuilt();
  root = scratch('stdout');
  store = join(root, 'store');
  await generateStore({ dir: store }, { rollouts: ROLLOUTS, calls: 6, mix: true, seed: 5 });
}, 180_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const holders = holdersKilledAfterEach();

describe('export --out -', () => {
  it('writes exactly the bytes of the file export to stdout; the summary goes to stderr', async () => {
    const file = join(root, 'demo.jsonl');
    expect((await cli(['export', DEMO_STORE, '--out', file])).code).toBe(0);
    const before = treeSnapshot(DEMO_STORE);
    const r = await cli(['export', DEMO_STORE, '--out', '-']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(readFileSync(file, 'utf8'));
    expect(r.stderr).toBe(
      'exported 8 rollouts to standard output (jsonl): 2 trainable, 6 masked (1 could not be built)\n',
    );
    expect(treeSnapshot(DEMO_STORE)).toEqual(before);

    const j = await cli(['export', DEMO_STORE, '--out', '-', '--json', '--trainable-only']);
    expect(j.code).toBe(0);
    expect(
      j.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { mask_sample: boolean }).mask_sample),
    ).toEqual([false, false]);
    expect(JSON.parse(j.stderr)).toEqual({
      out: '-',
      format: 'jsonl',
      rollouts: 8,
      trainable: 2,
      masked: 6,
      failed: 1,
      exported: 2,
    });

    const q = await cli(['export', DEMO_STORE, '--out', '-', '-q']);
    expect(q.stderr).toBe('');
    expect(q.stdout).toBe(readFileSync(file, 'utf8'));
  });

  it('is refused with a usage error for a format that is a directory, before anything is read', async () => {
    const r = await cli(['export', join(root, 'does-not-exist'), '--out', '-', '--format', 'tinker']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      '--out - (standard output) takes --format jsonl only: --format tinker writes a directory',
    );
  });

  it('through a real pipe: the first line arrives while the export runs; SIGTERM leaves a partial stream and kills tokcap', async () => {
    // python3 holds the lock of the 100th rollout with a capture file: the export streams the
    // rollouts before it and waits there.
    const held = readdirSync(store)
      .filter((n) => n.endsWith('.tokens.jsonl'))
      .sort()[99]
      .slice(0, -'.tokens.jsonl'.length);
    await holders.lock(store, held, 'ex', 600);
    const child = execa('node', [BIN, 'export', store, '--out', '-', '--lock-wait', '600s'], {
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      buffer: false,
    });
    let received = '';
    let runningAtFirstLine: boolean | undefined;
    const firstLine = new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        if (runningAtFirstLine === undefined && received.includes('\n')) {
          runningAtFirstLine = child.exitCode === null;
          resolve();
        }
      });
      child.once('exit', () => reject(new Error('the export ended before its first line was read')));
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await firstLine;
    expect(runningAtFirstLine).toBe(true);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.signal).toBe('SIGTERM');
    expect(stderr).toBe('');
    // What arrived is lines in rollout-id order, not all of them; the last may be cut short
    // (the signal can come while a line is half-way through the pipe).
    const whole = received.slice(0, received.lastIndexOf('\n'));
    const rest = received.slice(whole.length + 1);
    expect(rest.startsWith('{"rollout_id":"r') || rest === '').toBe(true);
    const ids = whole.split('\n').map((l) => (JSON.parse(l) as { rollout_id: string }).rollout_id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.filter((id) => id >= held)).toEqual([]);
    expect(ids).toEqual([...ids].sort());
  });

  it('| head -1: tokcap stops quietly when the reader goes away (no EPIPE stack trace)', async () => {
    const out = join(root, 'head.txt');
    const r = await execa(
      'bash',
      ['-c', `node "${BIN}" export "${store}" --out - | head -1 > "${out}"; echo "\${PIPESTATUS[@]}"`],
      {
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('0 0');
    const lines = readFileSync(out, 'utf8').split('\n');
    expect(lines).toHaveLength(2);
    expect((JSON.parse(lines[0]) as { rollout_id: string }).rollout_id).toBe('r000');
  });
});
