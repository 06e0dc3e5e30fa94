/**
 * The C library is found per platform (src/native/libc.ts), and the lock's backend says what it
 * uses or why locking cannot work (src/lock/flock.ts). This machine is Linux with glibc.
 */
import { describe, expect, it } from 'vitest';
import { libcCandidates, libcStatus } from '../../../src/native/libc.js';
import { assertLocking, lockBackend } from '../../../src/lock/flock.js';

describe('the C library', () => {
  it("is glibc's, then musl's on Linux; libSystem on macOS; libc.so.7 on FreeBSD; none on Windows", () => {
    expect(libcCandidates('linux', 'x64')).toEqual(['libc.so.6', 'libc.musl-x86_64.so.1', 'ld-musl-x86_64.so.1']);
    expect(libcCandidates('linux', 'arm64')).toEqual(['libc.so.6', 'libc.musl-aarch64.so.1', 'ld-musl-aarch64.so.1']);
    expect(libcCandidates('darwin', 'arm64')).toEqual(['/usr/lib/libSystem.B.dylib']);
    expect(libcCandidates('freebsd', 'x64')).toEqual(['libc.so.7']);
    expect(libcCandidates('win32', 'x64')).toEqual([]);
  });

  it('is loaded from the first candidate that loads here, and flock(2) through it is the lock backend', () => {
    expect(process.platform).toBe('linux');
    expect(libcStatus()).toEqual({ file: 'libc.so.6' });
    expect(lockBackend()).toEqual({ backend: 'flock', libc: 'libc.so.6' });
    expect(() => assertLocking()).not.toThrow();
  });
});
