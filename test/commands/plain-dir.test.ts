import { describe, expect, it } from 'vitest';
import { plainDir } from '../../commands/plain-dir.js';

const PLAIN = /^(?:-q|--json|--color=.*)$/;

describe('plainDir: DIR of a command line read without the option table', () => {
  it('is the one positional, whatever plain options surround it', () => {
    expect(plainDir(['runs/r42'], {}, PLAIN)).toBe('runs/r42');
    expect(plainDir(['-q', 'runs/r42', '--color=never'], {}, PLAIN)).toBe('runs/r42');
  });

  it('is $TOKCAP_DIR when there is no positional, unless it is empty', () => {
    expect(plainDir(['--json'], { TOKCAP_DIR: '/data/r42' }, PLAIN)).toBe('/data/r42');
    expect(plainDir([], { TOKCAP_DIR: '' }, PLAIN)).toBeUndefined();
    expect(plainDir([], {}, PLAIN)).toBeUndefined();
  });

  it('is unknown with two positionals (DIR and ids) or an option it does not know (it may take a value)', () => {
    expect(plainDir(['runs/r42', 'r-1'], {}, PLAIN)).toBeUndefined();
    expect(plainDir(['--lock-wait', '5s', 'runs/r42'], {}, PLAIN)).toBeUndefined();
    expect(plainDir(['runs/r42', '--strict'], {}, PLAIN)).toBeUndefined();
  });

  it('takes a lone "-" as a positional, not an option', () => {
    expect(plainDir(['-'], {}, PLAIN)).toBe('-');
  });
});
