import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tryFlock, unlockFd } from '../../../src/lock/flock.js';
import { pyProbe } from '../../support/py-lock-probe.js';

const { O_RDWR, O_CREAT, O_APPEND } = fs.constants;

describe('flock binding', () => {
  let dir: string;
  let file: string;
  const fds: number[] = [];
  const open = (): number => {
    const fd = fs.openSync(file, O_RDWR | O_CREAT | O_APPEND, 0o666);
    fds.push(fd);
    return fd;
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-flock-'));
    file = path.join(dir, 'r.tokens.lock');
  });
  afterEach(() => {
    for (const fd of fds.splice(0)) {
      try {
        fs.closeSync(fd);
      } catch {
        /* already closed */
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('locks belong to the open file description: two descriptors in one process conflict', () => {
    const a = open();
    const b = open();
    expect(tryFlock(a, 'exclusive')).toBe(true);
    expect(tryFlock(b, 'exclusive')).toBe(false);
    expect(tryFlock(b, 'shared')).toBe(false);
    // re-locking the same description converts in place
    expect(tryFlock(a, 'shared')).toBe(true);
    expect(tryFlock(b, 'shared')).toBe(true);
    expect(tryFlock(b, 'exclusive')).toBe(false);
    unlockFd(a);
    expect(tryFlock(b, 'exclusive')).toBe(true);
    unlockFd(b);
  });

  it('works on an O_RDONLY descriptor', () => {
    open();
    const ro = fs.openSync(file, fs.constants.O_RDONLY);
    fds.push(ro);
    expect(tryFlock(ro, 'exclusive')).toBe(true);
    expect(tryFlock(open(), 'shared')).toBe(false);
    unlockFd(ro);
  });

  it('throws errno errors other than EWOULDBLOCK (EBADF), shaped like fs errors', () => {
    const fd = fs.openSync(file, O_RDWR | O_CREAT | O_APPEND, 0o666);
    fs.closeSync(fd);
    let err: NodeJS.ErrnoException | undefined;
    try {
      tryFlock(fd, 'exclusive');
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    }
    expect(err?.code).toBe('EBADF');
    expect(err?.syscall).toBe('flock');
    expect(err?.message).toMatch(/^EBADF: /);
    expect(() => unlockFd(fd)).toThrow(/EBADF/);
  });

  it('is the same lock family as Python fcntl.flock', async () => {
    const fd = open();
    expect(tryFlock(fd, 'exclusive')).toBe(true);
    expect(await pyProbe(file, 'ex')).toBe('blocked');
    expect(await pyProbe(file, 'sh')).toBe('blocked');
    expect(tryFlock(fd, 'shared')).toBe(true);
    expect(await pyProbe(file, 'sh')).toBe('acquired');
    expect(await pyProbe(file, 'ex')).toBe('blocked');
    unlockFd(fd);
    expect(await pyProbe(file, 'ex')).toBe('acquired');
  });
});
