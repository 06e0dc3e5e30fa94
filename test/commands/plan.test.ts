/**
 * The plan (commands/cli/plan.ts) reads a command line from the option table before commander loads;
 * ./main.ts starts work early by it. It must see the command, the options and the positionals
 * that the program then runs with: checked against the program itself, with recording modules.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planOf, plainDir } from '../../commands/cli/plan.js';
import { readSettings } from '../../commands/cli/settings.js';
import { commandOptionEntries, type CommandName } from '../../commands/cli/options.js';
import { cli, fakeIo, recordingLoaders } from '../support/cli.js';

const DIR = mkdtempSync(join(tmpdir(), 'tokcap-plan-'));
const plan = (...words: string[]) => planOf(['node', 'tokcap', ...words]);

describe('planOf', () => {
  it('finds the command where the program does, the values of global options skipped', () => {
    expect(plan('inspect', 'watch').command).toBe('inspect');
    expect(plan('--lock-wait', '5s', 'watch', DIR).command).toBe('watch');
    expect(plan('--color', 'never', '-q', '--json', 'inspect', 'watch').command).toBe('inspect');
    expect(plan('--', 'watch', DIR).command).toBe('watch');
    expect(plan('--json').word).toBeUndefined();
    expect(plan('nosuch', DIR)).toMatchObject({ word: 'nosuch', command: undefined });
  });

  it('reads options by the table: a value in its own word or after =, short and long, --no-color', () => {
    const p = plan('-q', 'export', DIR, '--out', 'watch', '--lock-wait=2s', '--no-color', 'r1');
    expect(p.positionals).toEqual([DIR, 'r1']);
    expect(Object.fromEntries(p.options!)).toEqual({ quiet: true, out: 'watch', lockWait: '2s', color: true });
    expect(plan('inspect', '--', '-r1').positionals).toEqual(['-r1']);
  });

  it('has no options when a word is not in the command table (it is not read further)', () => {
    expect(plan('inspect', DIR, '--nosuch').options).toBeUndefined();
    expect(plan('inspect', DIR, '--help').options).toBeUndefined();
    expect(plan('--help', 'inspect', DIR).options).toBeUndefined();
    expect(plan('inspect', DIR, '--json=1').options).toBeUndefined();
    expect(plan('inspect', DIR, '--status').options).toBeUndefined();
    // build's option, not verify-digests'.
    expect(plan('verify-digests', DIR, '--freeze').options).toBeUndefined();
  });

  it('sees the command, options and positionals that the program runs with', async () => {
    const lines = [
      ['inspect', 'watch'],
      ['--lock-wait', '5s', 'inspect', DIR, '--status', 'live'],
      ['--color', 'never', 'verify-digests', DIR, '--strict'],
      ['-q', '--json', 'build', DIR, 'r1', 'r2', '--model', 'm'],
      ['--color=never', '--lock-wait=2s', 'inspect', DIR, '--no-color'],
      ['export', DIR, '--out', join(DIR, 'watch'), '--format', 'jsonl'],
      ['--', 'inspect', DIR],
      ['fixture', DIR, '--rollouts', '3', '--calls', '1', '--no-fast'],
    ];
    for (const words of lines) {
      const rec = recordingLoaders();
      const { code } = await cli(words, fakeIo(), rec.loaders);
      const p = plan(...words);
      expect(code, words.join(' ')).toBe(0);
      expect(rec.loaded, words.join(' ')).toEqual([p.command]);
      const ctx = rec.contexts[0];
      expect(ctx.positionals).toEqual(p.positionals);
      const specs = new Map(commandOptionEntries(p.command as CommandName));
      for (const [key, raw] of p.options!) {
        const spec = specs.get(key)!;
        const options = ctx.options as Record<string, unknown>;
        if (raw === true)
          expect(options[key], `${words.join(' ')}: ${key}`).toBe(
            key === 'color' ? 'never' : key === 'fast' ? false : true,
          );
        else expect(options[key], `${words.join(' ')}: ${key}`).toEqual(spec.parse ? spec.parse(raw) : raw);
      }
    }
  });
});

describe('plainDir', () => {
  const keep = ['quiet', 'json', 'color', 'lockWait'];
  it('is the one positional, whatever options in `keep` surround it', () => {
    expect(plainDir(plan('inspect', 'runs/r42'), readSettings({}), keep)).toBe('runs/r42');
    expect(
      plainDir(plan('inspect', '-q', 'runs/r42', '--lock-wait', '5s', '--color=never'), readSettings({}), keep),
    ).toBe('runs/r42');
  });

  it('is $TOKCAP_DIR when there is no positional, unless it is empty', () => {
    expect(plainDir(plan('inspect', '--json'), readSettings({ TOKCAP_DIR: '/data/r42' }), keep)).toBe('/data/r42');
    expect(plainDir(plan('inspect'), readSettings({ TOKCAP_DIR: '' }), keep)).toBeUndefined();
    expect(plainDir(plan('inspect'), readSettings({}), keep)).toBeUndefined();
  });

  it('is unknown with ids, an option outside `keep` or one the table does not know', () => {
    expect(plainDir(plan('inspect', 'runs/r42', 'r-1'), readSettings({}), keep)).toBeUndefined();
    expect(plainDir(plan('inspect', 'runs/r42', '--deep'), readSettings({}), keep)).toBeUndefined();
    expect(plainDir(plan('inspect', 'runs/r42', '--nosuch'), readSettings({}), keep)).toBeUndefined();
  });
});

describe('readSettings', () => {
  it('takes TOKCAP_WORKERS as threads in all when it is a positive whole number, else leaves it to each job', () => {
    expect(readSettings({ TOKCAP_WORKERS: '1' }).threads).toBe(1);
    expect(readSettings({ TOKCAP_WORKERS: '4' }).threads).toBe(4);
    for (const v of ['0', '', '-1', '2.5', 'two', ' 2'])
      expect(readSettings({ TOKCAP_WORKERS: v }).threads, v).toBeUndefined();
    expect(readSettings({}).threads).toBeUndefined();
  });

  it('takes TOKCAP_DIR unless it is empty, and TOKCAP_DEBUG as the error report does', () => {
    expect(readSettings({ TOKCAP_DIR: '/d' }).dir).toBe('/d');
    expect(readSettings({ TOKCAP_DIR: '' }).dir).toBeUndefined();
    expect(readSettings({ TOKCAP_DEBUG: '1' }).debug).toBe(true);
    expect(readSettings({ TOKCAP_DEBUG: 'false' }).debug).toBe(false);
  });
});
