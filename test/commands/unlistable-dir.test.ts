/**
 * A DIR that does not exist or is not a directory: every command that works on a whole DIR says
 * so in the same words (commands/cli/errors.ts), on one line, exit 3, nothing on stdout, nothing
 * created. The JSON-level message keeps Node's code (kind `io`): see test/commands/errors.test.ts.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../support/store.js';
import { cli } from '../support/cli.js';

const temp = useTempDirs('tokcap-unlistable-');

const COMMANDS: [string, (dir: string, base: string) => string[]][] = [
  ['inspect', (dir) => ['inspect', dir]],
  ['inspect with ids --json', (dir) => ['inspect', dir, 'r1', '--json']],
  ['verify-digests', (dir) => ['verify-digests', dir]],
  ['verify-digests with ids --json', (dir) => ['verify-digests', dir, 'r1', '--json']],
  ['build', (dir) => ['build', dir]],
  ['build with ids', (dir) => ['build', dir, 'r1']],
  ['build --freeze --all', (dir) => ['build', dir, '--freeze', '--all']],
  ['watch --once --json', (dir) => ['watch', dir, '--once', '--json']],
  ['watch --once --allow-empty', (dir) => ['watch', dir, '--once', '--allow-empty']],
  ['inspect --allow-empty', (dir) => ['inspect', dir, '--allow-empty']],
  ['sweep', (dir) => ['sweep', dir, '--older-than', '0s']],
  ['export', (dir, base) => ['export', dir, '--out', join(base, 'out.jsonl')]],
  ['freeze --all', (dir) => ['freeze', dir, '--all']],
  ['retire', (dir) => ['retire', dir, 'r1']],
  ['delete --json', (dir) => ['delete', dir, 'r1', '--json']],
];

describe('a DIR that cannot be listed', () => {
  for (const [name, args] of COMMANDS) {
    it(`${name}: "tokcap: DIR: no such directory" / "not a directory", exit 3, nothing written`, async () => {
      const base = temp();
      const missing = join(base, 'nope');
      const a = await cli(args(missing, base));
      expect([a.code, a.stdout, a.stderr]).toEqual([3, '', `tokcap: ${missing}: no such directory\n`]);
      expect(existsSync(missing)).toBe(false);

      const file = join(base, 'a-file');
      writeFileSync(file, '');
      const b = await cli(args(file, base));
      expect([b.code, b.stdout, b.stderr]).toEqual([3, '', `tokcap: ${file}: not a directory\n`]);
      expect(existsSync(join(base, 'out.jsonl'))).toBe(false);
    });
  }
});
