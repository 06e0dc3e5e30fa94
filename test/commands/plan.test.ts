/**
 * The plan (commands/cli/plan.ts) reads a command line from the option table before commander loads;
 * ./main.ts starts work early by it. It must see the command, the options and the positionals
 * that the program then runs with: checked against the program itself, with recording modules.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { planOf, plainDir } from '../../commands/cli/plan.js';
import { readSettings } from '../../commands/cli/settings.js';
import {
  commandOptionEntries,
  COMMAND_NAMES,
  COMMANDS,
  GLOBAL_OPTIONS,
  optionLongFlag,
  optionShortFlag,
  optionValueName,
  type CommandName,
  type CommandSpec,
  type OptionSpec,
} from '../../commands/cli/options.js';
import { buildProgram } from '../../commands/cli/program.js';
import { withNoColorSpelledOut } from '../../commands/cli/run.js';
import { cli, fakeIo, recordingLoaders } from '../support/cli.js';

const DIR = mkdtempSync(join(tmpdir(), 'tokcap-plan-'));
/** Where an export writes: outside the store it reads. */
const OUT = mkdtempSync(join(tmpdir(), 'tokcap-plan-out-'));
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

  it('gives the completer the words after __complete, and only when it comes first', () => {
    expect(plan('__complete', 'inspect', '--st')).toMatchObject({
      command: undefined,
      completing: ['inspect', '--st'],
    });
    expect(plan('__complete').completing).toEqual([]);
    expect(plan('inspect', '__complete').completing).toBeUndefined();
    expect(plan('-q', '__complete', 'inspect').completing).toBeUndefined();
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
      ['export', DIR, '--out', join(OUT, 'watch'), '--format', 'jsonl'],
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

/** Every way the option table lets a command line be spelled, for every option of every command. */
describe('the plan and the program, over the whole option table', () => {
  const io = fakeIo();

  /**
   * What commander made of `words`: the command, its positionals and the options given; or the
   * code of the error it refused the line with.
   */
  async function parsed(words: readonly string[]) {
    const program = buildProgram({ io });
    let seen: { command: string; positionals: string[]; given: Map<string, unknown> } | undefined;
    const STOP = new Error('parsed');
    program.hook('preAction', (_top, sub) => {
      const given = new Map<string, unknown>();
      for (const cmd of [program, sub])
        for (const [key, value] of Object.entries(cmd.opts()))
          if (cmd.getOptionValueSource(key) === 'cli') given.set(key, value);
      seen = { command: sub.name(), positionals: [...sub.args], given };
      throw STOP;
    });
    try {
      await program.parseAsync(withNoColorSpelledOut(['node', 'tokcap', ...words]), { from: 'node' });
    } catch (e) {
      if (e !== STOP) return { refused: (e as CommanderError).code };
    }
    return seen!;
  }

  /** A value the option accepts: its last choice, or the first of a few its parser takes. */
  function valueFor(spec: OptionSpec<unknown>): string {
    if (spec.choices) return spec.choices[spec.choices.length - 1];
    const accepted = ['3', '5s', '0/2', 'x'].find((raw) => {
      try {
        spec.parse?.(raw);
        return true;
      } catch {
        return false;
      }
    });
    return accepted!;
  }

  /** The command's positionals and required options: a line commander takes. */
  function baseLine(name: CommandName): { positionals: string[]; required: string[] } {
    const spec = COMMANDS[name] as CommandSpec<CommandName>;
    const positionals = spec.args.map((a) =>
      a.choices ? a.choices[0] : a.name === 'DIR' ? DIR : a.name === 'ID' ? 'r1' : join(DIR, 'a.json'),
    );
    const required = (Object.values(spec.options) as OptionSpec<unknown>[])
      .filter((o) => o.required)
      .flatMap((o) => [optionLongFlag(o.flags), valueFor(o)]);
    return { positionals, required };
  }

  /** The spellings of one option: long, long=value, short; each as words. */
  function spellings(spec: OptionSpec<unknown>): string[][] {
    const long = optionLongFlag(spec.flags);
    const short = optionShortFlag(spec.flags);
    if (optionValueName(spec.flags) === undefined) return [[long], ...(short ? [[short]] : [])];
    const value = valueFor(spec);
    return [[long, value], [`${long}=${value}`], ...(short ? [[short, value]] : [])];
  }

  /** What commander holds for a flag given as `raw` in the plan. */
  function expected(key: string, spec: OptionSpec<unknown>, raw: string | true): unknown {
    if (raw !== true) return spec.parse ? spec.parse(raw) : raw;
    if (key === 'color') return 'never';
    return !optionLongFlag(spec.flags).startsWith('--no-');
  }

  async function expectAgreement(words: string[], name: CommandName) {
    const p = plan(...words);
    const c = await parsed(words);
    const line = words.join(' ');
    if ('refused' in c) throw new Error(`${line}: refused by the program (${c.refused})`);
    expect(p.command, line).toBe(c.command);
    expect(p.positionals, line).toEqual(c.positionals);
    expect(p.options, line).toBeDefined();
    const specs = new Map(commandOptionEntries(name));
    expect([...p.options!.keys()].sort(), line).toEqual([...c.given.keys()].sort());
    for (const [key, raw] of p.options!)
      expect(c.given.get(key), `${line}: ${key}`).toEqual(expected(key, specs.get(key)!, raw));
  }

  it('reads every option of every command, in every spelling, as the program does', async () => {
    let lines = 0;
    for (const name of COMMAND_NAMES) {
      const { positionals, required } = baseLine(name);
      for (const [key, spec] of commandOptionEntries(name)) {
        const isGlobal = key in GLOBAL_OPTIONS;
        for (const words of [...spellings(spec), ...(key === 'color' ? [['--no-color']] : [])]) {
          await expectAgreement([name, ...positionals, ...required, ...words], name);
          await expectAgreement([name, ...words, ...positionals, ...required], name);
          if (isGlobal) await expectAgreement([...words, name, ...positionals, ...required], name);
          lines += isGlobal ? 3 : 2;
        }
      }
      await expectAgreement([name, ...required, '--', ...positionals], name);
    }
    expect(lines).toBeGreaterThan(200);
  });

  it("reads no line the program refuses: another command's option, a value given to a flag", async () => {
    for (const name of COMMAND_NAMES) {
      const { positionals, required } = baseLine(name);
      const own = new Set(commandOptionEntries(name).map(([, spec]) => optionLongFlag(spec.flags)));
      const foreign = COMMAND_NAMES.flatMap((other) => commandOptionEntries(other))
        .map(([, spec]) => spec)
        .filter((spec) => !own.has(optionLongFlag(spec.flags)));
      const flags = commandOptionEntries(name)
        .map(([, spec]) => spec)
        .filter((spec) => optionValueName(spec.flags) === undefined);
      const refused = [
        ...foreign.map((spec) => spellings(spec)[0]),
        ...flags.map((spec) => [`${optionLongFlag(spec.flags)}=x`]),
      ];
      for (const words of refused) {
        const line = [name, ...positionals, ...required, ...words];
        expect(plan(...line).options, line.join(' ')).toBeUndefined();
        // retire's `--version <n>` is, on any other command, the program's version flag.
        const code = words[0] === '--version' ? 'commander.version' : 'commander.unknownOption';
        expect(await parsed(line), line.join(' ')).toEqual({ refused: code });
      }
    }
  });
});
