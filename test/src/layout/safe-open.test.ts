import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRegularForRead, readRegularFile } from '../../../src/layout/safe-open.js';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { readState } from '../../../src/state/read-state.js';
import { readIntents } from '../../../src/sidefiles/intents.js';
import { expectTokcapError, paths, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();

describe('safe-open: capture files must be regular files inside DIR', () => {
  it('reads a regular file, and a missing one as undefined', async () => {
    const dir = tmp();
    const p = path.join(dir, 'r.tokens.intents');
    expect(await readRegularFile(p, 'r')).toBeUndefined();
    expect(await openRegularForRead(p, 'r')).toBeUndefined();
    fs.writeFileSync(p, 'c1\n');
    expect((await readRegularFile(p, 'r'))!.toString()).toBe('c1\n');
  });

  it('refuses a symlink named like a capture file that points outside DIR (kind io), without reading the target', async () => {
    const outside = tmp();
    const secret = path.join(outside, 'secret.json');
    fs.writeFileSync(secret, '{"version": 99}');
    const dir = tmp();
    const p = paths(dir).state;
    fs.symlinkSync(secret, p);
    const err = await expectTokcapError(readRegularFile(p, 'r'), 'io');
    expect(err.message).toContain('symbolic link');
    expect(err.file).toBe(p);
    expect(err.rolloutId).toBe('r');
    await expectTokcapError(readState(p, 'r'), 'io');
  });

  it('refuses a symlink even when it points to a regular file inside DIR', async () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'real'), 'c1\n');
    fs.symlinkSync('real', paths(dir).intents);
    await expectTokcapError(readIntents(paths(dir).intents, 'r'), 'io');
  });

  it('refuses a dangling symlink rather than treating it as missing', async () => {
    const dir = tmp();
    fs.symlinkSync(path.join(dir, 'nowhere'), paths(dir).intents);
    await expectTokcapError(readRegularFile(paths(dir).intents, 'r'), 'io');
  });

  it('refuses a FIFO without blocking on it', async () => {
    const dir = tmp();
    const p = paths(dir).jsonl;
    execFileSync('mkfifo', [p]);
    const err = await expectTokcapError(readRegularFile(p, 'r'), 'io');
    expect(err.message).toContain('FIFO');
    await expectTokcapError(openRegularForRead(p, 'r'), 'io');
  });

  it('refuses a directory', async () => {
    const dir = tmp();
    const p = paths(dir).incomplete;
    fs.mkdirSync(p);
    const err = await expectTokcapError(readRegularFile(p, 'r'), 'io');
    expect(err.message).toContain('directory');
  });

  it('makes freeze refuse a symlinked JSONL and leave its target alone', async () => {
    const outside = tmp();
    const target = path.join(outside, 'victim.jsonl');
    fs.writeFileSync(target, 'not json at all\n{"torn');
    const dir = tmp();
    fs.symlinkSync(target, paths(dir).jsonl);
    await expectTokcapError(freezeRollout({ dir }, 'r'), 'io');
    expect(fs.readFileSync(target, 'utf8')).toBe('not json at all\n{"torn');
    expect(fs.existsSync(paths(dir).state)).toBe(false);
  });
});
