/**
 * Shell completion: the one completer (`tokcap __complete`, commands/completion/complete.ts) in-process,
 * then each shell's script for real, calling the built binary through a `tokcap` on PATH.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  COMMAND_NAMES,
  COMMANDS,
  GLOBAL_OPTIONS,
  SHELLS,
  commandOptionEntries,
  optionLongFlag,
} from '../../commands/cli/options.js';
import { complete, formatCompletion, type Completion } from '../../commands/completion/complete.js';
import { completionScript } from '../../commands/completion/completion.js';
import { BIN, ensureBuilt } from '../support/cli.js';

const DIR = mkdtempSync(join(tmpdir(), 'tokcap-completion-'));
const CAP = join(DIR, 'cap');
mkdirSync(CAP);
for (const f of [
  'r1.tokens.jsonl',
  'r1.tokens.state.json',
  'r2.tokens.incomplete',
  '.hid.tokens.intents',
  'bad id.tokens.jsonl',
  'lockonly.tokens.lock',
  'notes.txt',
]) {
  writeFileSync(join(CAP, f), '');
}
writeFileSync(join(DIR, 'train.jsonl'), '');

// The value lists come from the option table: another vocabulary there changes them here too.
const STATUS_VALUES = COMMANDS.inspect.options.status.choices ?? [];
const SORT_VALUES = COMMANDS.inspect.options.sort.choices ?? [];
const FORMAT_VALUES = COMMANDS.export.options.format.choices ?? [];

function values(c: Completion): string[] {
  return c.candidates.map((x) => x.value);
}

function ask(words: string[], env: NodeJS.ProcessEnv = {}): Completion {
  return complete(words, { env });
}

describe('tokcap __complete', () => {
  it('completes command names (with their summaries) and program options', () => {
    const top = ask(['']);
    expect(values(top)).toEqual([...COMMAND_NAMES, 'help']);
    expect(top.candidates[0].description).toBe(COMMANDS[COMMAND_NAMES[0]].summary);
    expect(values(ask(['verify']))).toEqual(['verify-digests']);
    expect(values(ask(['--lock-wait', '5s', 'sw']))).toEqual(['sweep']);
    expect(values(ask(['--js']))).toEqual(['--json']);
    expect(values(ask(['help', 'ex']))).toEqual(['export']);
  });

  it("completes every command's options and the global ones, from the option table", () => {
    for (const name of COMMAND_NAMES) {
      const offered = values(ask([name, '-']));
      for (const [, spec] of commandOptionEntries(name)) {
        expect(offered, `${name}`).toContain(optionLongFlag(spec.flags));
      }
      expect(offered).toContain('--help');
    }
    for (const spec of Object.values(GLOBAL_OPTIONS))
      expect(values(ask(['inspect', '--']))).toContain(optionLongFlag(spec.flags));
    // retire owns --version <n>: there -V is the only version flag.
    expect(values(ask(['retire', '-']))).toContain('-V');
    expect(values(ask(['inspect', '--sta']))).toEqual(['--status']);
  });

  it('completes option values: lists from the table, files, nothing for free text', () => {
    expect(values(ask(['inspect', '--status', '']))).toEqual([...STATUS_VALUES]);
    expect(values(ask(['inspect', 'cap', '--sort', '']))).toEqual([...SORT_VALUES]);
    expect(values(ask(['export', 'cap', '--format', '']))).toEqual([...FORMAT_VALUES]);
    expect(values(ask(['inspect', '--status', STATUS_VALUES[0].slice(0, 2)]))).toEqual(
      STATUS_VALUES.filter((v) => v.startsWith(STATUS_VALUES[0].slice(0, 2))),
    );
    // bash splits `--status=x` into `--status`, `=`, `x`; zsh and fish pass it whole.
    expect(values(ask(['inspect', '--status', '=']))).toEqual([...STATUS_VALUES]);
    expect(values(ask(['inspect', '--status', '=', STATUS_VALUES[1]]))).toEqual([STATUS_VALUES[1]]);
    expect(values(ask(['inspect', `--status=${STATUS_VALUES[1]}`]))).toEqual([`--status=${STATUS_VALUES[1]}`]);
    expect(ask(['export', 'cap', '--out', ''])).toEqual({ candidates: [], directive: 'files' });
    expect(ask(['inspect', '--ids-from', ''])).toEqual({ candidates: [], directive: 'files' });
    expect(ask(['build', '--model', ''])).toEqual({ candidates: [], directive: 'none' });
    expect(ask(['--lock-wait', ''])).toEqual({ candidates: [], directive: 'none' });
    expect(values(ask(['completion', '']))).toEqual([...SHELLS]);
  });

  it('completes DIR as a directory and the ids of DIR after it', () => {
    expect(ask(['inspect', 'ca'])).toEqual({ candidates: [], directive: 'dirs' });
    expect(ask(['fixture', ''])).toEqual({ candidates: [], directive: 'dirs' });
    // Rollout ids with at least one of J, S, I, M; not invalid names, lock-only ids, foreign files.
    expect(ask(['inspect', CAP, ''])).toEqual({
      candidates: [{ value: '.hid' }, { value: 'r1' }, { value: 'r2' }],
      directive: 'none',
    });
    expect(values(ask(['inspect', CAP, 'r']))).toEqual(['r1', 'r2']);
    // Ids already given are not offered again; options and their values do not count as ids.
    expect(values(ask(['retire', CAP, 'r1', 'r']))).toEqual(['r2']);
    expect(values(ask(['inspect', '--status', 'live', CAP, '--sort', 'id', '']))).toEqual(['.hid', 'r1', 'r2']);
    expect(values(ask(['delete', CAP, '--', '']))).toEqual(['.hid', 'r1', 'r2']);
    expect(ask(['sweep', CAP, ''])).toEqual({ candidates: [], directive: 'none' });
    expect(ask(['inspect', join(DIR, 'missing'), ''])).toEqual({ candidates: [], directive: 'none' });
  });

  it('with $TOKCAP_DIR, offers its ids where DIR could go, and takes ids from it', () => {
    const env = { TOKCAP_DIR: CAP };
    expect(ask(['freeze', 'r'], env)).toEqual({ candidates: [{ value: 'r1' }, { value: 'r2' }], directive: 'dirs' });
    expect(values(ask(['freeze', 'r1', ''], env))).toEqual(['.hid', 'r2']);
    expect(values(ask(['inspect', CAP, ''], env))).toEqual(['.hid', 'r1', 'r2']);
    // sweep takes no ids: only directories.
    expect(ask(['sweep', ''], env)).toEqual({ candidates: [], directive: 'dirs' });
  });

  it('prints one candidate a line, a tab before its description, then the directive', () => {
    expect(
      formatCompletion({ candidates: [{ value: 'a', description: 'first\tone' }, { value: 'b' }], directive: 'files' }),
    ).toBe('a\tfirst one\nb\n:files\n');
    expect(formatCompletion({ candidates: [], directive: 'none' })).toBe(':none\n');
  });

  it('answers nothing for what it does not know', () => {
    expect(ask(['frobnicate', ''])).toEqual({ candidates: [], directive: 'none' });
    expect(ask(['completion', 'bash', ''])).toEqual({ candidates: [], directive: 'none' });
  });
});

/** A minimal environment: PATH finds `tokcap` (a link to the built binary) and the shells. */
const BIN_DIR = join(DIR, 'bin');
mkdirSync(BIN_DIR);
symlinkSync(BIN, join(BIN_DIR, 'tokcap'));
const HOME = mkdtempSync(join(tmpdir(), 'tokcap-completion-home-'));
const SHELL_ENV = { PATH: `${BIN_DIR}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME };

function hasShell(shell: string): boolean {
  return spawnSync(shell, ['-c', 'true'], { stdio: 'ignore', env: SHELL_ENV }).status === 0;
}

function scriptFile(shell: (typeof SHELLS)[number]): string {
  const file = join(DIR, `tokcap.${shell}`);
  writeFileSync(file, completionScript(shell));
  return file;
}

/** Runs a shell program in DIR; stdin from /dev/null (bash reads ~/.bashrc when stdin is a socket). */
function inShell(shell: string, args: string[], env: Record<string, string> = {}): string[] {
  const out = execFileSync(shell, args, {
    encoding: 'utf8',
    cwd: DIR,
    env: { ...SHELL_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out.split('\n').filter((l) => l !== '');
}

beforeAll(async () => {
  await ensureBuilt();
});

describe.each(SHELLS)('the %s script', (shell) => {
  it('is a few lines that leave the work to tokcap __complete', () => {
    const script = completionScript(shell);
    expect(script.split('\n').length).toBeLessThanOrEqual(40);
    expect(script).toContain('__complete');
  });

  // CI fails on skipped tests (scripts/check-no-skips.mjs), so a shell's checks are registered
  // only where it is installed: always bash; zsh and fish where present (.ci/run installs them).
  const whereInstalled = shell === 'bash' || hasShell(shell) ? it : undefined;
  whereInstalled?.(`is valid ${shell} syntax (${shell} -n)`, () => {
    const res = spawnSync(shell, ['-n', scriptFile(shell)], {
      encoding: 'utf8',
      env: SHELL_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });
});

describe('bash, for real', () => {
  function bash(words: string[], env: Record<string, string> = {}): string[] {
    const quoted = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ');
    const program = `source '${scriptFile('bash')}'; COMP_WORDS=(${quoted}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _tokcap; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return inShell('bash', ['--norc', '-c', program], env).sort();
  }

  it('completes commands, options, values, files, directories and rollout ids', () => {
    expect(bash(['tokcap', ''])).toEqual([...COMMAND_NAMES, 'help'].sort());
    expect(bash(['tokcap', 'inspect', '--sta'])).toEqual(['--status']);
    expect(bash(['tokcap', 'inspect', '--status', ''])).toEqual([...STATUS_VALUES].sort());
    // `--status=` and `--status=x`: bash makes `=` a word of its own.
    expect(bash(['tokcap', 'inspect', '--status', '=', ''])).toEqual([...STATUS_VALUES].sort());
    expect(bash(['tokcap', 'export', 'cap', '--format', '=', FORMAT_VALUES[1]])).toEqual([FORMAT_VALUES[1]]);
    expect(bash(['tokcap', 'export', 'cap', '--out', 'tr'])).toEqual(['train.jsonl']);
    expect(bash(['tokcap', 'inspect', 'ca'])).toEqual(['cap']);
    expect(bash(['tokcap', 'inspect', 'cap', ''])).toEqual(['.hid', 'r1', 'r2']);
    expect(bash(['tokcap', 'inspect', '~/cap', 'r'], { HOME: DIR })).toEqual(['r1', 'r2']);
    expect(bash(['tokcap', 'sweep', 'cap', ''])).toEqual([]);
    expect(bash(['tokcap', 'freeze', ''], { TOKCAP_DIR: CAP })).toEqual(['.hid', 'bin', 'cap', 'r1', 'r2']);
  });
});

// Registered only where the shell is installed (.ci/run installs it; see above): a suite without
// a test would fail the file on a machine without it, where `npm test` must still pass.
const describeWhereInstalled = (shell: string) => (hasShell(shell) ? describe : () => undefined);

describeWhereInstalled('fish')('fish, for real', () => {
  it('completes through complete -C', () => {
    const file = scriptFile('fish');
    const fish = (line: string) =>
      inShell('fish', ['--no-config', '-c', `source '${file}'; complete -C '${line}'`]).sort();
    expect(fish('tokcap ver')).toEqual([`verify-digests\t${COMMANDS['verify-digests'].summary}`]);
    expect(fish('tokcap inspect --status ')).toEqual([...STATUS_VALUES].sort());
    expect(fish('tokcap inspect cap r')).toEqual(['r1', 'r2']);
    expect(fish('tokcap export cap --out tr')).toEqual(['train.jsonl']);
    expect(fish('tokcap completion ')).toEqual([...SHELLS].sort());
  });
});

describeWhereInstalled('zsh')('zsh', () => {
  // The completion system needs an interactive terminal; here the shim runs with stand-ins for
  // its builtins, which record what the shim hands them.
  it('hands the completer the words up to the cursor and shows its answer', () => {
    const stubs = [
      // Both get the name of an array last.
      '_describe() { print -r -- "describe ${(j:|:)${(P)${@[-1]}}}"; }',
      'compadd() { print -r -- "compadd ${(j:|:)${(P)${@[-1]}}}"; }',
      '_files() { print -r -- "files $*"; }',
    ].join('\n');
    const zsh = (words: string[]) => {
      const quoted = words.map((w) => `'${w}'`).join(' ');
      return inShell('zsh', [
        '-f',
        '-c',
        `${stubs}\nsource '${scriptFile('zsh')}' 2>/dev/null\nwords=(${quoted}); CURRENT=${words.length}; _tokcap`,
      ]);
    };
    expect(zsh(['tokcap', 'inspect', 'cap', 'r'])).toEqual(['compadd r1|r2']);
    expect(zsh(['tokcap', 'ver'])).toEqual([`describe verify-digests:${COMMANDS['verify-digests'].summary}`]);
    expect(zsh(['tokcap', 'export', 'cap', '--out', ''])).toEqual(['files ']);
    expect(zsh(['tokcap', 'inspect', ''])).toEqual(['files -/']);
  });
});
