import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TokcapError } from '../../src/errors.js';
import { resolveDirAndIds } from '../../commands/cli/dir-and-ids.js';
import { cli, fakeIo, recordingLoaders } from '../support/cli.js';

const DIR = mkdtempSync(join(tmpdir(), 'tokcap-cli-'));
mkdirSync(join(DIR, 'runs'));
/** Where an export writes: outside the store it reads. */
const OUT = mkdtempSync(join(tmpdir(), 'tokcap-cli-out-'));

function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('dispatch and lazy loading', () => {
  it('loads only the module of the command that runs', async () => {
    const rec = recordingLoaders();
    const { code } = await cli(['sweep', DIR, '--older-than', '7d'], fakeIo(), rec.loaders);
    expect(code).toBe(0);
    expect(rec.loaded).toEqual(['sweep']);
    expect(rec.contexts[0].options).toMatchObject({
      olderThan: 604800,
      dryRun: false,
      json: false,
      quiet: false,
      color: 'auto',
      lockWait: 10,
    });
  });

  it('loads nothing on a usage error', async () => {
    const rec = recordingLoaders();
    const { code } = await cli(['sweep', DIR, '--older-than', '7'], fakeIo(), rec.loaders);
    expect(code).toBe(2);
    expect(rec.loaded).toEqual([]);
  });

  it('returns the exit code the command raised', async () => {
    const rec = recordingLoaders((ctx) => {
      ctx.raise(1);
    });
    expect((await cli(['verify-digests', DIR], fakeIo(), rec.loaders)).code).toBe(1);
  });

  it('highest code wins between what the command raised and what it threw', async () => {
    const rec = recordingLoaders((ctx) => {
      ctx.raise(1);
      throw new TokcapError('io', 'EIO: i/o error', { file: join(DIR, 'r1.tokens.jsonl') });
    });
    const { code, stderr } = await cli(['inspect', DIR], fakeIo(), rec.loaders);
    expect(code).toBe(3);
    expect(oneLine(stderr)).toBe(`tokcap: ${join(DIR, 'r1.tokens.jsonl')}: EIO: i/o error`);
  });

  it('maps unexpected exceptions to exit 3 with one line', async () => {
    const rec = recordingLoaders(() => {
      throw new TypeError('x is not a function');
    });
    const { code, stderr } = await cli(['inspect', DIR], fakeIo(), rec.loaders);
    expect(code).toBe(3);
    expect(oneLine(stderr)).toBe('tokcap: unexpected error: TypeError: x is not a function');
  });

  it('dispatches to the real command module', async () => {
    const { code, stderr } = await cli(['delete', DIR, 'r1', '-q']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
  });
});

describe('commander errors', () => {
  it.each([
    [['nosuchcmd'], /^tokcap: unknown command 'nosuchcmd'; see 'tokcap --help'$/],
    [['inspect', DIR, '--bogus'], /^tokcap: unknown option '--bogus'; see 'tokcap inspect --help'$/],
    [['inspect', DIR, '--stat', 'x'], /Did you mean one of --sort, --status\?/],
    [
      ['inspect', DIR, '--status', 'nope'],
      /^tokcap: --status: invalid value 'nope': allowed choices are all, live, frozen, retired, unavailable, corrupt, dangling, incomplete, missing_state, refused, retired_with_records, torn_tail, unindexed_tail; see/,
    ],
    [['inspect', DIR, '--limit', '0'], /^tokcap: --limit: expected a positive integer, got '0'/],
    [['sweep', DIR], /required option '--older-than <duration>' not specified/],
    [
      ['sweep', DIR, '--older-than', '7'],
      /^tokcap: --older-than: invalid duration '7': a duration needs a unit, e.g. 7d or 36h; see 'tokcap sweep --help'$/,
    ],
    [['sweep', DIR, '--older-than', '-1d'], /negative/],
    [['sweep', DIR, '--lock-wait', '5'], /^tokcap: --lock-wait: invalid duration '5'/],
    [['sweep', DIR, 'extra', '--older-than', '1d'], /too many arguments for 'sweep'/],
    [['completion'], /missing required argument 'SHELL'/],
    [['completion', 'tcsh'], /allowed choices are bash, zsh, fish/],
    [['delete', DIR, '-rf'], /unknown option '-rf' \(rollout ids that start with - go after --\)/],
    [['retire', DIR, 'r1', '--version', 'x', '--snapshot-id', 's'], /--version: expected a non-negative integer/],
    [['export', DIR, '--fields', 'a,,b', '--out', 'x'], /--fields: expected a comma-separated list/],
  ])('%j -> exit 2, one line', async (args, pattern) => {
    const { code, stderr, stdout } = await cli(args as string[]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(oneLine(stderr)).toMatch(pattern);
  });

  it('help and version exit 0 on stdout', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: tokcap');
    expect(help.stderr).toBe('');
    const sub = await cli(['sweep', '-h']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('tokcap sweep /data/captures --older-than 7d');
    const viaHelp = await cli(['help', 'freeze']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toContain('Usage: tokcap freeze');
    const version = await cli(['-V']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('bare tokcap shows help on stderr and exits 2', async () => {
    const { code, stdout, stderr } = await cli([]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('Usage: tokcap');
  });

  it('after --, --help is a rollout id (a valid one), not the help flag', async () => {
    const rec = recordingLoaders();
    const { code, stdout } = await cli(['delete', DIR, '--', '--help', '-V'], fakeIo(), rec.loaders);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(rec.contexts[0].ids).toEqual(['--help', '-V']);
  });
});

describe('-V/--version and retire --version', () => {
  it('retire owns --version <n>', async () => {
    const rec = recordingLoaders();
    const { code } = await cli(['retire', DIR, 'r1', '--snapshot-id', 'abc', '--version', '3'], fakeIo(), rec.loaders);
    expect(code).toBe(0);
    expect(rec.contexts[0].options).toMatchObject({ snapshotId: 'abc', version: 3 });
  });

  it('--version before a command is the program version', async () => {
    const { code, stdout } = await cli(['--version', 'retire']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('every command accepts -V (docs/cli.md#common-options); retire keeps --version <n> for the drop', async () => {
    for (const args of [
      ['inspect', DIR, '-V'],
      ['sweep', '--version'],
      ['retire', '-V'],
    ]) {
      const { code, stdout } = await cli(args);
      expect(code, args.join(' ')).toBe(0);
      expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    }
  });

  it('--snapshot-id and --version go together', async () => {
    const { code, stderr } = await cli(['retire', DIR, 'r1', '--version', '3']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toMatch(/--snapshot-id and --version go together/);
  });
});

describe('global options', () => {
  it('are accepted after and before the command; after wins', async () => {
    const rec = recordingLoaders();
    await cli(['--json', '--lock-wait', '1m', 'inspect', DIR, '-q', '--no-color'], fakeIo(), rec.loaders);
    expect(rec.contexts[0].options).toMatchObject({ json: true, quiet: true, color: 'never', lockWait: 60 });
    await cli(['--lock-wait', '1m', 'inspect', DIR, '--lock-wait', '2s'], fakeIo(), rec.loaders);
    expect(rec.contexts[1].options.lockWait).toBe(2);
    await cli(['inspect', DIR], fakeIo(), rec.loaders);
    expect(rec.contexts[2].options).toMatchObject({ json: false, quiet: false, color: 'auto', lockWait: 10 });
  });

  it('typed defaults are filled in', async () => {
    const rec = recordingLoaders();
    await cli(['build', DIR], fakeIo(), rec.loaders);
    expect(rec.contexts[0].options).toMatchObject({
      freeze: false,
      all: false,
      model: '',
      failOnMask: false,
      idsFrom: undefined,
    });
    const out = join(OUT, 'o.jsonl');
    await cli(['export', DIR, '--out', out, '--fields', 'builder, metrics,builder'], fakeIo(), rec.loaders);
    expect(rec.contexts[1].options).toMatchObject({
      out,
      format: 'jsonl',
      fields: ['builder', 'metrics'],
      force: false,
    });
  });
});

describe('DIR and ids', () => {
  it('DIR falls back to $TOKCAP_DIR; missing both is a usage error', async () => {
    const rec = recordingLoaders();
    await cli(['sweep', '--older-than', '0s'], fakeIo({ env: { TOKCAP_DIR: DIR } }), rec.loaders);
    expect(rec.contexts[0].dir).toBe(DIR);
    const { code, stderr } = await cli(['sweep', '--older-than', '0s'], fakeIo({ env: {} }), rec.loaders);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe("tokcap: no capture directory: give DIR or set TOKCAP_DIR; see 'tokcap sweep --help'");
    expect((await cli(['inspect'], fakeIo({ env: { TOKCAP_DIR: '' } }), rec.loaders)).code).toBe(2);
  });

  it('positional ids then --ids-from, deduplicated in order; ids after --', async () => {
    const rec = recordingLoaders();
    const io = fakeIo({ stdin: '# list\nr2\n\nr4\n-rf\n' });
    const { code } = await cli(
      ['freeze', DIR, 'r1', 'r2', '--ids-from', '-', '--', 'r3', '-rf', 'r1'],
      io,
      rec.loaders,
    );
    expect(code).toBe(0);
    expect(rec.contexts[0].ids).toEqual(['r1', 'r2', 'r3', '-rf', 'r4']);
    expect(rec.contexts[0].idsGiven).toBe(true);
    expect(rec.contexts[0].dir).toBe(DIR);
  });

  it('read-only commands without ids cover every rollout', async () => {
    const rec = recordingLoaders();
    await cli(['inspect', DIR], fakeIo(), rec.loaders);
    expect(rec.contexts[0].ids).toEqual([]);
    expect(rec.contexts[0].idsGiven).toBe(false);
  });

  it('an unreadable --ids-from file is a usage error', async () => {
    const { code, stderr } = await cli(['inspect', DIR, '--ids-from', join(DIR, 'nope.txt')]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe(
      `tokcap: ${join(DIR, 'nope.txt')}: cannot read --ids-from file: ENOENT: no such file or directory`,
    );
  });

  it('with $TOKCAP_DIR, leading ids are ids', async () => {
    const rec = recordingLoaders();
    await cli(['delete', 'r1', 'r2'], fakeIo({ env: { TOKCAP_DIR: DIR } }), rec.loaders);
    expect(rec.contexts[0]).toMatchObject({ dir: DIR, ids: ['r1', 'r2'] });
    await cli(['inspect', `${DIR}/`, 'r1'], fakeIo({ env: { TOKCAP_DIR: '/elsewhere' } }), rec.loaders);
    expect(rec.contexts[1]).toMatchObject({ dir: `${DIR}/`, ids: ['r1'] });
  });
});

describe('resolveDirAndIds', () => {
  const isDir = (p: string) => p === 'runs' || p === '.';
  it('without $TOKCAP_DIR the first positional is DIR', () => {
    expect(resolveDirAndIds('inspect', ['runs', 'a'], undefined, false, isDir)).toEqual({ dir: 'runs', ids: ['a'] });
    expect(resolveDirAndIds('inspect', ['a', 'b'], undefined, false, isDir)).toEqual({ dir: 'a', ids: ['b'] });
  });
  it('with $TOKCAP_DIR, a non-id or existing directory is DIR for read-only commands', () => {
    const env = '/env';
    expect(resolveDirAndIds('inspect', ['/x/y', 'a'], env, false, isDir)).toEqual({ dir: '/x/y', ids: ['a'] });
    expect(resolveDirAndIds('inspect', ['runs', 'a'], env, false, isDir)).toEqual({ dir: 'runs', ids: ['a'] });
    expect(resolveDirAndIds('inspect', ['a', 'b'], env, false, isDir)).toEqual({ dir: '/env', ids: ['a', 'b'] });
  });
  it('with $TOKCAP_DIR, store-changing commands refuse to guess', () => {
    const env = '/env';
    expect(() => resolveDirAndIds('delete', ['runs', 'a'], env, true, isDir)).toThrow(
      /both a directory and a rollout id/,
    );
    expect(resolveDirAndIds('delete', ['./runs', 'a'], env, true, isDir)).toEqual({ dir: './runs', ids: ['a'] });
  });
  it('commands without ids always take the positional as DIR', () => {
    expect(resolveDirAndIds('sweep', ['runs'], '/env', true, isDir)).toEqual({ dir: 'runs', ids: [] });
    expect(resolveDirAndIds('completion', ['bash'], undefined, false, isDir)).toEqual({ dir: '', ids: [] });
  });
});

describe('rollout id validation', () => {
  it('one invalid id fails the batch with exit 2 before the module loads', async () => {
    const rec = recordingLoaders();
    const { code, stderr } = await cli(['inspect', DIR, 'ok', 'bad id', 'a/b'], fakeIo(), rec.loaders);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe("tokcap: Invalid rollout id: 'bad id'");
    expect(rec.loaded).toEqual([]);
  });

  it('ids from --ids-from are validated too', async () => {
    const rec = recordingLoaders();
    const { code } = await cli(['retire', DIR, '--ids-from', '-'], fakeIo({ stdin: 'ok\n../x\n' }), rec.loaders);
    expect(code).toBe(2);
    expect(rec.loaded).toEqual([]);
  });

  it('freeze --json leaves validation to the command (inline errors)', async () => {
    const rec = recordingLoaders();
    expect((await cli(['freeze', DIR, 'bad id'], fakeIo(), rec.loaders)).code).toBe(2);
    expect((await cli(['freeze', DIR, 'bad id', '--json'], fakeIo(), rec.loaders)).code).toBe(0);
    expect(rec.contexts[0].ids).toEqual(['bad id']);
  });

  it('build leaves validation to the command (a failed build per invalid id)', async () => {
    const rec = recordingLoaders();
    expect((await cli(['build', DIR, 'ok', 'bad id'], fakeIo(), rec.loaders)).code).toBe(0);
    expect(rec.contexts[0].ids).toEqual(['ok', 'bad id']);
  });
});

describe('store-changing commands need an explicit selection', () => {
  it.each([
    [['freeze', DIR], /freeze needs rollout ids, --ids-from or --all/],
    [['retire', DIR], /retire needs rollout ids or --ids-from/],
    [['delete', DIR], /delete needs rollout ids or --ids-from/],
    [['build', DIR, '--freeze'], /build --freeze needs rollout ids, --ids-from or --all/],
    [['export', DIR, '--freeze', '--out', 'o'], /export --freeze needs rollout ids, --ids-from or --all/],
    [['freeze', DIR, 'r1', '--all'], /--all cannot be combined/],
    [['build', DIR, '--all'], /--all only applies with --freeze/],
  ])('%j -> exit 2', async (args, pattern) => {
    const rec = recordingLoaders();
    const { code, stderr } = await cli(args as string[], fakeIo(), rec.loaders);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toMatch(pattern);
    expect(rec.loaded).toEqual([]);
  });

  it.each([
    [['freeze', DIR, '--all']],
    [['freeze', DIR, '--ids-from', '-']],
    [['build', DIR, '--freeze', '--all']],
    [['export', DIR, '--freeze', '--all', '--out', 'o']],
    [['build', DIR]],
    [['export', DIR, '--out', 'o']],
  ])('%j is accepted', async (args) => {
    const rec = recordingLoaders();
    expect((await cli(args, fakeIo({ stdin: '' }), rec.loaders)).code).toBe(0);
  });
});

describe('watch', () => {
  it('needs a TTY unless --once', async () => {
    const rec = recordingLoaders();
    const { code, stderr } = await cli(['watch', DIR], fakeIo(), rec.loaders);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toMatch(/tokcap inspect/);
    expect(rec.loaded).toEqual([]);
    expect((await cli(['watch', DIR, '--once', '--json'], fakeIo(), rec.loaders)).code).toBe(0);
    expect((await cli(['watch', DIR], fakeIo({ stdoutTTY: true }), rec.loaders)).code).toBe(0);
  });
});

describe('completion', () => {
  it('prints the script for a shell', async () => {
    const { code, stdout } = await cli(['completion', 'bash']);
    expect(code).toBe(0);
    expect(stdout).toContain('complete -F _tokcap tokcap');
  });
  it('with --json wraps it in one document', async () => {
    const { stdout } = await cli(['completion', 'fish', '--json']);
    const doc = JSON.parse(stdout) as { shell: string; script: string };
    expect(doc.shell).toBe('fish');
    expect(doc.script).toContain('complete -c tokcap');
  });
});
