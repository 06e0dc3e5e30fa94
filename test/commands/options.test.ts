import { Option } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  COMMAND_NAMES,
  COMMANDS,
  GLOBAL_OPTIONS,
  commandOptionEntries,
  optionLongFlag,
  optionShortFlag,
  type CommandName,
  type OptionSpec,
} from '../../commands/cli/options.js';
import { buildProgram } from '../../commands/cli/program.js';
import { allManPages, commandMarkdown, MAN_SECTIONS, programMarkdown } from '../../commands/cli/docs.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatDuration } from '../../commands/cli/duration.js';
import { DEFAULT_LOCK_WAIT_MS } from '../../src/ops/store.js';
import { cli, fakeIo, ROOT } from '../support/cli.js';

const ALL_SPECS: [CommandName | 'global', string, OptionSpec<unknown>][] = [
  ...(Object.entries(GLOBAL_OPTIONS) as [string, OptionSpec<unknown>][]).map(
    ([k, s]): [CommandName | 'global', string, OptionSpec<unknown>] => ['global', k, s],
  ),
  ...COMMAND_NAMES.flatMap((name) =>
    (Object.entries(COMMANDS[name].options) as [string, OptionSpec<unknown>][]).map(
      ([k, s]): [CommandName | 'global', string, OptionSpec<unknown>] => [name, k, s],
    ),
  ),
];

describe('the option table', () => {
  it('has one spec per command, keyed by its name', () => {
    expect(Object.keys(COMMANDS).sort()).toEqual([...COMMAND_NAMES].sort());
    for (const name of COMMAND_NAMES) expect(COMMANDS[name].name).toBe(name);
  });

  it.each(ALL_SPECS)('%s: %s is keyed by its commander attribute name and described', (_cmd, key, spec) => {
    expect(new Option(spec.flags).attributeName()).toBe(key);
    expect(spec.description.trim().length).toBeGreaterThan(10);
    expect(spec.description).not.toMatch(/\n/);
  });

  it('every command has a summary, a description and 2-6 examples that use it', () => {
    for (const name of COMMAND_NAMES) {
      const spec = COMMANDS[name];
      expect(spec.summary.length, name).toBeGreaterThan(10);
      expect(spec.summary, name).not.toMatch(/\.$/);
      expect(spec.description.length, name).toBeGreaterThan(40);
      expect(spec.examples.length, name).toBeGreaterThanOrEqual(2);
      expect(spec.examples.length, name).toBeLessThanOrEqual(6);
      for (const ex of spec.examples) {
        expect(ex.command, name).toContain(`tokcap ${name}`);
        expect(ex.description.length, name).toBeGreaterThan(5);
      }
      for (const a of spec.args) expect(a.description.length, `${name} ${a.name}`).toBeGreaterThan(5);
    }
  });

  it('no command flag clashes with another flag of the same command or a global one', () => {
    for (const name of COMMAND_NAMES) {
      const flags = commandOptionEntries(name).flatMap(([, s]) =>
        [optionLongFlag(s.flags), optionShortFlag(s.flags)].filter(Boolean),
      );
      expect(new Set(flags).size, name).toBe(flags.length);
      expect(flags, name).not.toContain('-h');
      expect(flags, name).not.toContain('--help');
      expect(flags, name).not.toContain('-V');
    }
  });

  it('defaults and choices are consistent', () => {
    for (const [cmd, key, spec] of ALL_SPECS) {
      if (spec.choices && spec.default !== undefined) expect(spec.choices, `${cmd} ${key}`).toContain(spec.default);
      if (spec.choices) expect(spec.parse, `${cmd} ${key}`).toBeUndefined();
      if (spec.required) expect(spec.default, `${cmd} ${key}`).toBeUndefined();
    }
  });

  it("derives the --lock-wait default from the library's one constant (help, man pages, README, docs)", () => {
    expect(GLOBAL_OPTIONS.lockWait.default).toBe(DEFAULT_LOCK_WAIT_MS / 1000);
    const label = formatDuration(DEFAULT_LOCK_WAIT_MS / 1000);
    expect(GLOBAL_OPTIONS.lockWait.defaultLabel).toBe(label);
    for (const [, page] of allManPages())
      expect(
        page
          .split('\n')
          .filter((l) => l.includes("a rollout's lock before failing"))
          .join('\n'),
      ).toContain(`Default: \`${label}\``);
    // The hand-written texts that state it.
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`\`--lock-wait DUR\` (default \`${label}\`)`);
    expect(readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8')).toContain(
      `how long to wait for a rollout's lock, default \`${label}\``,
    );
  });

  it('has the options the contract names', () => {
    const flagsOf = (name: CommandName) =>
      Object.values(COMMANDS[name].options).map((s) => (s as OptionSpec<unknown>).flags);
    expect(Object.values(GLOBAL_OPTIONS).map((s) => s.flags)).toEqual([
      '--json',
      '--color <when>',
      '-q, --quiet',
      '--lock-wait <duration>',
    ]);
    expect(GLOBAL_OPTIONS.lockWait.default).toBe(10);
    expect(flagsOf('inspect')).toEqual([
      '--deep',
      '--status <state>',
      '--sort <key>',
      '--limit <n>',
      '--call <call-id>',
      '--tokenizer <path>',
      '--ids-from <file>',
      '--shard <K/N|auto>',
      '--allow-empty',
    ]);
    for (const name of ['inspect', 'build'] as const) expect(flagsOf(name)).toContain('--tokenizer <path>');
    for (const name of ['inspect', 'verify-digests', 'build', 'export', 'freeze'] as const)
      expect(flagsOf(name)).toContain('--shard <K/N|auto>');
    for (const name of ['inspect', 'verify-digests', 'build', 'export', 'watch'] as const)
      expect(flagsOf(name)).toContain('--allow-empty');
    expect(flagsOf('sweep')).toEqual(['--older-than <duration>', '--dry-run']);
    expect(flagsOf('retire')).toEqual(['--snapshot-id <id>', '--version <n>', '--ids-from <file>']);
    expect(COMMANDS.sweep.options.olderThan.required).toBe(true);
    expect(COMMANDS.build.options.model.default).toBe('');
    expect(COMMANDS.export.options.format.choices).toEqual(['jsonl', 'tinker', 'store', 'parquet']);
  });
});

describe('the commander program', () => {
  const program = buildProgram({ io: fakeIo() });

  it('registers every command of the table, and only those besides `help`', () => {
    // `help NAME` is commander's command made strict: an unknown NAME is a usage error.
    expect(program.commands.map((c) => c.name())).toEqual(['help', ...COMMAND_NAMES]);
  });

  it('registers every option of the table on its command, plus the global ones', () => {
    for (const name of COMMAND_NAMES) {
      const sub = program.commands.find((c) => c.name() === name)!;
      // The -V/--version flag is commander's own version option, not a table entry.
      const registered = sub.options.map((o) => o.flags).filter((f) => !/^-V\b/.test(f));
      const expected = commandOptionEntries(name).map(([, s]) => s.flags);
      expect(registered, name).toEqual(expect.arrayContaining(expected));
      expect(registered.length, name).toBe(expected.length);
      for (const o of sub.options) expect(o.description, `${name} ${o.flags}`).not.toBe('');
    }
  });

  it.each(COMMAND_NAMES)('%s --help shows the examples, the options and the global options', async (name) => {
    const { code, stdout } = await cli([name, '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: tokcap ${name}`);
    for (const ex of COMMANDS[name].examples) {
      expect(stdout).toContain(`$ ${ex.command}`);
      expect(stdout).toContain(ex.description);
    }
    for (const [, spec] of commandOptionEntries(name)) expect(stdout).toContain(spec.flags);
    expect(stdout).toContain('Global options:');
    expect(stdout).toContain('-h, --help');
  });

  it('tokcap --help lists every command with its summary', async () => {
    const { stdout } = await cli(['--help']);
    for (const name of COMMAND_NAMES) {
      expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    }
    expect(stdout).toContain('Exit status:');
    expect(stdout).toContain('TOKCAP_DIR');
  });
});

describe('man page markdown', () => {
  it('has every section on every page', () => {
    for (const [page, md] of allManPages()) {
      expect(md, page).toMatch(new RegExp(`^# ${page}\\(1\\) -- `));
      for (const section of MAN_SECTIONS) expect(md, `${page} ${section}`).toContain(`\n## ${section}\n`);
      for (const env of ['TOKCAP_DIR', 'NO_COLOR', 'TOKCAP_DEBUG']) expect(md, page).toContain(`\`${env}\``);
    }
  });

  it('documents every option and example of the command', () => {
    for (const name of COMMAND_NAMES) {
      const md = commandMarkdown(name);
      for (const [, spec] of commandOptionEntries(name))
        expect(md, `${name} ${spec.flags}`).toContain(`\`${optionLongFlag(spec.flags)}\``);
      for (const ex of COMMANDS[name].examples) expect(md).toContain(`    ${ex.command}`);
    }
    const top = programMarkdown();
    for (const name of COMMAND_NAMES) expect(top).toContain(`tokcap-${name}(1)`);
  });
});
