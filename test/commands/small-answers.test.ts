/**
 * Small answers: `tokcap verify` suggests verify-digests; the hint for a bad
 * --lock-wait speaks of lock waits (not of ages in days); a symlinked lock file is named in the
 * error line, not only the rollout; --color=always|never|auto and FORCE_COLOR colour a pipe (for
 * `less -R`), NO_COLOR still honoured.
 */
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendEntry } from '../../src/ops/writer.js';
import { entry, useTempDirs } from '../support/store.js';
import { cli, fakeIo } from '../support/cli.js';

const temp = useTempDirs('tokcap-small-');

describe('smaller answers', () => {
  it('`tokcap verify` suggests verify-digests (exit 2)', async () => {
    const { code, stderr } = await cli(['verify', '/tmp']);
    expect(code).toBe(2);
    expect(stderr).toBe("tokcap: unknown command 'verify' (Did you mean verify-digests?); see 'tokcap --help'\n");
    // Commander's own edit-distance suggestion still applies.
    expect((await cli(['inspekt', '/tmp'])).stderr).toContain('(Did you mean inspect?)');
  });

  it('a bad --lock-wait is explained as a lock wait', async () => {
    const { code, stderr } = await cli(['inspect', '/tmp', '--lock-wait', '7']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      "tokcap: --lock-wait: invalid duration '7': a lock wait needs a unit, e.g. 10s, 90s or 2m (how long to wait for a busy rollout's lock); see 'tokcap inspect --help'\n",
    );
    // --older-than keeps its own hint.
    expect((await cli(['sweep', '/tmp', '--older-than', '7'])).stderr).toContain('e.g. 7d or 36h');
  });

  it('a symlinked lock file is named in the error', async () => {
    const dir = temp();
    await appendEntry({ dir }, entry('c1', { rollout: 'r' }));
    rmSync(join(dir, 'r.tokens.lock'));
    writeFileSync(join(dir, 'elsewhere'), '');
    symlinkSync(join(dir, 'elsewhere'), join(dir, 'r.tokens.lock'));
    const { code, stderr } = await cli(['freeze', dir, 'r']);
    expect(code).toBe(3);
    expect(stderr).toBe(
      'tokcap: r: r.tokens.lock is a symbolic link: refusing to lock through it (lock files must be regular files)\n',
    );
  });

  it('--color and FORCE_COLOR into a pipe; --no-color and NO_COLOR still switch it off', async () => {
    const dir = temp();
    await appendEntry({ dir }, entry('c1', { rollout: 'r' }));
    // eslint-disable-next-line no-control-regex
    const sgr = /\x1b\[[0-9;]*m/;
    const run = async (args: string[], env: NodeJS.ProcessEnv = {}) =>
      (await cli(['inspect', dir, ...args], fakeIo({ env }))).stdout;
    expect(await run([])).not.toMatch(sgr);
    expect(await run(['--color=always'])).toMatch(sgr);
    expect(await run(['--color', 'always'], { NO_COLOR: '1' })).toMatch(sgr);
    expect(await run([], { FORCE_COLOR: '1' })).toMatch(sgr);
    expect(await run([], { FORCE_COLOR: '1', NO_COLOR: '1' })).not.toMatch(sgr);
    expect(await run(['--no-color'], { FORCE_COLOR: '1' })).not.toMatch(sgr);
    expect(await run(['--color=never'], { FORCE_COLOR: '1' })).not.toMatch(sgr);
    expect(await run(['--color=auto'], { FORCE_COLOR: '0' })).not.toMatch(sgr);
    expect((await cli(['inspect', dir, '--color=sometimes'])).code).toBe(2);
  });
});
