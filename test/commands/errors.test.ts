import { describe, expect, it } from 'vitest';
import { errorFromFacts, ioError, toTokcapError, TokcapError, type ErrorKind } from '../../src/errors.js';
import { reviveError } from '../../src/jsonl/remote-jsonl.js';
import { serialiseError } from '../../src/threads/thread-requests.js';
import { invalidRolloutIdError } from '../../src/layout/rollout-id.js';
import {
  couldNotBeRead,
  debugEnabled,
  errorJson,
  exitCodeFor,
  exitCodeForKind,
  formatErrorLine,
  formatErrorReport,
} from '../../commands/cli/errors.js';

const KINDS: [ErrorKind, number][] = [
  ['usage', 2],
  ['invalid_rollout_id', 2],
  ['corrupt', 3],
  ['conflict', 3],
  ['frozen', 3],
  ['retired', 3],
  ['index_offset', 3],
  ['schema', 3],
  ['lock_timeout', 3],
  ['io', 3],
  ['other', 3],
];

describe('exit codes', () => {
  it.each(KINDS)('%s -> %d', (kind, code) => {
    expect(exitCodeForKind(kind)).toBe(code);
    expect(exitCodeFor(new TokcapError(kind, 'x'))).toBe(code);
  });

  it('maps anything that is not a TokcapError to 3', () => {
    expect(exitCodeFor(new TypeError('boom'))).toBe(3);
    expect(exitCodeFor('a string')).toBe(3);
    expect(exitCodeFor(undefined)).toBe(3);
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), {
      code: 'ENOENT',
      errno: -2,
      path: '/x',
    });
    expect(exitCodeFor(enoent)).toBe(3);
  });
});

describe('formatErrorLine', () => {
  it('names the rollout, else the file', () => {
    expect(
      formatErrorLine(new TokcapError('frozen', 'rollout is frozen', { rolloutId: 'r1', file: '/d/r1.tokens.jsonl' })),
    ).toBe('tokcap: r1: rollout is frozen');
    expect(
      formatErrorLine(new TokcapError('io', 'EACCES: permission denied', { file: '/d/r1.tokens.state.json' })),
    ).toBe('tokcap: /d/r1.tokens.state.json: EACCES: permission denied');
    expect(formatErrorLine(new TokcapError('usage', 'no capture directory'))).toBe('tokcap: no capture directory');
  });

  it('does not repeat an invalid id as the subject', () => {
    expect(formatErrorLine(invalidRolloutIdError('a/b'))).toBe("tokcap: Invalid rollout id: 'a/b'");
  });

  it('is always one line, control characters escaped', () => {
    const line = formatErrorLine(new TokcapError('corrupt', 'line 3:\n  bad json\r\n', { rolloutId: 'r\u00071' }));
    expect(line).not.toMatch(/[\r\n]/);
    expect(line).toBe('tokcap: r\\x071: line 3: bad json');
  });

  it('formats unexpected errors and raw fs errors', () => {
    expect(formatErrorLine(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(
      "tokcap: unexpected error: TypeError: Cannot read properties of undefined (reading 'x')",
    );
    const enoent = Object.assign(new Error('ENOENT: no such file or directory, scandir'), {
      code: 'ENOENT',
      errno: -2,
      syscall: 'scandir',
      path: '/nope',
    });
    expect(formatErrorLine(enoent)).toBe('tokcap: /nope: no such directory');
    const eio = Object.assign(new Error("EIO: i/o error, read '/x'"), {
      code: 'EIO',
      errno: -5,
      syscall: 'read',
      path: '/x',
    });
    expect(formatErrorLine(eio)).toBe('tokcap: /x: input/output error');
    expect(formatErrorLine(42)).toBe('tokcap: unexpected error: 42');
  });
});

/** A Node fs error as the fs module makes it (code, errno, syscall, path). */
function errno(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  const e = new Error(
    `${code}: something, ${syscall}${path === undefined ? '' : ` '${path}'`}`,
  ) as NodeJS.ErrnoException;
  return Object.assign(e, { code, errno: -1, syscall, ...(path === undefined ? {} : { path }) });
}

describe('a DIR that cannot be listed, in words', () => {
  it('says what is wrong with DIR, without the code, the syscall or the path twice', () => {
    expect(formatErrorLine(ioError(errno('ENOENT', 'opendir'), '/data/caps'))).toBe(
      'tokcap: /data/caps: no such directory',
    );
    expect(formatErrorLine(ioError(errno('ENOENT', 'opendir', '/data/caps'), '/data/caps'))).toBe(
      'tokcap: /data/caps: no such directory',
    );
    expect(formatErrorLine(ioError(errno('ENOTDIR', 'opendir'), '/data/caps'))).toBe(
      'tokcap: /data/caps: not a directory',
    );
    expect(formatErrorLine(ioError(errno('EACCES', 'opendir'), '/data/caps'))).toBe(
      'tokcap: /data/caps: permission denied',
    );
    expect(formatErrorLine(ioError(errno('EPERM', 'opendir'), '/data/caps'))).toBe(
      'tokcap: /data/caps: permission denied',
    );
  });

  it('names the file as well when the error is about a file of a rollout', () => {
    const e = ioError(errno('EACCES', 'open', '/d/r1.tokens.state.json'), '/d/r1.tokens.state.json', 'r1');
    expect(formatErrorLine(e)).toBe('tokcap: r1: /d/r1.tokens.state.json: permission denied');
    expect(formatErrorLine(ioError(errno('ENOENT', 'open', '/d/r1.tokens.lock'), '/d/r1.tokens.lock'))).toBe(
      'tokcap: /d/r1.tokens.lock: no such file or directory',
    );
  });

  it('says other codes in words too, and keeps the code in the JSON message (kind io)', () => {
    expect(formatErrorLine(ioError(errno('EIO', 'read'), '/d/x'))).toBe('tokcap: /d/x: input/output error');
    const e = ioError(errno('ENOENT', 'opendir'), '/data/caps');
    expect(errorJson(e)).toEqual({ rollout_id: null, error: { kind: 'io', message: 'ENOENT: something, opendir' } });
    expect(exitCodeFor(e)).toBe(3);
  });

  it('derives the words from the facts that crossed a thread (a verdict, a row, a reply), never from the text', () => {
    const message = "ENOENT: something, open '/d/r1.tokens.lock'";
    const facts = ioError(errno('ENOENT', 'open', '/d/r1.tokens.lock'), '/d/r1.tokens.lock', 'r1').facts();
    expect(facts).toEqual({
      kind: 'io',
      message,
      system: { code: 'ENOENT', syscall: 'open', path: '/d/r1.tokens.lock' },
    });
    const back = structuredClone(facts);
    expect(formatErrorLine(errorFromFacts(back, { rolloutId: 'r1' }))).toBe(
      'tokcap: r1: /d/r1.tokens.lock: no such file or directory',
    );
    expect(couldNotBeRead(back)).toBe('could not be read: /d/r1.tokens.lock: no such file or directory');
    expect(errorJson(errorFromFacts(back, { rolloutId: 'r1' }))).toEqual({
      rollout_id: 'r1',
      error: { kind: 'io', message },
    });
    // The text alone is shown as it is: nothing is parsed out of it.
    expect(couldNotBeRead({ kind: 'io', message })).toBe(`could not be read: ${message}`);
    expect(
      couldNotBeRead({ kind: 'lock_timeout', message: 'timed out after 1s waiting for the lock of rollout r1' }),
    ).toBe('could not be read: timed out after 1s waiting for the lock of rollout r1');
    // Only kind io is told as a system error.
    expect(couldNotBeRead({ kind: 'corrupt', message: 'EFOO: x, open', system: { code: 'EACCES' } })).toBe(
      'could not be read: EFOO: x, open',
    );
  });

  it("a reply from the main thread keeps the system error, a TokcapError's or a raw one", () => {
    const wrapped = reviveError(
      structuredClone(serialiseError(ioError(errno('EACCES', 'open', '/d/s'), '/d/s', 'r1'))),
    );
    expect(formatErrorLine(wrapped)).toBe('tokcap: r1: /d/s: permission denied');
    const raw = reviveError(structuredClone(serialiseError(errno('ENOTDIR', 'opendir', '/d'))));
    expect(formatErrorLine(raw)).toBe('tokcap: /d: not a directory');
    expect(toTokcapError(raw, { file: '/d' }).system).toEqual({ code: 'ENOTDIR', syscall: 'opendir', path: '/d' });
  });

  it('TOKCAP_DEBUG=1 still shows the raw error and its stack', () => {
    const lines = formatErrorReport(ioError(errno('ENOENT', 'opendir'), '/data/caps'), { TOKCAP_DEBUG: '1' });
    expect(lines[0]).toBe('tokcap: /data/caps: no such directory');
    expect(lines.slice(1).join('\n')).toContain('ENOENT: something, opendir');
    expect(lines.slice(1).join('\n')).toMatch(/\n\s+at /);
  });
});

describe('TOKCAP_DEBUG', () => {
  it('adds the stack (and causes) only when enabled', () => {
    const e = new TokcapError('io', 'disk on fire', { rolloutId: 'r1', cause: new Error('root cause') });
    expect(formatErrorReport(e, {})).toEqual(['tokcap: r1: disk on fire']);
    const lines = formatErrorReport(e, { TOKCAP_DEBUG: '1' });
    expect(lines[0]).toBe('tokcap: r1: disk on fire');
    expect(lines[1]).toMatch(/^TokcapError: disk on fire\n\s+at /);
    expect(lines[2]).toMatch(/^caused by: Error: root cause/);
  });

  it('is enabled by 1, not by empty or 0', () => {
    expect(debugEnabled({ TOKCAP_DEBUG: '1' })).toBe(true);
    expect(debugEnabled({ TOKCAP_DEBUG: '' })).toBe(false);
    expect(debugEnabled({ TOKCAP_DEBUG: '0' })).toBe(false);
    expect(debugEnabled({})).toBe(false);
  });
});

describe('errorJson', () => {
  it('has the inline error shape of the JSON contract', () => {
    expect(errorJson(new TokcapError('conflict', 'conflicting payload for c1', { rolloutId: 'r1' }))).toEqual({
      rollout_id: 'r1',
      error: { kind: 'conflict', message: 'conflicting payload for c1' },
    });
    expect(errorJson(invalidRolloutIdError('bad id'), 'bad id')).toEqual({
      rollout_id: 'bad id',
      error: { kind: 'invalid_rollout_id', message: "Invalid rollout id: 'bad id'" },
    });
  });

  it('prefers the explicit rollout id and maps foreign errors', () => {
    expect(errorJson(new TokcapError('io', 'x', { rolloutId: 'a' }), 'b').rollout_id).toBe('b');
    expect(errorJson(new RangeError('nope'), 'r')).toEqual({
      rollout_id: 'r',
      error: { kind: 'other', message: 'RangeError: nope' },
    });
    const eacces = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES', errno: -13 });
    expect(errorJson(eacces, 'r').error.kind).toBe('io');
    expect(errorJson(new Error('x')).rollout_id).toBeNull();
  });
});
