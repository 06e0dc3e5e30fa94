import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';
import { projectRoot } from '../support/conformance-corpus.js';
import { copyStore, snapshotTree } from '../support/tree.js';

/** End-to-end behaviour of the built binary that scripts, cron and CI rely on (docs/cli.md). */
const DEMO = join(projectRoot, 'fixtures', 'demo-store');
// eslint-disable-next-line no-control-regex -- an ANSI escape sequence
const ESC = /\u001b\[/;
const dirs: string[] = [];
const demo = () => {
  const d = copyStore(DEMO);
  dirs.push(d);
  return d;
};
const locks = (d: string) => readdirSync(d).filter((n) => n.endsWith('.tokens.lock'));

beforeAll(() => ensureBuilt(), 120_000);
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('exit codes', () => {
  it('0 when verify-digests finds only warnings (a torn tail)', async () => {
    const r = await tokcap(['verify-digests', demo()]);
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toContain('torn_tail');
  });

  it('1 when verify-digests finds an error, and with --strict on a warning', async () => {
    const d = demo();
    // Overwrite one token id inside an indexed line: same length, different bytes.
    const f = join(d, 'demo-0.tokens.jsonl');
    const text = (await import('node:fs')).readFileSync(f, 'utf8');
    writeFileSync(
      f,
      text
        .replace('"prompt_token_ids":[', '"prompt_token_ids":[9')
        .replace(/"prompt_token_ids":\[9(\d)/, '"prompt_token_ids":[$1'),
    );
    const strict = await tokcap(['verify-digests', demo(), '--strict']);
    expect(strict.exitCode).toBe(1);
    const bytes = (await import('node:fs')).readFileSync(f);
    const i = bytes.indexOf('"generation_token_ids":[') + '"generation_token_ids":['.length;
    bytes[i] = bytes[i] === 0x31 ? 0x32 : 0x31;
    writeFileSync(f, bytes);
    const r = await tokcap(['verify-digests', d, '--json']);
    expect(r.exitCode).toBe(1);
    const doc = JSON.parse(String(r.stdout));
    expect(doc.ok).toBe(false);
    expect(doc.findings.map((x: { code: string }) => x.code)).toContain('entry_digest_mismatch');
  });

  it('1 when a conditional drop is refused, with the reason on stderr', async () => {
    const r = await tokcap([
      'retire',
      demo(),
      'demo-5',
      '--snapshot-id',
      'ffffffffffffffffffffffffffffffff',
      '--version',
      '5',
    ]);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(/^tokcap: demo-5: not dropped: its snapshot id is [0-9a-f]{32}, not f{32}$/m);
  });

  it('1 with build --fail-on-mask when a rollout is masked', async () => {
    const r = await tokcap(['build', demo(), 'demo-3', '--fail-on-mask', '-q']);
    expect(r.exitCode).toBe(1);
  });

  it('2 on usage errors: unknown option, bad duration, invalid id — nothing read or changed', async () => {
    const d = demo();
    const before = snapshotTree(d);
    for (const args of [
      ['inspect', d, '--nope'],
      ['sweep', d, '--older-than', '7'],
      ['sweep', d, '--older-than', '-1d'],
      ['retire', d, 'demo-0', 'a/b'],
      ['delete', d, '--', '../x'],
      ['freeze', d, 'demo-1', 'bad id'],
    ]) {
      const r = await tokcap(args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      const lines = String(r.stderr).trim().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(/^tokcap: /);
      expect(String(r.stdout)).toBe('');
    }
    expect(snapshotTree(d)).toEqual(before);
  });

  it('3 when the store cannot be processed: freeze of a retired rollout, a missing DIR', async () => {
    const d = demo();
    const r = await tokcap(['freeze', d, 'demo-6']);
    expect(r.exitCode).toBe(3);
    expect(String(r.stderr).trim()).toBe('tokcap: demo-6: Token capture for rollout demo-6 is retired');
    const missing = await tokcap(['inspect', join(d, 'nope')]);
    expect(missing.exitCode).toBe(3);
    expect(String(missing.stderr).trim().split('\n')).toHaveLength(1);
    expect(String(missing.stderr)).not.toMatch(/\n\s+at /);
  });

  it('the highest code wins and every rollout is still processed', async () => {
    const d = demo();
    const r = await tokcap(['freeze', d, 'demo-0', 'demo-6', 'demo-1', '--json']);
    expect(r.exitCode).toBe(3);
    const doc = JSON.parse(String(r.stdout));
    expect(doc.map((x: { rollout_id: string }) => x.rollout_id)).toEqual(['demo-0', 'demo-6', 'demo-1']);
    expect(doc[1].error.kind).toBe('retired');
    expect(doc[2].snapshot_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('stack traces only with TOKCAP_DEBUG=1', async () => {
    const d = demo();
    const quiet = await tokcap(['freeze', d, 'demo-6']);
    expect(String(quiet.stderr)).not.toMatch(/\n\s+at /);
    const loud = await tokcap(['inspect', join(d, 'missing')], { env: { TOKCAP_DEBUG: '1' } });
    expect(String(loud.stderr)).toMatch(/\n\s+at /);
  });
});

describe('--json', () => {
  it('prints exactly one JSON document on stdout and nothing else', async () => {
    const d = demo();
    for (const args of [
      ['inspect', d, '--json'],
      ['inspect', d, 'demo-4', '--json'],
      ['build', d, '--json'],
      ['verify-digests', d, '--json'],
      ['sweep', d, '--older-than', '0s', '--dry-run', '--json'],
    ]) {
      const r = await tokcap(args);
      const out = String(r.stdout);
      expect(out.endsWith('\n'), args.join(' ')).toBe(true);
      expect(out.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(() => JSON.parse(out), args.join(' ')).not.toThrow();
    }
  });

  it('build preview results carry preview: true and no _capture_snapshot', async () => {
    const r = await tokcap(['build', demo(), 'demo-0', '--json']);
    const [res] = JSON.parse(String(r.stdout));
    expect(res.preview).toBe(true);
    expect(res).not.toHaveProperty('_capture_snapshot');
    expect(res.mask_sample).toBe(false);
  });

  it('build: an invalid id is that rollout’s failed build, the others are built', async () => {
    const d = demo();
    const r = await tokcap(['build', d, 'bad id', 'demo-0', '--json']);
    const doc = JSON.parse(String(r.stdout));
    // The reference's failed build, then the status fields of docs/cli.md#status (nothing to read: unavailable).
    expect(doc[0]).toEqual({
      rollout_id: 'bad id',
      builder: 'prefix_merging',
      rebuilt_response: null,
      mask_sample: true,
      error: "ValueError: Invalid rollout id: 'bad id'",
      metrics: { n_calls: 0 },
      status: 'unavailable',
      conditions: [],
      verdict: 'masked',
      error_kind: 'invalid_rollout_id',
    });
    expect(doc[1].rollout_id).toBe('demo-0');
    expect(existsSync(join(d, 'bad id.tokens.lock'))).toBe(false);
  });
});

describe('colour', () => {
  it('no escape codes when stdout is not a TTY, and none with NO_COLOR', async () => {
    const d = demo();
    for (const env of [{}, { NO_COLOR: '1', FORCE_COLOR: '3' }] as Record<string, string>[]) {
      for (const args of [
        ['inspect', d],
        ['inspect', d, 'demo-3'],
        ['build', d],
        ['verify-digests', d],
      ]) {
        const r = await tokcap(args, { env });
        expect(ESC.test(String(r.stdout)), args.join(' ')).toBe(false);
        expect(ESC.test(String(r.stderr)), args.join(' ')).toBe(false);
      }
    }
  });
});

describe('read-only guarantees', () => {
  it('inspect, build (preview), verify-digests and sweep --dry-run change nothing and create no lock file', async () => {
    const d = demo();
    const before = snapshotTree(d);
    for (const args of [
      ['inspect', d],
      ['inspect', d, '--deep', '--json'],
      ['inspect', d, 'demo-0', 'demo-7'],
      ['build', d],
      ['verify-digests', d],
      ['sweep', d, '--older-than', '0s', '--dry-run'],
    ]) {
      const r = await tokcap(args);
      expect(r.exitCode, args.join(' ')).toBeLessThan(2);
    }
    expect(locks(d)).toEqual([]);
    expect(snapshotTree(d)).toEqual(before);
  });
});

describe('sweep for cron', () => {
  it('is quiet when there is nothing to do, and idempotent', async () => {
    const d = demo();
    const nothing = await tokcap(['sweep', d, '--older-than', '3650d']);
    expect(nothing.exitCode).toBe(0);
    expect(String(nothing.stdout)).toBe('');
    expect(String(nothing.stderr)).toBe('');
    const first = await tokcap(['sweep', d, '--older-than', '0s', '--json']);
    expect(JSON.parse(String(first.stdout))).toMatchObject({ removed: ['demo-6'], count: 1, dry_run: false });
    const after = snapshotTree(d);
    const second = await tokcap(['sweep', d, '--older-than', '0s', '--json']);
    expect(second.exitCode).toBe(0);
    expect(JSON.parse(String(second.stdout))).toMatchObject({ removed: [], count: 0 });
    expect(snapshotTree(d)).toEqual(after);
  });

  it('--dry-run lists what would go and why', async () => {
    const r = await tokcap(['sweep', demo(), '--older-than', '0s', '--dry-run']);
    expect(String(r.stdout)).toMatch(/would remove demo-6 +retired tombstone/);
  });
});

describe('ids', () => {
  it('--ids-from reads ids from stdin, ignoring blanks and comments', async () => {
    const d = demo();
    const r = await tokcap(['retire', d, '--ids-from', '-', '--json'], { input: '# finished\ndemo-0\n\ndemo-1\n' });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual({ removed: ['demo-0', 'demo-1'], absent: [] });
  });

  it('DIR can come from $TOKCAP_DIR', async () => {
    const d = demo();
    const r = await tokcap(['inspect', '--json'], { env: { TOKCAP_DIR: d } });
    expect(r.exitCode).toBe(0);
    expect(Object.keys(JSON.parse(String(r.stdout)).rollouts)).toHaveLength(8);
  });

  it('mutating commands need ids or --all', async () => {
    const r = await tokcap(['freeze', demo()]);
    expect(r.exitCode).toBe(2);
  });
});
