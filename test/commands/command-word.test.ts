/**
 * bin/tokcap.js and commands/cli/main.ts find the command where the program's parser does
 * (commands/cli/command-word.ts): checked against the parser itself, with recording command modules.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandIndex, commandWord, GLOBAL_OPTIONS_WITH_VALUE } from '../../commands/cli/command-word.js';
import { GLOBAL_OPTIONS } from '../../commands/cli/options.js';
import { cli, fakeIo, recordingLoaders } from '../support/cli.js';

const DIR = mkdtempSync(join(tmpdir(), 'tokcap-command-word-'));
const argv = (...words: string[]) => ['node', 'tokcap', ...words];

describe('commandWord', () => {
  it('is the first word that is not an option, the values of global options skipped', () => {
    expect(commandWord(argv('inspect', 'watch'))).toBe('inspect');
    expect(commandWord(argv('export', DIR, '--out', 'watch'))).toBe('export');
    expect(commandWord(argv('watch', DIR))).toBe('watch');
    expect(commandWord(argv('--lock-wait', '5s', 'watch', DIR))).toBe('watch');
    expect(commandWord(argv('--color', 'never', '-q', '--json', 'inspect', 'watch'))).toBe('inspect');
    expect(commandWord(argv('--color=never', 'watch'))).toBe('watch');
    expect(commandWord(argv('--', 'watch', DIR))).toBe('watch');
    expect(commandWord(argv('--json'))).toBeUndefined();
    expect(commandWord(argv())).toBeUndefined();
    expect(commandIndex(argv('-q', 'build', DIR))).toBe(3);
  });

  it('skips a value after exactly the global options that take one', () => {
    const withValue = Object.values(GLOBAL_OPTIONS)
      .filter((o) => /[<[]/.test(o.flags))
      .flatMap((o) => o.flags.split(/[ ,]+/).filter((w) => w.startsWith('-')));
    expect([...GLOBAL_OPTIONS_WITH_VALUE].sort()).toEqual(withValue.sort());
  });

  it('names the command that the program runs', async () => {
    const lines = [
      ['inspect', 'watch'],
      ['--lock-wait', '5s', 'inspect', 'watch'],
      ['--color', 'never', 'verify-digests', 'watch'],
      ['-q', '--json', 'build', DIR, 'watch'],
      ['--color=never', '--lock-wait=2s', 'inspect', DIR],
      ['export', DIR, '--out', join(DIR, 'watch')],
      ['--', 'inspect', DIR],
    ];
    for (const words of lines) {
      const rec = recordingLoaders();
      await cli(words, fakeIo(), rec.loaders);
      expect(rec.loaded, words.join(' ')).toEqual([commandWord(argv(...words))]);
    }
  });
});
