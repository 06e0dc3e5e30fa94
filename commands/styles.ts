/**
 * One set of semantic styles for human output. Commands never pick colours themselves: they say
 * `styles.warn(text)` or `styles.badge('frozen')`.
 *
 * Colour is off (level 0: no escape codes at all) when NO_COLOR is set to a non-empty value,
 * when --no-color is given, or when stdout is not a TTY. chalk 5 itself ignores NO_COLOR, so the
 * level is decided here and passed to a private `new Chalk({ level })`; the global chalk
 * instance is never used. With colour off chalk is not even loaded (its colour detection costs
 * ~10 ms of start-up, paid by every cron job and pipe otherwise): it is required, synchronously
 * (Node >= 20.19 requires ES modules), only when a TTY may get colour.
 */
import { createRequire } from 'node:module';
import type * as ChalkModule from 'chalk';

function loadChalk(): typeof ChalkModule {
  return createRequire(import.meta.url)('chalk') as typeof ChalkModule;
}

export type ColorLevel = 0 | 1 | 2 | 3;

export const ROLLOUT_STATES = ['live', 'frozen', 'retired', 'incomplete', 'dangling', 'torn', 'masked'] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

export interface ColorInputs {
  /** false when --no-color was given. */
  color: boolean;
  env: NodeJS.ProcessEnv;
  stdoutIsTTY: boolean;
  /** Level the terminal supports when colour is on; default: chalk's detection, at least 1. */
  supportedLevel?: ColorLevel;
}

export function colorLevel({ color, env, stdoutIsTTY, supportedLevel }: ColorInputs): ColorLevel {
  if (!color) return 0;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  if (!stdoutIsTTY) return 0;
  if (supportedLevel !== undefined) return supportedLevel;
  const { supportsColor } = loadChalk();
  const detected = supportsColor === false ? 0 : supportsColor.level;
  return (detected > 0 ? detected : 1) as ColorLevel;
}

type Style = (text: string) => string;

export interface Styles {
  readonly level: ColorLevel;
  ok: Style;
  warn: Style;
  error: Style;
  dim: Style;
  heading: Style;
  /** A rollout id. */
  id: Style;
  /** A file or directory path. */
  path: Style;
  /** Emphasis of a whole line (a row that just changed). */
  bold: Style;
  /** A selected row. */
  inverse: Style;
  /** The state word of a rollout, coloured by state; the text itself is always the state name. */
  badge: (state: RolloutState) => string;
}

const plain: Style = (text) => text;

export function createStyles(level: ColorLevel): Styles {
  if (level === 0) {
    return { level, ok: plain, warn: plain, error: plain, dim: plain, heading: plain, id: plain, path: plain, bold: plain, inverse: plain, badge: (state) => state };
  }
  const c = new (loadChalk().Chalk)({ level });
  const badges: { [S in RolloutState]: Style } = {
    live: c.green,
    frozen: c.cyan,
    retired: c.gray,
    incomplete: c.yellow,
    dangling: c.yellow,
    torn: c.red,
    masked: c.magenta,
  };
  return {
    level,
    ok: c.green,
    warn: c.yellow,
    error: c.red,
    dim: c.dim,
    heading: c.bold,
    id: c.bold,
    path: c.underline,
    bold: c.bold,
    inverse: c.inverse,
    badge: (state) => badges[state](state),
  };
}
