/**
 * Durations on the command line (docs/cli.md#durations): one or more `<number><unit>` parts, units
 * `w d h m s` in lowercase, e.g. `90s`, `15m`, `36h`, `7d`, `1d12h`, `1.5h`, `0s`.
 *
 * Strict on purpose, because a duration decides what `sweep` deletes:
 * - the unit is required (a bare `7` is never guessed as seconds or milliseconds);
 * - numbers are non-negative decimals written with digits on both sides of an optional dot
 *   (`1.5h` yes; `.5h`, `1.h`, `1e3s`, `+5s`, `-1d` no);
 * - each unit appears at most once, largest first (`1d12h` yes; `12h1d`, `1h1h` no);
 * - no spaces, no uppercase, no other units (`ms`, `y`, `min` are rejected with a hint).
 *
 * Returns seconds (possibly fractional). Every failure is a `usage` TokcapError (exit 2).
 */
import { TokcapError } from '../../src/errors.js';

export const DURATION_UNITS = { w: 604800, d: 86400, h: 3600, m: 60, s: 1 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;

const UNIT_ORDER: readonly DurationUnit[] = ['w', 'd', 'h', 'm', 's'];
const PART = /(\d+(?:\.\d+)?)([a-z]+)/y;
export const DURATION_HINT = 'a duration needs a unit, e.g. 7d or 36h';
const UNITS_TEXT = 'units are s, m, h, d, w';

function fail(raw: string, reason: string): never {
  throw new TokcapError('usage', `invalid duration '${raw}': ${reason}`);
}

/**
 * Parses a duration; returns seconds. Throws TokcapError('usage') with a hint on any error; `hint`
 * (default DURATION_HINT) is the example given with it, worded for the option (a lock wait is
 * seconds, an age days).
 */
export function parseDuration(raw: string, hint = DURATION_HINT): number {
  if (raw.length === 0) fail(raw, `empty; ${hint}`);
  if (/\s/.test(raw)) fail(raw, `no spaces allowed; ${hint}`);
  if (raw.startsWith('-')) fail(raw, 'negative durations are not allowed');
  if (/^\d+(\.\d+)?$/.test(raw)) fail(raw, hint);
  if (/[A-Z]/.test(raw)) fail(raw, `units are lowercase (${UNITS_TEXT})`);

  let seconds = 0;
  let pos = 0;
  let lastRank = -1;
  while (pos < raw.length) {
    PART.lastIndex = pos;
    const m = PART.exec(raw);
    if (!m) {
      const rest = raw.slice(pos);
      if (/^\d+(\.\d+)?$/.test(rest)) fail(raw, `'${rest}' has no unit; ${hint}`);
      fail(raw, `expected <number><unit> at '${rest}'; ${hint}`);
    }
    const [, num, unit] = m;
    if (!(unit in DURATION_UNITS)) fail(raw, `unknown unit '${unit}' (${UNITS_TEXT})`);
    const rank = UNIT_ORDER.indexOf(unit as DurationUnit);
    if (rank <= lastRank) {
      fail(raw, `each unit may appear once, largest first (w, d, h, m, s)`);
    }
    lastRank = rank;
    seconds += Number(num) * DURATION_UNITS[unit as DurationUnit];
    pos = PART.lastIndex;
  }
  if (!Number.isFinite(seconds)) fail(raw, 'too large');
  return seconds;
}

/** Formats seconds back into the canonical form (`1d12h`, `0s`); used for help defaults. */
export function formatDuration(seconds: number): string {
  if (!(seconds > 0)) return '0s';
  let rest = seconds;
  let out = '';
  for (const unit of UNIT_ORDER) {
    const size = DURATION_UNITS[unit];
    if (unit === 's') {
      if (rest > 0) out += `${+rest.toFixed(3)}s`;
    } else if (rest >= size) {
      const n = Math.floor(rest / size);
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out || '0s';
}
