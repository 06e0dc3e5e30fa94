/**
 * What an export leaves when it cannot finish (docs/export.md#atomic-output-and-interruptions):
 * `--format store` is built in a temporary sibling and renamed into place, so a SIGKILL mid-copy
 * leaves nothing at the target and a rerun is not refused; a write that fails (a file-size limit
 * here, as a full disk would) names the target, never a rollout that was read, removes what was
 * written, and still prints the summary or the --json document. Every format.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBuilt } from '../support/cli-binary.js';
import { cli } from '../support/cli.js';

const root = mkdtempSync(join(tmpdir(), 'tokcap-output-failure-'));
const store = join(root, 'store');
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(async () => {
  ensureBuilt();
  expect((await cli(['fixture', store, '--rollouts', '6', '--calls', '3', '-q'])).code).toBe(0);
});

/** tokcap with files limited to 512 bytes (SIGXFSZ ignored: a write past it fails with EFBIG). */
function limited(args: string[]) {
  const quoted = args.map((a) => `'${a}'`).join(' ');
  return execa('sh', ['-c', `trap '' XFSZ; ulimit -f 1; exec "${process.execPath}" '${BIN}' ${quoted}`], {
    reject: false,
    env: { NO_COLOR: '1', TOKCAP_DIR: '' },
  });
}

describe('a write that fails', () => {
  for (const format of ['jsonl', 'store', 'tinker', 'parquet']) {
    for (const json of [false, true]) {
      it(`${format}${json ? ' --json' : ''}: names the target, leaves nothing, still reports`, async () => {
        const outDir = mkdtempSync(join(root, 'out-'));
        const out = join(outDir, `x-${format}`);
        const r = await limited(['export', store, '--format', format, '--out', out, ...(json ? ['--json'] : [])]);
        expect(r.exitCode).toBe(3);
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(new RegExp(`^tokcap: ${out}: `));
        expect(lines[0]).not.toMatch(/tokcap: r\d/);
        // Nothing partial at the target, and no temporary sibling left behind.
        expect(readdirSync(outDir).filter((n) => n !== `x-${format}` || format !== 'parquet')).toEqual([]);
        if (format !== 'parquet') expect(existsSync(out)).toBe(false);
        else expect(readdirSync(join(out, 'calls')).concat(readdirSync(join(out, 'rollouts')))).toEqual([]);
        if (json) {
          const doc = JSON.parse(r.stdout) as Record<string, unknown>;
          expect(doc).toMatchObject({ out, format, exported: 0, error: { kind: 'io' } });
          expect(typeof doc.rollouts).toBe('number');
        } else {
          expect(r.stdout).toMatch(
            new RegExp(
              `^nothing exported to ${out} \\(${format}\\): the output could not be written; \\d+ rollouts? read`,
            ),
          );
        }
      });
    }
  }
});

describe('export --format store interrupted by SIGKILL', () => {
  it('leaves nothing at the target, and a rerun is not refused', async () => {
    const lockHolder = execa(
      'python3',
      [
        '-c',
        'import fcntl,sys,time\nf=open(sys.argv[1],"a+b")\nfcntl.flock(f.fileno(),fcntl.LOCK_EX)\nprint("held",flush=True)\ntime.sleep(3600)',
        join(store, 'r5.tokens.lock'),
      ],
      { reject: false },
    );
    try {
      await new Promise<void>((res) => lockHolder.stdout!.once('data', () => res()));
      const outDir = mkdtempSync(join(root, 'killed-'));
      const out = join(outDir, 'copy');
      const run = execa(
        process.execPath,
        [BIN, 'export', store, '--format', 'store', '--out', out, '--lock-wait', '1h'],
        { reject: false },
      );
      // Waits while r0..r4 are copied into the temporary sibling and r5's lock is awaited.
      for (;;) {
        const staged = readdirSync(outDir).filter((n) => n.startsWith('.copy.tokcap-tmp-'));
        if (staged.length === 1 && readdirSync(join(outDir, staged[0])).filter((n) => n.startsWith('r4.')).length >= 3)
          break;
        await new Promise((res) => setTimeout(res, 50));
      }
      run.kill('SIGKILL');
      await run;
      expect(existsSync(out)).toBe(false);
      lockHolder.kill('SIGKILL');
      const again = await cli(['export', store, '--format', 'store', '--out', out]);
      expect(again.code).toBe(0);
      expect(readdirSync(out).filter((n) => n.startsWith('r5.')).length).toBeGreaterThan(0);
      expect((await cli(['verify-digests', out, '--json'])).code).toBe(0);
    } finally {
      lockHolder.kill('SIGKILL');
      await lockHolder.catch(() => undefined);
    }
  });
});
