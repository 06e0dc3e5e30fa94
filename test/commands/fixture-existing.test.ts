/**
 * `fixture` never writes to a rollout id that already has a capture file: into a copy of the demo
 * store with --prefix demo- it is a usage error (exit 2) before anything is written, and demo-0 is
 * left as it was. New ids in a live store are appended.
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pictureTree } from '../support/reliability.js';
import { useTempDirs } from '../support/store.js';
import { ROOT, cli } from '../support/cli.js';

const temp = useTempDirs('tokcap-fixture-existing-');

function demo(): string {
  const dir = join(temp(), 'store');
  cpSync(join(ROOT, 'fixtures', 'demo-store'), dir, { recursive: true });
  return dir;
}

describe('fixture into a store that has rollouts', () => {
  it('an id that already has a capture file: exit 2, nothing written', async () => {
    const dir = demo();
    const before = pictureTree(dir);
    const { code, stdout, stderr } = await cli([
      'fixture',
      dir,
      '--prefix',
      'demo-',
      '--rollouts',
      '3',
      '--calls',
      '2',
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `tokcap: ${dir}: already has rollouts demo-0, demo-1, demo-2; fixture never writes to an existing rollout (choose another --prefix or an empty DIR)\n`,
    );
    expect(pictureTree(dir)).toEqual(before);
  });

  it('--mix and --no-fast are refused the same way', async () => {
    const dir = demo();
    const before = pictureTree(dir);
    const { code } = await cli([
      'fixture',
      dir,
      '--prefix',
      'demo-',
      '--rollouts',
      '8',
      '--calls',
      '2',
      '--mix',
      '--no-fast',
      '--json',
    ]);
    expect(code).toBe(2);
    expect(pictureTree(dir)).toEqual(before);
  });

  it('new ids are appended to a live store; a lock file alone is not a rollout', async () => {
    const dir = demo();
    writeFileSync(join(dir, 'new-0.tokens.lock'), '');
    const { code } = await cli(['fixture', dir, '--prefix', 'new-', '--rollouts', '2', '--calls', '2']);
    expect(code).toBe(0);
    const inspect = JSON.parse((await cli(['inspect', dir, '--json'])).stdout);
    expect(Object.keys(inspect.rollouts)).toEqual(expect.arrayContaining(['demo-0', 'new-0', 'new-1']));
    expect(inspect.rollouts['new-1'].entries).toBe(2);
  });
});
