import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../../commands/cli/options.js';
import { ROOT } from '../support/cli.js';

describe('man pages', () => {
  it("man/ and README.md's command and exit-code tables are up to date with the option table (npm run man)", async () => {
    const r = await execa('npx', ['tsx', 'scripts/gen-man.ts', '--check'], { cwd: ROOT, reject: false });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });

  it.each(['tokcap', ...COMMAND_NAMES.map((n) => `tokcap-${n}`)])('%s.1 is a roff page with every section', (page) => {
    const roff = readFileSync(join(ROOT, 'man', `${page}.1`), 'utf8');
    expect(roff.split('\n')[1]).toMatch(
      /^\.TH "TOKCAP(\\-[A-Z\\-]+)?" "1" "November 2026" "tokcap \d+\.\d+\.\d+" "tokcap manual"$/,
    );
    for (const section of [
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      'OPTIONS',
      'EXIT STATUS',
      'EXAMPLES',
      'ENVIRONMENT',
      'SEE ALSO',
    ]) {
      expect(roff).toMatch(new RegExp(`^\\.SH "?${section}"?$`, 'm'));
    }
  });
});
