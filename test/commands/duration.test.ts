import { describe, expect, it } from 'vitest';
import { TokcapError } from '../../src/errors.js';
import { DURATION_HINT, formatDuration, parseDuration } from '../../commands/cli/duration.js';

function usageMessage(raw: string): string {
  try {
    parseDuration(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(TokcapError);
    expect((e as TokcapError).kind).toBe('usage');
    return (e as TokcapError).message;
  }
  throw new Error(`parseDuration(${JSON.stringify(raw)}) did not fail`);
}

describe('parseDuration', () => {
  it.each([
    ['0s', 0],
    ['90s', 90],
    ['15m', 900],
    ['36h', 129600],
    ['7d', 604800],
    ['2w', 1209600],
    ['1d12h', 129600],
    ['1w2d3h4m5s', 604800 + 2 * 86400 + 3 * 3600 + 4 * 60 + 5],
    ['1.5h', 5400],
    ['0.5s', 0.5],
    ['007d', 604800],
    ['0d0s', 0],
    ['1h30m', 5400],
  ])('%s = %d seconds', (raw, seconds) => {
    expect(parseDuration(raw)).toBe(seconds);
  });

  it('rejects a bare number with the unit hint', () => {
    expect(usageMessage('7')).toContain(DURATION_HINT);
    expect(usageMessage('0')).toContain(DURATION_HINT);
    expect(usageMessage('1.5')).toContain(DURATION_HINT);
    expect(DURATION_HINT).toBe('a duration needs a unit, e.g. 7d or 36h');
  });

  it('rejects a trailing number without unit', () => {
    expect(usageMessage('1d12')).toMatch(/'12' has no unit/);
  });

  it('rejects negatives and signs', () => {
    expect(usageMessage('-1d')).toMatch(/negative/);
    expect(usageMessage('-0s')).toMatch(/negative/);
    expect(() => parseDuration('+5s')).toThrow(TokcapError);
    expect(() => parseDuration('1d-2h')).toThrow(TokcapError);
  });

  it('rejects empty input and whitespace', () => {
    expect(usageMessage('')).toMatch(/empty/);
    for (const raw of [' ', ' 7d', '7d ', '7 d', '1d 12h', '7d\n', '\t7d']) {
      expect(usageMessage(raw)).toMatch(/spaces/);
    }
  });

  it('rejects uppercase and unknown units', () => {
    expect(usageMessage('7D')).toMatch(/lowercase/);
    expect(usageMessage('1H')).toMatch(/lowercase/);
    expect(usageMessage('7y')).toMatch(/unknown unit 'y'/);
    expect(usageMessage('10ms')).toMatch(/unknown unit 'ms'/);
    expect(usageMessage('5min')).toMatch(/unknown unit 'min'/);
    expect(usageMessage('3sec')).toMatch(/unknown unit 'sec'/);
  });

  it('rejects malformed numbers', () => {
    for (const raw of ['.5h', '1.h', '1e3s', '1,5h', '0x10s', 'h', 's', 'd7', '1..5h', '∞s', '٣d']) {
      expect(() => parseDuration(raw), raw).toThrow(TokcapError);
    }
  });

  it('rejects repeated and out-of-order units and trailing garbage', () => {
    expect(usageMessage('1h1h')).toMatch(/once, largest first/);
    expect(usageMessage('30m1h')).toMatch(/once, largest first/);
    expect(usageMessage('1s1d')).toMatch(/once, largest first/);
    for (const raw of ['7dd', '7d!', '7d;rm', '7d.', '7d7', 'x7d', '7d/2']) {
      expect(() => parseDuration(raw), raw).toThrow(TokcapError);
    }
  });

  it('rejects values too large to represent', () => {
    expect(usageMessage(`${'9'.repeat(400)}w`)).toMatch(/too large/);
  });

  it('quotes the raw value in its messages', () => {
    expect(usageMessage('7')).toBe("invalid duration '7': a duration needs a unit, e.g. 7d or 36h");
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [10, '10s'],
    [90, '1m30s'],
    [129600, '1d12h'],
    [604800, '1w'],
    [1.5, '1.5s'],
  ])('%d -> %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
    expect(parseDuration(text)).toBe(seconds);
  });
});
