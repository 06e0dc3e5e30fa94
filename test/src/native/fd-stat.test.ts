/**
 * `fdStat` (statx on the descriptor) gives the numbers Node's `fstatSync` gives: the file type,
 * the link count, the inode, the size and the mtime to the nanosecond, for a regular file, a
 * file with an odd mtime, an unlinked file, a directory and a FIFO; and Node's error for a
 * descriptor that is not open.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fdStat, fileType } from '../../../src/native/fd-stat.js';
import { loadLibc } from '../../../src/native/libc.js';
import { useTempDirs } from '../../support/temp-dirs.js';

const tempDir = useTempDirs('tokcap-fd-stat-');

function expectSameAsNode(fd: number): void {
  const node = fs.fstatSync(fd);
  expect(fdStat(fd)).toEqual({
    mode: node.mode,
    nlink: node.nlink,
    ino: node.ino,
    size: node.size,
    mtimeMs: node.mtimeMs,
  });
}

function withOpen(p: string, flags: number, check: (fd: number) => void): void {
  const fd = fs.openSync(p, flags);
  try {
    check(fd);
  } finally {
    fs.closeSync(fd);
  }
}

describe('fdStat', () => {
  it('gives what fstatSync gives for files, a directory and a FIFO', () => {
    // This suite runs on Linux with glibc: the statx way is the one compared with Node's.
    expect(loadLibc().statx, 'statx through koffi').toBeDefined();
    const dir = tempDir();
    const file = path.join(dir, 'r1.tokens.jsonl');
    fs.writeFileSync(file, 'x'.repeat(70_001));
    // Fractional seconds with nanoseconds, and a time before 1970.
    const odd = path.join(dir, 'r2.tokens.jsonl');
    fs.writeFileSync(odd, '');
    fs.utimesSync(odd, 1_234_567_890.123456, 1_234_567_890.987654);
    const old = path.join(dir, 'r3.tokens.jsonl');
    fs.writeFileSync(old, 'y');
    fs.utimesSync(old, -86_400.5, -86_400.25);
    execFileSync('python3', ['-c', 'import os, sys; os.utime(sys.argv[1], ns=(1, 1_700_000_000_123_456_789))', odd]);
    fs.linkSync(file, path.join(dir, 'second-link'));
    for (const p of [file, odd, old]) {
      withOpen(p, fs.constants.O_RDONLY, (fd) => {
        expectSameAsNode(fd);
        expect(fileType(fdStat(fd).mode)).toBe('file');
      });
    }
    withOpen(file, fs.constants.O_RDONLY, (fd) => expect(fdStat(fd).nlink).toBe(2));
    withOpen(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY, (fd) => {
      expectSameAsNode(fd);
      expect(fileType(fdStat(fd).mode)).toBe('directory');
    });
    const fifo = path.join(dir, 'r4.tokens.state.json');
    execFileSync('python3', ['-c', 'import os, sys; os.mkfifo(sys.argv[1])', fifo]);
    withOpen(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK, (fd) => {
      expectSameAsNode(fd);
      expect(fileType(fdStat(fd).mode)).toBe('fifo');
    });
  });

  it('sees a file unlinked while open (no link left)', () => {
    const dir = tempDir();
    const p = path.join(dir, 'r1.tokens.lock');
    fs.writeFileSync(p, '');
    withOpen(p, fs.constants.O_RDONLY, (fd) => {
      fs.unlinkSync(p);
      expectSameAsNode(fd);
      expect(fdStat(fd).nlink).toBe(0);
    });
  });

  it("throws Node's error for a descriptor that is not open", () => {
    const dir = tempDir();
    const fd = fs.openSync(path.join(dir, 'f'), 'w');
    fs.closeSync(fd);
    expect(() => fdStat(fd)).toThrow(expect.objectContaining({ code: 'EBADF' }));
  });
});
