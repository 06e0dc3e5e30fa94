/**
 * The words a person reads: a missing rollout is not an empty DIR, a nonexistent id is "not
 * found" rather than "could not be read", an invalid id to build is said plainly, system errors are
 * one line in words, `help NAME` of no command is an unknown command, what --json counts the text
 * shows, durations are shown as given, nothing is cut outside a terminal, and `inspect DIR ID` says
 * delivered as `build` does.
 */
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TokcapError } from '../../src/errors.js';
import { formatErrorLine } from '../../commands/cli/errors.js';
import { cli, fakeIo } from '../support/cli.js';
import { DEMO_STORE, copyStore, scratch } from '../support/export.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});
const dir = copyStore(DEMO_STORE, 'words');
cleanup.push(join(dir, '..'));

describe('system errors are one line in words', () => {
  const CODES = [
    'EACCES',
    'EPERM',
    'ENOENT',
    'EISDIR',
    'ENOTDIR',
    'ENAMETOOLONG',
    'ELOOP',
    'ENOSPC',
    'EDQUOT',
    'EROFS',
    'EMFILE',
    'EIO',
    'EEXIST',
    'EXDEV',
    'EBUSY',
    'EFBIG',
    'ENOTEMPTY',
    'EWHATEVER',
  ];
  for (const code of CODES) {
    it(`${code}: no raw "${code}: ..." in the line, as a library error or a raw Node error`, () => {
      const raw = Object.assign(new Error(`${code}: some system text, unlink '/x/y'`), {
        code,
        errno: -1,
        syscall: 'unlink',
        path: '/x/y',
      });
      const wrapped = new TokcapError('io', raw.message, { file: '/x/y', cause: raw });
      for (const line of [formatErrorLine(raw), formatErrorLine(wrapped)]) {
        expect(line).toMatch(/^tokcap: \/x\/y: [a-z]/);
        expect(line).not.toContain(`${code}:`);
        expect(line.split('\n')).toHaveLength(1);
      }
    });
  }
});

describe('what a missing rollout is called', () => {
  it('a missing rollout and an empty DIR get different lines', async () => {
    const empty = scratch('words-empty');
    cleanup.push(empty);
    const missing = await cli(['inspect', dir, 'nosuch']);
    const none = await cli(['inspect', empty]);
    expect(missing.stderr).toBe(`tokcap: nosuch: no such rollout in ${dir} (no capture files)\n`);
    expect(none.stderr).toBe(`tokcap: ${empty}: no capture files\n`);
    const dots = await cli(['inspect', dir, '--', '..']);
    expect(dots.stderr).toBe(`tokcap: ..: no such rollout in ${dir} (no capture files)\n`);
  });

  it('verify-digests says a nonexistent id was not found, not that it could not be read', async () => {
    const r = await cli(['verify-digests', dir, 'nosuch']);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('1 rollout not found (no capture files, not verified): nosuch');
    expect(r.stdout).not.toContain('could not be read');
  });

  it('build DIR good a/b: the line names the id plainly; --json keeps the reference dictionary', async () => {
    const r = await cli(['build', dir, 'demo-0', 'a/b']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("tokcap: 'a/b': invalid rollout id");
    expect(r.stderr).not.toContain('ValueError');
    const j = await cli(['build', dir, 'demo-0', 'a/b', '--json']);
    const failed = (JSON.parse(j.stdout) as { rollout_id: string; error?: string }[]).find(
      (x) => x.rollout_id === 'a/b',
    );
    expect(failed?.error).toBe("ValueError: Invalid rollout id: 'a/b'");
  });
});

describe('help and durations', () => {
  it('tokcap help nosuch is an unknown command (exit 2); help sweep is the command help', async () => {
    const r = await cli(['help', 'nosuch']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tokcap: unknown command 'nosuch'/);
    const ok = await cli(['help', 'sweep']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('Usage: tokcap sweep');
  });

  it("export --help's exit-3 sentence names every cause", async () => {
    const r = await cli(['export', '--help']);
    expect(r.stdout.replace(/\s+/g, ' ')).toMatch(
      /Exit 3 when DIR cannot be listed or holds no capture file, the selection is empty .* a rollout could not be read .* or the output could not be written/,
    );
  });

  it('sweep shows --older-than 2d0.5h exactly', async () => {
    const d = copyStore(DEMO_STORE, 'words-sweep');
    cleanup.push(join(d, '..'));
    const retired = (await cli(['inspect', d, '--status', 'retired', '--json'])).stdout;
    const id = Object.keys((JSON.parse(retired) as { rollouts: Record<string, unknown> }).rollouts)[0];
    const old = Date.now() / 1000 - 3 * 86400;
    utimesSync(join(d, `${id}.tokens.state.json`), old, old);
    const r = await cli(['sweep', d, '--older-than', '2d0.5h', '--dry-run']);
    expect(r.stdout).toContain('(>= 2d30m)');
  });
});

describe('what the text shows', () => {
  it('watch --once text shows the orphan temporary state files its JSON counts', async () => {
    const d = copyStore(DEMO_STORE, 'words-watch');
    cleanup.push(join(d, '..'));
    writeFileSync(join(d, '.tokens-state-abc12345'), '{}');
    const io = () => fakeIo({ env: { TOKCAP_WORKERS: '1' } });
    const j = await cli(['watch', d, '--once', '--json'], io());
    expect((JSON.parse(j.stdout) as { totals: { temp_state_files: number } }).totals.temp_state_files).toBe(1);
    const t = await cli(['watch', d, '--once'], io());
    expect(t.stdout).toContain('temporary state files: .tokens-state-abc12345');
  });

  it('inspect DIR ID: nothing cut with … in a pipe, whatever COLUMNS says; delivered as build says it', async () => {
    const d = copyStore(DEMO_STORE, 'words-inspect');
    cleanup.push(join(d, '..'));
    for (const id of ['demo-0', 'demo-1', 'demo-2', 'demo-3', 'demo-4', 'demo-5', 'demo-6', 'demo-7']) {
      const r = await cli(['inspect', d, id], fakeIo({ env: { COLUMNS: '300' } }));
      expect(r.stdout).not.toContain('…');
    }
    const r = await cli(['inspect', d, 'demo-3']);
    const build = await cli(['build', d, 'demo-3']);
    const delivered = /delivered (\d+\/\d+ \(\d+\.\d%\))/.exec(build.stdout)?.[1];
    expect(delivered).toBeDefined();
    expect(r.stdout).toContain(`delivered ${delivered}`);
  });
});
